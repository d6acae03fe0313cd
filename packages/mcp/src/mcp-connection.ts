import { randomUUID } from 'node:crypto'
import { type AskAnswer, type CallInfo, type PermissionRequest, type Session, type Toolset, type ToolsetOptions, withTraceMeta } from '@dogu/core'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import { answerOf, approvalForm } from './approval-form'
import { toCallToolResult } from './call-tool-result'
import { annotationsOf } from './tool-annotations'

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** What a connection needs from the server that made it. */
export interface ConnectionHost {
  readonly info: { name: string; version: string }
  toolset(options: ToolsetOptions): Toolset
  readonly selection: Omit<ToolsetOptions, 'session'>
  opened(connection: McpConnection): void
  closed(connection: McpConnection): void
}

/** Who a connection acts as: its authority and user, from what authenticated it or the server's defaults. */
export interface ConnectionIdentity {
  authority: number
  /**
   * The user id rules match and grants are kept for: a token's `user` (or its name or
   * fingerprint), `anonymous` without a token, the server's `user` over stdio. Never the
   * client's self-declared name.
   */
  user: string
}

/** A call of this connection in flight: what an elicitation and progress need. */
interface OpenCall {
  extra: Extra
  progress: number
}

const CLIENT_NAME = /[^a-zA-Z0-9._-]+/g

/**
 * One MCP client connection: its own SDK `Server`, and the Dogu session
 * `mcp:<client>:<session>` its calls run in.
 */
export class McpConnection {
  readonly server: Server
  private fallbackId = randomUUID()
  private calls = new Map<string, OpenCall>()
  private current: Toolset | undefined
  private _session: Session | undefined
  private closed = false

  constructor(private host: ConnectionHost, private transport: Transport, private identity: ConnectionIdentity) {
    this.server = new Server(host.info, {
      capabilities: { tools: { listChanged: true } },
      debouncedNotificationMethods: ['notifications/tools/list_changed'],
    })
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }))
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.callTool(request.params.name, request.params.arguments, request.params._meta, extra))
    this.server.onclose = () => this.dispose()
  }

  /** The transport's session id (Streamable HTTP, known once initialized), or a random one (stdio). */
  get connectionId(): string {
    return this.transport.sessionId ?? this.fallbackId
  }

  /**
   * The Dogu session of this connection: its user is who the connection authenticated as; the
   * client's name, once it has introduced itself, is only a label in the id.
   */
  get session(): Session {
    if (this._session) return this._session
    const client = this.server.getClientVersion()?.name?.replace(CLIENT_NAME, '_') || 'client'
    const session: Session = {
      id: `mcp:${client}:${this.connectionId}`,
      userId: this.identity.user,
      platform: 'mcp',
      authority: this.identity.authority,
    }
    // Only once the client is known: a call cannot come before `initialize`.
    if (this.server.getClientVersion()) this._session = Object.freeze(session)
    return session
  }

  /** Whether the client can answer permission requests (it declared form elicitation). */
  get elicits(): boolean {
    const elicitation = this.server.getClientCapabilities()?.elicitation
    return !!elicitation && (Object.keys(elicitation).length === 0 || !!(elicitation as { form?: object }).form)
  }

  async start(): Promise<void> {
    await this.server.connect(this.transport)
    this.host.opened(this)
  }

  /** The registry changed: the next list or call takes a new toolset, and the client is told. */
  toolsChanged(): void {
    this.current = undefined
    if (this.closed || !this.server.getClientVersion()) return
    this.server.sendToolListChanged().catch(() => {})
  }

  /** Whether this connection is the one that made `request`: its session and one of its calls in flight. */
  owns(request: Readonly<PermissionRequest>): boolean {
    return request.session.id === this._session?.id && this.calls.has(request.callId)
  }

  /** Shows a permission request to the client as an elicitation; the answer is the client's. */
  async ask(request: Readonly<PermissionRequest>, signal: AbortSignal): Promise<AskAnswer> {
    const call = this.calls.get(request.callId)!
    const result = await call.extra.sendRequest(
      { method: 'elicitation/create', params: approvalForm(request) },
      ElicitResultSchema,
      { signal, timeout: Math.max(1, request.expiresAt - Date.now()) },
    )
    const session = this.session
    return answerOf(result, { id: session.userId!, platform: 'mcp', authority: this.identity.authority })
  }

  /** Forwards a call's progress as MCP progress notifications, when the client asked for them. */
  progress(info: CallInfo, message: string): void {
    const call = this.calls.get(info.id)
    const token = call?.extra._meta?.progressToken
    if (token === undefined || call!.extra.signal.aborted) return
    call!.extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++call!.progress, message } }).catch(() => {})
  }

  async close(): Promise<void> {
    await this.server.close()
    this.dispose()
  }

  private dispose() {
    if (this.closed) return
    this.closed = true
    this.host.closed(this)
  }

  private toolset(): Toolset {
    return this.current ??= this.host.toolset({ ...this.host.selection, session: this.session })
  }

  private listTools(): McpTool[] {
    const toolset = this.toolset()
    return toolset.definitions('json').map((definition) => {
      const tool = toolset.get(definition.name)
      const listed: McpTool = { name: definition.name, description: definition.description, inputSchema: definition.parameters as McpTool['inputSchema'] }
      if (tool) listed.annotations = annotationsOf(tool.traits)
      return listed
    })
  }

  private async callTool(name: string, args: Record<string, unknown> | undefined, meta: unknown, extra: Extra): Promise<CallToolResult> {
    const id = `mcp_${randomUUID()}`
    this.calls.set(id, { extra, progress: 0 })
    try {
      // A client's trace context in `_meta` (SEP-414) is the parent of the call's span.
      const [result] = await withTraceMeta(meta, () => this.toolset().execute([{ id, name, arguments: args ?? {} }], { signal: extra.signal }))
      return toCallToolResult(result)
    } finally {
      this.calls.delete(id)
    }
  }
}
