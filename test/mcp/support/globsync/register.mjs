// Preloaded with `node --import` before the MCP conformance runner (0.2.0-alpha.12 imports `globSync` from
// `fs`, which Node 20 lacks): the runner's own `fs` imports are served by fs.mjs, node:fs plus the `glob`
// package's globSync. Nothing else is redirected.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
