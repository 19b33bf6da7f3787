export { createMcpHttpHandler, type McpHttpHandler, type McpHttpOptions } from "./http-handler.js";
export { serveStdio, readKeysFile, CALLER_KEY_ENV_VARS, type StdioBridge, type StdioBridgeOptions, type CallerKeySource } from "./stdio-bridge.js";
export { createToolServer, INSTRUCTIONS, type ToolServerOptions, type CallScope, type HandlerExtra } from "./tool-server.js";
export { createRuntimeBackend, type ToolBackend, type WaitRound } from "./tool-backend.js";
export { createRemoteBackend, type RemoteBackendOptions, type CallerKeys } from "./remote-backend.js";
export { createToolDirectory, MCP_TOOL_NAME_PATTERN, type ToolDirectory } from "./tool-names.js";
export { describeTool, TOOL_META_KEY } from "./tool-listing.js";
export { CODE_META_KEY, OPERATION_META_KEY, REQUEST_META_KEY } from "./tool-results.js";
export { approvalIdempotencyKey } from "./call-tool.js";
