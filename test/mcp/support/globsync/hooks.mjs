// Module resolve hook: `fs` / `node:fs` imported from the conformance runner's files resolve to fs.mjs.
const SHIM = new URL("./fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
    return { url: SHIM, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
