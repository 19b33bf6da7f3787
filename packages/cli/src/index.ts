export { main, USAGE } from "./main.js";
export { type CliIo, processIo } from "./io.js";
