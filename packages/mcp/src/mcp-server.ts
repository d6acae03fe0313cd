import type { Asker, AskerContext, CallInfo, Logger, LogLevel, Toolset, ToolsetOptions } from '@dogu/core'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type ConnectionIdentity, type ConnectionOptions, McpConnection } from './mcp-connection'
import { McpError } from './mcp-error'
import type { McpBackground } from './mcp-task-store'

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
  /**
   * Subscribes to `tools/call-log` (a tool's `call.log`); returns the unsubscriber. Without
   * it, only Dogu's call events reach a client's log.
   */
  onLog?(listener: (info: CallInfo, level: LogLevel, data: unknown) => void): () => void
  /** Registers a permission asker: `ctx.permissions.asker`. Without it, clients are never asked. */
  asker?(asker: Asker): () => void
  /**
   * Dogu's background service now (`ctx.background`), or `undefined` while none is loaded:
   * the one the tool registry hands timed-out calls to. With it, a connection opened while it
   * is loaded declares `capabilities.tasks`, lists tools with `background` as
   * `execution.taskSupport: 'optional'`, and a call in task mode becomes a background task
   * its user follows with `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`.
   */
  background?(): McpBackground | undefined
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
    if (options.onLog) {
      this.disposers.push(options.onLog((info, level, data) => {
        if (!info.session.id.startsWith('mcp:')) return
        for (const connection of this.connections) connection.log(info, level, data)
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
   * calls itself is only a label (`mcp:<client>:<session>`), never who it is. `options` are
   * the transport's (`sseCloseAfter` for Streamable HTTP).
   */
  async connect(transport: Transport, identity: Partial<ConnectionIdentity> = {}, options: ConnectionOptions = {}): Promise<McpConnection> {
    if (this.stopped) throw new McpError('CLOSED', 'this MCP server is closed')
    const connection = new McpConnection({
      info: this.info,
      selection: this.selection,
      toolset: (options) => this.options.toolset(options),
      opened: (opened) => this.opened(opened),
      closed: (closed) => this.closed(closed),
      logger: this.options.logger,
      background: () => this.options.background?.(),
    }, transport, { authority: identity.authority ?? this.options.authority ?? 1, user: identity.user ?? this.user }, options)
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
    if (!this.askerDisposer && this.options.asker) this.askerDisposer = this.options.asker((request, context) => this.ask(request, context))
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
  private ask(request: Parameters<Asker>[0], context: AskerContext) {
    for (const connection of this.connections) {
      if (!connection.owns(request)) continue
      if (!connection.elicits) throw new McpError('CANNOT_ASK', 'the MCP client cannot show questions: it declared no elicitation')
      if (request.kind === 'elicitation') return this.elicit(connection, request, context)
      return connection.ask(request, context.signal)
    }
    throw new McpError('CANNOT_ASK', `session ${request.session.id} is not an MCP session of this server`)
  }

  /**
   * A tool's `call.elicit` shown to its client. Content the form refuses ends this asker's
   * part (nothing is returned): the client has answered once, and the question waits for
   * the other askers, or expires as `cancel`.
   */
  private async elicit(connection: McpConnection, request: Parameters<Asker>[0], context: AskerContext): Promise<void> {
    const answer = await connection.elicit(request, context.signal)
    const status = context.respond(answer)
    if (status === 'accepted' || status === 'closed') return
    const why = answer.value !== undefined ? request.input?.check(answer.value) : undefined
    this.options.logger?.debug(`the MCP client of session ${request.session.id} answered elicitation ${request.id} (${request.tool}) with what it does not accept (${status}${why ? `: ${why}` : ''}); waiting for another asker`)
  }
}

/** Creates an MCP server over a Dogu toolset; connect transports to it. See `McpServerOptions`. */
export function createMcpServer(options: McpServerOptions): DoguMcpServer {
  return new DoguMcpServer(options)
}
