// Writes toolpact.config.schema.json from the zod schema the config loader parses with. Run after a build:
//   pnpm --filter @toolpact/server config-schema
// src/host/config-json-schema.test.ts fails while the committed file differs from what this writes.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { hostConfigJsonSchema } from "../dist/host/config-json-schema.js";

const target = fileURLToPath(new URL("../toolpact.config.schema.json", import.meta.url));
await writeFile(target, JSON.stringify(hostConfigJsonSchema(), null, 2) + "\n");
console.log(`wrote ${target}`);
