#!/usr/bin/env node
// The `toolpact` binary. A committed launcher, so that package managers can link it before dist/ is built.
import { existsSync } from "node:fs";

const entry = new URL("../dist/bin.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("toolpact: the CLI is not built (dist/bin.js is missing): run `pnpm build` in the repository\n");
  process.exit(1);
}
await import(entry.href);
