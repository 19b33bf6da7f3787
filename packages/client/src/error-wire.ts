// The wire format of errors lives in @toolpact/protocol (the server and the MCP bridge decode it too).
export { toToolpactError, type ToolpactErrorWire } from "@toolpact/protocol";
