// The wire format of errors lives in @toolpact/contract (the server and the MCP bridge decode it too).
export { toToolpactError, type ToolpactErrorWire } from "@toolpact/contract/wire";
