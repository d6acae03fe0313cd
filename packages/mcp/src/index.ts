// The package's contract: each name below is one users may rely on.

// Serving Dogu's tools to MCP clients.
export { DOGU_META, type DoguResultMeta, toCallToolResult, type ToCallToolResultOptions } from './call-tool-result'
export type { ConnectionIdentity, ConnectionOptions, McpConnection } from './mcp-connection'
export type { McpBackground } from './mcp-task-store'
export { CALL_EVENTS_LOGGER, DEFAULT_LOG_LEVEL } from './call-log'
export { createMcpServer, DoguMcpServer, type McpServerOptions } from './mcp-server'
export { type McpHttpEndpoint, type McpToken, serveHttp, type ServeHttpOptions } from './serve-http'
export { type CordisHttpServer, type McpHttpMount, mountHttp, type MountHttpOptions } from './mount-http'
export * as McpServerPlugin from './server-plugin'
export { contextMcpServer } from './server-plugin'
export { type DoguMcpConfig, runDoguMcp, runDoguMcpCommand } from './run-dogu-mcp'

// Importing MCP servers' tools.
export * as McpClientPlugin from './client-plugin'
export type { McpReadyOptions } from './client-ready'
export { fromCallToolResult } from './from-call-tool-result'
export { importedName } from './imported-name'
export {
  McpClientConnection,
  type McpClientConnectionOptions,
  type McpClientStatus,
  type McpServerConfig,
  type SkippedTool,
} from './mcp-client-connection'

// Both ways.
export { McpError } from './mcp-error'
export type { McpPluginHost } from './plugin-host'
export { annotationsOf, effectOf } from './tool-annotations'
