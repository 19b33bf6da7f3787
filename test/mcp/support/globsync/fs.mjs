// node:fs with the globSync Node 22 added (from the `glob` package), for the conformance runner on Node 20.
import fs from "node:fs";

export * from "node:fs";
export default fs;
export { globSync } from "glob";
