/** RFC 3339 `date-time` (with its leap-second rule) and `duration` (its appendix A grammar). */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS[month - 1]!;
}

/** An RFC 3339 date-time; second 60 only where the time is 23:59 in UTC. */
export function isDateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const sign = match[7] === "-" ? -1 : 1;
  const offsetHour = Number(match[8] ?? 0);
  const offsetMinute = Number(match[9] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60 || offsetHour > 23 || offsetMinute > 59) return false;
  if (second < 60) return true;
  const utcMinutes = (((hour * 60 + minute - sign * (offsetHour * 60 + offsetMinute)) % 1440) + 1440) % 1440;
  return utcMinutes === 23 * 60 + 59;
}

const TIME = "T(?:\\d+H(?:\\d+M(?:\\d+S)?)?|\\d+M(?:\\d+S)?|\\d+S)";
const DATE = "(?:\\d+Y(?:\\d+M(?:\\d+D)?)?|\\d+M(?:\\d+D)?|\\d+D)";
/** duration = "P" (dur-date [dur-time] / dur-time / dur-week); each choice is decided by its next character. */
export const DURATION = new RegExp(`^P(?:${DATE}(?:${TIME})?|${TIME}|\\d+W)$`);
