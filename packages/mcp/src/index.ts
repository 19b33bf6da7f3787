// The public surface: the `/mcp` handler, the stdio bridge, and the names and `_meta` keys agents see.
// The MCP SDK's own types stay out of these declarations (some of them need the DOM lib).
export { createMcpHttpHandler, type McpHttpHandler, type McpHttpOptions } from "./http-handler.js";
export { serveStdio, readKeysFile, CALLER_KEY_ENV_VARS, type StdioBridge, type StdioBridgeOptions, type CallerKeySource } from "./stdio-bridge.js";
export { createRuntimeBackend, type ToolBackend, type WaitRound } from "./tool-backend.js";
export { createRemoteBackend, type RemoteBackendOptions, type CallerKeys } from "./remote-backend.js";
export { createToolDirectory, mcpToolName, mcpVersionedToolName, MCP_TOOL_NAME_PATTERN, type ToolDirectory } from "./tool-names.js";
export { TOOL_META_KEY } from "./tool-listing.js";
export { CODE_META_KEY, OPERATION_META_KEY, REQUEST_META_KEY } from "./tool-results.js";
export { approvalIdempotencyKey } from "./call-tool.js";
