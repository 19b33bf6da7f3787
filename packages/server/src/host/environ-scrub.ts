import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

/**
 * Blanks the values of `names` in this process's initial environment block, the memory that
 * `/proc/<pid>/environ` reads (deleting from `process.env` does not touch it). Linux only, best effort:
 * it finds the block through `/proc/self/stat` and writes through `/proc/self/mem`; false when it could not.
 * Call it only after the values were read and removed from `process.env`.
 */
export function scrubInitialEnvironment(names: readonly string[]): boolean {
  if (process.platform !== "linux") return false;
  let fd: number | undefined;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces) start at field 3; env_start and env_end are 50 and 51.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 1 << 24) return false;
    fd = openSync("/proc/self/mem", "r+");
    const block = Buffer.alloc(end - start);
    if (readSync(fd, block, 0, block.length, start) !== block.length) return false;
    for (let at = 0; at < block.length; ) {
      const stop = block.indexOf(0, at);
      const entryEnd = stop < 0 ? block.length : stop;
      const eq = block.indexOf(0x3d, at);
      if (eq > at && eq < entryEnd && names.includes(block.toString("latin1", at, eq))) {
        const blank = Buffer.alloc(entryEnd - eq - 1);
        if (blank.length > 0) writeSync(fd, blank, 0, blank.length, start + eq + 1);
      }
      at = entryEnd + 1;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
