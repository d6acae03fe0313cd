import type { ToolSource } from '@dogu/core'
import type { McpClientConnection } from './mcp-client-connection'
import { McpError } from './mcp-error'
import type { McpPluginHost } from './plugin-host'

/** What `McpClientPlugin.ready` waits for, and how long. */
export interface McpReadyOptions {
  /** The servers to wait for, by their names in `servers`. @default every MCP server imported here */
  servers?: readonly string[]
  /** Milliseconds before the wait gives up with `NOT_CONNECTED`, naming the servers still missing. @default 60000 */
  timeout?: number
  /** Ends the wait early: it rejects with the signal's reason. */
  signal?: AbortSignal
}

const DEFAULT_TIMEOUT = 60_000

/**
 * Resolves once every MCP server `McpClientPlugin` imports here (or each one `servers` names)
 * is connected and its tools are defined, with the Dogu names of those tools, sorted. Call it
 * after `await ctx.plugin(McpClientPlugin, …)`. A server that drops meanwhile is waited for
 * until it is back.
 *
 * Never hangs: it rejects with `NOT_CONNECTED` when `timeout` passes (naming each server not
 * connected, its status and its last error), `CLOSED` when the plugin is disposed first,
 * `NEEDS_AUTHORIZATION` when a server refused its authorizations, the signal's reason when
 * `signal` aborts, and `INVALID_OPTIONS` at once when no such server is imported here.
 *
 * @example
 * await ctx.plugin(McpClientPlugin, { servers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } })
 * const tools = await McpClientPlugin.ready(ctx, { timeout: 30_000 }) // ['memory_add_observations', …]
 */
export async function ready(ctx: Pick<McpPluginHost, 'tools'>, options: McpReadyOptions = {}): Promise<string[]> {
  const { servers, timeout = DEFAULT_TIMEOUT, signal } = options
  if (typeof timeout !== 'number' || !(timeout > 0) || !Number.isFinite(timeout)) {
    throw new McpError('INVALID_OPTIONS', `ready(): timeout must be a positive number of milliseconds, got ${String(timeout)}`)
  }
  const connections = importedServers(ctx, servers)
  signal?.throwIfAborted()
  const wait = new AbortController()
  const timer = setTimeout(() => wait.abort(new McpError('NOT_CONNECTED', notConnected(connections, timeout))), timeout)
  const abort = () => wait.abort(signal!.reason)
  signal?.addEventListener('abort', abort, { once: true })
  try {
    await Promise.all(connections.map(async (connection) => {
      try {
        await connection.connected(wait.signal)
      } catch (error) {
        if (!McpError.is(error, 'CLOSED')) throw error
        throw new McpError('CLOSED', `MCP server "${connection.name}" was closed before it connected: its plugin was disposed`, { cause: error })
      }
    }))
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', abort)
    // Takes the other servers' waiters down once one of them failed.
    wait.abort()
  }
  return connections.flatMap((connection) => connection.tools).sort()
}

/** The imported servers to wait for: all of them, or those named, each one there. */
function importedServers(ctx: Pick<McpPluginHost, 'tools'>, names: readonly string[] | undefined): McpClientConnection[] {
  if (!ctx?.tools) throw new McpError('INVALID_OPTIONS', 'ready(): ctx.tools is not loaded: load Dogu (@dogu/cordis, or koishi-plugin-dogu) before McpClientPlugin')
  if (typeof ctx.tools.sources !== 'function') throw new McpError('INVALID_OPTIONS', 'ready(): this host\'s ctx.tools lists no sources (sources()); it is older than this @dogu/mcp')
  const imported = ctx.tools.sources().filter(isConnection)
  if (names === undefined) {
    if (!imported.length) throw new McpError('INVALID_OPTIONS', 'ready(): no MCP server is imported here: load McpClientPlugin with servers, and await ctx.plugin(…), before ready()')
    return imported
  }
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) throw new McpError('INVALID_OPTIONS', 'ready(): servers must be an array of server names')
  const missing = names.filter((name) => !imported.some((connection) => connection.name === name))
  if (missing.length) {
    const known = imported.length ? `imported: ${imported.map(({ name }) => name).join(', ')}` : 'none is imported yet: await ctx.plugin(McpClientPlugin, …) before ready()'
    throw new McpError('INVALID_OPTIONS', `ready(): no MCP server named ${missing.map((name) => `"${name}"`).join(', ')} is imported here (${known})`)
  }
  return imported.filter((connection) => names.includes(connection.name))
}

// By shape, not `instanceof`: an app may load @dogu/mcp twice (its lib and its sources).
function isConnection(source: ToolSource): source is McpClientConnection {
  return source.kind === 'mcp' && typeof (source as Partial<McpClientConnection>).connected === 'function'
}

/** `MCP server "ghost" did not connect within 2 s (reconnecting: spawn nope ENOENT)`; several are listed after a colon. */
function notConnected(connections: readonly McpClientConnection[], timeout: number): string {
  const within = timeout % 1000 === 0 ? `${timeout / 1000} s` : `${timeout} ms`
  const state = (connection: McpClientConnection) => {
    const why = connection.status === 'needs-authorization' ? 'a person has to authorize it: the console\'s MCP servers view, or dogu.mcp.auth in chat' : connection.lastError
    return `${connection.status}${why ? `: ${why}` : ''}`
  }
  const waiting = connections.filter((connection) => connection.status !== 'connected')
  if (waiting.length === 1) return `MCP server "${waiting[0].name}" did not connect within ${within} (${state(waiting[0])})`
  return `MCP servers did not connect within ${within}: ${waiting.map((connection) => `"${connection.name}" (${state(connection)})`).join(', ')}`
}
