/** RFC 3339 `date-time` (with its leap-second rule) and `duration` (its appendix A grammar). */

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS[month - 1]!;
}

/** The number written by `count` ASCII digits at `at` (the pattern has checked they are digits). */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let index = at; index < at + count; index++) value = value * 10 + text.charCodeAt(index) - 0x30;
  return value;
}

/** An RFC 3339 date-time; second 60 only where the time is 23:59 in UTC. */
export function isDateTime(text: string): boolean {
  if (!DATE_TIME.test(text)) return false;
  // Fixed places: YYYY-MM-DDTHH:MM:SS, then a fraction, then Z or ±HH:MM at the end.
  const [year, month, day, hour, minute, second] = [
    digits(text, 0, 4),
    digits(text, 5, 2),
    digits(text, 8, 2),
    digits(text, 11, 2),
    digits(text, 14, 2),
    digits(text, 17, 2),
  ];
  const utc = (text.charCodeAt(text.length - 1) | 0x20) === 0x7a;
  const sign = !utc && text[text.length - 6] === "-" ? -1 : 1;
  const offsetHour = utc ? 0 : digits(text, text.length - 5, 2);
  const offsetMinute = utc ? 0 : digits(text, text.length - 2, 2);
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
