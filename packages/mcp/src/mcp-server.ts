import type { Asker, CallInfo, Logger, Toolset, ToolsetOptions } from '@dogu/core'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type ConnectionIdentity, McpConnection } from './mcp-connection'
import { McpError } from './mcp-error'

/** The user id of every Streamable HTTP connection that brought no token (loopback only). */
export const ANONYMOUS = 'anonymous'

/** What the MCP server needs from its host: `ctx.tools`, `ctx.permissions` and two events, or their stand-ins. */
export interface McpServerOptions {
  /** Makes the toolset of one MCP session: `ctx.tools.toolset`. */
  toolset(options: ToolsetOptions): Toolset
  /** Subscribes to `tools/changed`; returns the unsubscriber. Without it, clients are not told of changes. */
  onChanged?(listener: () => void): () => void
  /** Subscribes to `tools/call-progress`; returns the unsubscriber. Without it, no progress is sent. */
  onProgress?(listener: (info: CallInfo, message: string) => void): () => void
  /** Registers a permission asker: `ctx.permissions.asker`. Without it, clients are never asked. */
  asker?(asker: Asker): () => void
  /** Name globs of the tools served. @default all */
  include?: string[]
  /** Name globs of tools not served. */
  exclude?: string[]
  /** Groups enabled in the served toolset. */
  groups?: string[]
  /** `search` serves the tools behind `tool_search`. @default 'eager' */
  mode?: 'eager' | 'search'
  /** Authority of a connection that brings no token of its own. @default 1 */
  authority?: number
  /**
   * User id of a connection that authenticated nobody else: stdio (whoever started the
   * process), or a transport connected without an identity. @default 'stdio'
   */
  user?: string
  /** How the server introduces itself to clients. @default { name: 'dogu', version: '0.1.0' } */
  info?: { name: string; version: string }
  logger?: Logger
}

/**
 * Dogu's tools as an MCP server. Every client connection is a Dogu session
 * (`mcp:<client>:<session>`) whose calls go through the toolset's pipeline: validation,
 * permissions (asked of the client as an elicitation, and of every other asker), scheduling.
 */
export class DoguMcpServer {
  private connections = new Set<McpConnection>()
  private disposers: (() => void)[] = []
  private askerDisposer: (() => void) | undefined
  private stopped = false
  readonly selection: Omit<ToolsetOptions, 'session'>
  readonly info: { name: string; version: string }
  /** The user of a connection connected without one (stdio). */
  readonly user: string

  constructor(private options: McpServerOptions) {
    if (!options || typeof options.toolset !== 'function') throw new McpError('INVALID_OPTIONS', 'createMcpServer() needs a toolset(options) function (ctx.tools.toolset)')
    const authority = options.authority ?? 1
    if (typeof authority !== 'number' || Number.isNaN(authority)) throw new McpError('INVALID_OPTIONS', `authority must be a number, got ${JSON.stringify(authority)}`)
    const user = options.user ?? 'stdio'
    if (typeof user !== 'string' || !user) throw new McpError('INVALID_OPTIONS', `user must be a non-empty string, got ${JSON.stringify(user)}`)
    if (user === ANONYMOUS) throw new McpError('INVALID_OPTIONS', `user cannot be "${ANONYMOUS}": that is the HTTP connections without a token`)
    this.user = user
    this.info = options.info ?? { name: 'dogu', version: '0.1.0' }
    this.selection = { include: options.include, exclude: options.exclude, groups: options.groups, mode: options.mode }
    if (options.onChanged) this.disposers.push(options.onChanged(() => { for (const connection of this.connections) connection.toolsChanged() }))
    if (options.onProgress) {
      this.disposers.push(options.onProgress((info, message) => {
        if (!info.session.id.startsWith('mcp:')) return
        for (const connection of this.connections) connection.progress(info, message)
      }))
    }
  }

  /** Open connections. */
  get size(): number {
    return this.connections.size
  }

  /**
   * Serves one client over `transport` (stdio, Streamable HTTP, in-memory). Its authority is
   * `identity.authority` (from the token that opened it) or the server's default; its user is
   * `identity.user` (who the transport authenticated) or the server's `user`. What the client
   * calls itself is only a label (`mcp:<client>:<session>`), never who it is.
   */
  async connect(transport: Transport, identity: Partial<ConnectionIdentity> = {}): Promise<McpConnection> {
    if (this.stopped) throw new McpError('CLOSED', 'this MCP server is closed')
    const connection = new McpConnection({
      info: this.info,
      selection: this.selection,
      toolset: (options) => this.options.toolset(options),
      opened: (opened) => this.opened(opened),
      closed: (closed) => this.closed(closed),
    }, transport, { authority: identity.authority ?? this.options.authority ?? 1, user: identity.user ?? this.user })
    await connection.start()
    return connection
  }

  /** Closes every connection and stops listening to the host. Idempotent. */
  async close(): Promise<void> {
    this.stopped = true
    for (const dispose of this.disposers.splice(0)) dispose()
    await Promise.all([...this.connections].map((connection) => connection.close()))
    this.askerDisposer?.()
    this.askerDisposer = undefined
  }

  private opened(connection: McpConnection) {
    if (this.stopped) {
      void connection.close()
      return
    }
    this.connections.add(connection)
    // The asker is there while a connection is: with none, it would only turn requests down.
    if (!this.askerDisposer && this.options.asker) this.askerDisposer = this.options.asker((request, { signal }) => this.ask(request, signal))
  }

  private closed(connection: McpConnection) {
    this.connections.delete(connection)
    if (!this.connections.size && this.askerDisposer) {
      this.askerDisposer()
      this.askerDisposer = undefined
    }
  }

  /**
   * A permission request goes to the client whose call made it, when that client can
   * answer; any other request is not this asker's to show, and it says so by failing, so
   * that a request nobody can answer is denied at once.
   */
  private ask(request: Parameters<Asker>[0], signal: AbortSignal) {
    for (const connection of this.connections) {
      if (!connection.owns(request)) continue
      if (!connection.elicits) throw new McpError('CANNOT_ASK', `the MCP client of session ${request.session.id} does not support elicitation`)
      return connection.ask(request, signal)
    }
    throw new McpError('CANNOT_ASK', `session ${request.session.id} is not an MCP session of this server`)
  }
}

/** Creates an MCP server over a Dogu toolset; connect transports to it. See `McpServerOptions`. */
export function createMcpServer(options: McpServerOptions): DoguMcpServer {
  return new DoguMcpServer(options)
}
