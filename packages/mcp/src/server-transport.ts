import type { Logger } from '@dogu/core'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { GroupStdioTransport } from './group-stdio-transport'
import type { McpServerConfig } from './mcp-server-config'

/**
 * The transport to a configured server: its command spawned (stdio, leading a process group
 * of its own where there are groups), or its Streamable HTTP URL with the configured headers
 * (and OAuth, when the server has `auth`, with `fetch` watching its answers).
 */
export function serverTransport(name: string, server: McpServerConfig, options: { grace?: number; logger: Logger; authProvider?: OAuthClientProvider; fetch?: FetchLike }): Transport {
  if (server.command !== undefined) {
    const params = {
      command: server.command,
      args: server.args,
      // Only what the config names beside the SDK's safe defaults: the bot's secrets stay home.
      env: { ...getDefaultEnvironment(), ...server.env },
      cwd: server.cwd,
    }
    // Windows has no process groups to signal: the SDK's transport ends the child alone.
    if (process.platform === 'win32') return new StdioClientTransport({ ...params, stderr: 'ignore' })
    return new GroupStdioTransport({ ...params, name, grace: options.grace, logger: options.logger })
  }
  return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, authProvider: options.authProvider, ...options.fetch ? { fetch: options.fetch } : {} })
}
