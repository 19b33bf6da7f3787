/** Where a command writes, what it reads its settings from, and the directory relative paths resolve against. */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  readonly cwd: string;
  /** The environment the command reads (credentials, secrets, PATH for the builds it runs). */
  readonly env: NodeJS.ProcessEnv;
}

/** The process's own streams, working directory and environment. */
export const processIo: CliIo = {
  stdout: (line) => void process.stdout.write(line + "\n"),
  stderr: (line) => void process.stderr.write(line + "\n"),
  cwd: process.cwd(),
  env: process.env,
};
