// `ToolTransport` lives in @toolpact/protocol, next to the wire types it carries: the server's in-process
// transport implements it without depending on this package.
export type { ToolTransport } from "@toolpact/protocol";
