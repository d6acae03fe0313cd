import { LOG_LEVELS, type LogLevel } from '@dogu/core'
import { SERVER_NAME_RULE } from './imported-name'
import { McpError } from './mcp-error'

/** How to reach one MCP server: a command to spawn (stdio) or a Streamable HTTP URL. */
export type McpServerConfig = (
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string; url?: undefined }
  | { url: string; headers?: Record<string, string>; command?: undefined }
) & {
  /**
   * Take the server's annotations as traits (read-only → `read`, closed-world → `write`).
   * Untrusted servers' tools are all `exec`, so every call asks. @default false
   */
  trusted?: boolean
  /** Milliseconds without a result or progress before a call fails. @default 60_000 */
  requestTimeout?: number
  /** Dogu's timeout of each imported tool, progress or not. @default 180_000 */
  timeout?: number
  /**
   * The lowest level of the server's log messages to receive (`logging/setLevel`, sent when
   * the server declares `logging`). A message during a call is that call's `call.log`;
   * outside one, a line on the host's logger. @default 'info'
   */
  logLevel?: LogLevel
}

/** Refuses a config no connection could use, naming the entry: `servers.<name>.url is not a URL`. */
export function checkServerConfig(name: string, server: McpServerConfig, ownTransport: boolean): void {
  if (typeof name !== 'string' || !SERVER_NAME_RULE.test(name)) throw new McpError('INVALID_OPTIONS', `MCP server name ${JSON.stringify(name)} must match ${SERVER_NAME_RULE}`)
  if (!server || typeof server !== 'object') throw new McpError('INVALID_OPTIONS', `servers.${name} must be { command, args?, env?, cwd? } or { url, headers? }`)
  if (!ownTransport && (typeof server.command === 'string') === (typeof server.url === 'string')) throw new McpError('INVALID_OPTIONS', `servers.${name} needs exactly one of "command" (stdio) and "url" (Streamable HTTP)`)
  if (server.url !== undefined) {
    try {
      new URL(server.url)
    } catch {
      throw new McpError('INVALID_OPTIONS', `servers.${name}.url is not a URL: ${JSON.stringify(server.url)}`)
    }
  }
  if (server.logLevel !== undefined && !LOG_LEVELS.includes(server.logLevel)) throw new McpError('INVALID_OPTIONS', `servers.${name}.logLevel must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(server.logLevel)}`)
}
