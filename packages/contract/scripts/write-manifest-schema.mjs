// Writes manifest.schema.json from the zod manifest schema. Run after a build:
//   pnpm --filter @toolpact/contract manifest-schema
// src/manifest-json-schema.test.ts fails while the committed file differs from what this writes.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { manifestJsonSchema } from "../dist/manifest-json-schema.js";

const target = fileURLToPath(new URL("../manifest.schema.json", import.meta.url));
await writeFile(target, JSON.stringify(manifestJsonSchema(), null, 2) + "\n");
console.log(`wrote ${target}`);
