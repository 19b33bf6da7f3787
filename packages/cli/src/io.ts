/** Where a command writes, and the directory relative paths resolve against. */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  readonly cwd: string;
}

/** The process's own streams and working directory. */
export const processIo: CliIo = {
  stdout: (line) => void process.stdout.write(line + "\n"),
  stderr: (line) => void process.stderr.write(line + "\n"),
  cwd: process.cwd(),
};
