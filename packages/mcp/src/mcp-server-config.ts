import { LOG_LEVELS, type LogLevel } from '@dogu/core'
import { SERVER_NAME_RULE } from './imported-name'
import { McpError } from './mcp-error'

/** How to reach one MCP server: a command to spawn (stdio) or a Streamable HTTP URL. */
export type McpServerConfig = (
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string; url?: undefined }
  | {
    url: string
    headers?: Record<string, string>
    /**
     * OAuth 2.1 as the MCP specification has it: `'oauth'` discovers everything and
     * registers itself; an object names what the server's owner gave you. See docs/mcp.md.
     */
    auth?: 'oauth' | McpOAuthOptions
    command?: undefined
  }
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

/** What an imported server's OAuth may be told; everything else is discovered. */
export interface McpOAuthOptions {
  /** A client registered beforehand; without it, a Client ID Metadata Document (`clientMetadataUrl`) or dynamic registration. */
  clientId?: string
  /** The pre-registered client's secret (confidential clients). */
  clientSecret?: string
  /** Scopes to ask for; by default the server's `WWW-Authenticate` scope, or its `scopes_supported`. */
  scopes?: string[]
  /** Where the authorization server sends the person back. @default the console's `/dogu/mcp/oauth/callback` */
  redirectUrl?: string
  /** An HTTPS URL of this client's metadata document, used as its client id where the server supports that. */
  clientMetadataUrl?: string
  /** The name the authorization page shows. @default 'Dogu' */
  clientName?: string
}

/** `McpOAuthOptions` with the redirect settled: a URL, or how to find it once the console's server listens. */
export interface McpOAuthConfig extends Omit<McpOAuthOptions, 'redirectUrl'> {
  redirectUrl: string | (() => string | undefined)
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
  if (server.url !== undefined && server.auth !== undefined) checkAuth(name, server.auth)
  if (server.logLevel !== undefined && !LOG_LEVELS.includes(server.logLevel)) throw new McpError('INVALID_OPTIONS', `servers.${name}.logLevel must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(server.logLevel)}`)
}

function checkAuth(name: string, auth: 'oauth' | McpOAuthOptions): void {
  if (auth === 'oauth') return
  if (!auth || typeof auth !== 'object') throw new McpError('INVALID_OPTIONS', `servers.${name}.auth must be 'oauth' or { clientId?, clientSecret?, scopes?, redirectUrl?, clientMetadataUrl? }`)
  for (const key of ['redirectUrl', 'clientMetadataUrl'] as const) {
    const value = auth[key]
    if (value === undefined) continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw new McpError('INVALID_OPTIONS', `servers.${name}.auth.${key} is not a URL: ${JSON.stringify(value)}`)
    }
    if (key === 'clientMetadataUrl' && (url.protocol !== 'https:' || url.pathname === '/')) throw new McpError('INVALID_OPTIONS', `servers.${name}.auth.clientMetadataUrl must be an https URL with a path (it is the client id)`)
  }
  if (auth.clientSecret !== undefined && auth.clientId === undefined) throw new McpError('INVALID_OPTIONS', `servers.${name}.auth.clientSecret needs clientId`)
}
