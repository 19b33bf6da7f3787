/**
 * tsc, as a caller's project runs it, over a folder of generated clients and a caller written against
 * them: the repository's strict options (tsconfig.base.json), the workspace packages as published, through
 * their built declarations (`pnpm build`). From their sources instead, tsc would check most of the
 * workspace again: 770 files and 24 s of CPU rather than 106 files and 4 s.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./registry-servers.js";

/** Each error tsc reports for the `.ts` files under `project`, as "file(line,col): error TSnnnn: message". */
export function typecheck(project: string): string[] {
  const compilerOptions = { noEmit: true, composite: false, incremental: false };
  const extendsFile = path.relative(project, path.join(ROOT, "tsconfig.base.json"));
  writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ extends: extendsFile, compilerOptions, include: ["**/*.ts"] }));
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  const run = spawnSync(process.execPath, [tsc, "-p", project, "--pretty", "false"], { cwd: project, encoding: "utf8", timeout: 240_000 });
  if (run.error !== undefined) throw run.error;
  return run.stdout.split("\n").filter((line) => line.trim() !== "");
}
