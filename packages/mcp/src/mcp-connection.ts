import { randomUUID } from 'node:crypto'
import { type Approver, type AskAnswer, type CallInfo, type Logger, type LogLevel, type PermissionRequest, type Session, type Toolset, type ToolsetOptions, withTraceMeta } from '@dogu/core'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  ElicitResultSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError as SdkError,
  RequestSchema,
  type ServerNotification,
  SetLevelRequestSchema,
  type ServerRequest,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import { answerOf, approvalForm } from './approval-form'
import { shortArgumentsMessage } from './arguments-message'
import { CALL_EVENTS_LOGGER, callEndEvent, callStartEvent, DEFAULT_LOG_LEVEL, isLogged } from './call-log'
import { toCallToolResult } from './call-tool-result'
import { elicitationAnswer, elicitationForm } from './elicitation-form'
import { listedInputSchema } from './input-schema'
import { invalidParams } from './json-rpc-error'
import { outputSchemaOf } from './output-schema'
import { annotationsOf } from './tool-annotations'
import { ANONYMOUS } from './mcp-server'
import { type McpBackground, McpTaskStore, ownsTask } from './mcp-task-store'
import { runInTaskMode, taskModeToolset } from './task-mode-call'

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** What a connection needs from the server that made it. */
export interface ConnectionHost {
  readonly info: { name: string; version: string }
  toolset(options: ToolsetOptions): Toolset
  readonly selection: Omit<ToolsetOptions, 'session'>
  opened(connection: McpConnection): void
  closed(connection: McpConnection): void
  /** Dogu's background service now, if one is loaded: tool calls in task mode become its tasks. */
  background?(): McpBackground | undefined
  readonly logger?: Logger
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

/** How one connection's transport is served. */
export interface ConnectionOptions {
  /**
   * Streamable HTTP: milliseconds after which the SSE stream of a call still running is
   * closed, so the client reconnects with `Last-Event-ID` and gets the rest from the
   * session's event store (SEP-1699). Only for clients of protocol 2025-11-25 or later, which
   * the SDK offers it to. Unset or 0: streams stay open until the call ends.
   */
  sseCloseAfter?: number
}

/** A call of this connection in flight: what an elicitation, progress and log lines need. */
interface OpenCall {
  extra: Extra
  progress: number
  tool: string
}

const CLIENT_NAME = /[^a-zA-Z0-9._-]+/g
/** Tasks for `tools/call`, listed per user and cancellable (`capabilities.tasks`). */
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

/**
 * One MCP client connection: its own SDK `Server`, and the Dogu session
 * `mcp:<client>:<session>` its calls run in.
 */
export class McpConnection {
  readonly server: Server
  private fallbackId = randomUUID()
  private calls = new Map<string, OpenCall>()
  private current: Toolset | undefined
  /** The toolset of calls in task mode (`taskModeToolset`), made like `current`. */
  private taskTools: Toolset | undefined
  /** MCP tasks over the background service, when one was loaded as the connection opened. */
  private readonly tasks: McpTaskStore | undefined
  /** Tools whose output schema could not be listed, warned about once. */
  private warnedOutputs = new WeakSet<object>()
  private _session: Session | undefined
  private closed = false
  /** What the client set with `logging/setLevel`; unset, tools' lines from `DEFAULT_LOG_LEVEL` and no call events. */
  private logLevel: LogLevel | undefined

  constructor(private host: ConnectionHost, private transport: Transport, private identity: ConnectionIdentity, private options: ConnectionOptions = {}) {
    this.tasks = host.background?.() ? this.taskStore() : undefined
    this.server = new Server(host.info, {
      capabilities: { tools: { listChanged: true }, logging: {}, ...(this.tasks ? { tasks: TASKS_CAPABILITY } : {}) },
      taskStore: this.tasks,
      debouncedNotificationMethods: ['notifications/tools/list_changed'],
    })
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }))
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => request.params.task && this.tasks ? this.callAsTask(request.params.name, request.params.arguments, request.params._meta, extra) : this.callTool(request.params.name, request.params.arguments, request.params._meta, extra))
    // One connection is one client: its level is this connection's (the SDK's own handler keys
    // levels by session id). An unknown level is -32602, which the SDK's schema would make -32603.
    this.server.setRequestHandler(RequestSchema.extend({ method: SetLevelRequestSchema.shape.method }), (request) => {
      const level = LoggingLevelSchema.safeParse(request.params?.level)
      if (!level.success) throw invalidParams(`logging/setLevel: level must be one of ${LoggingLevelSchema.options.join(', ')}, got ${JSON.stringify(request.params?.level)}`)
      this.logLevel = level.data
      return {}
    })
    // `tasks/result` waits on the background service rather than polling the store (the SDK's handler).
    if (this.tasks) this.server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) => this.tasks!.result(request.params.taskId, extra.signal))
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
    this.taskTools = undefined
    if (this.closed || !this.server.getClientVersion()) return
    this.server.sendToolListChanged().catch(() => {})
  }

  /** Whether this connection is the one that made `request`: its session and one of its calls in flight. */
  owns(request: Readonly<PermissionRequest>): boolean {
    return request.session.id === this._session?.id && this.calls.has(request.callId)
  }

  /** Shows a permission request to the client as an elicitation; the answer is the client's. */
  async ask(request: Readonly<PermissionRequest>, signal: AbortSignal): Promise<AskAnswer> {
    return answerOf(await this.sendElicitation(request, approvalForm(request), signal), this.approver())
  }

  /**
   * Shows a tool's `call.elicit` to the client as its form; the answer is the client's, as
   * given (`respond` validates accepted content against the form).
   */
  async elicit(request: Readonly<PermissionRequest>, signal: AbortSignal): Promise<AskAnswer> {
    return elicitationAnswer(await this.sendElicitation(request, elicitationForm(request), signal), this.approver())
  }

  /** `elicitation/create` on the stream of the call that asked, bounded by the request's expiry. */
  private sendElicitation(request: Readonly<PermissionRequest>, params: ElicitRequestFormParams, signal: AbortSignal): Promise<ElicitResult> {
    const call = this.calls.get(request.callId)!
    return call.extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, { signal, timeout: Math.max(1, request.expiresAt - Date.now()) })
  }

  /** Who answers for this connection: its user, with the connection's own authority. */
  private approver(): Approver {
    return { id: this.session.userId!, platform: 'mcp', authority: this.identity.authority }
  }

  /**
   * Sends a tool's `call.log` line to the client whose call wrote it, as
   * `notifications/message` (logger: the tool's name), at or above the client's level.
   */
  log(info: CallInfo, level: LogLevel, data: unknown): void {
    const call = this.calls.get(info.id)
    if (!call) return
    this.sendLog(call, level, call.tool, data)
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

  /** The toolset's tools by name (clients and their caches see one order, whatever the registry's), with their output schemas. */
  private listTools(): McpTool[] {
    const toolset = this.toolset()
    const definitions = [...toolset.definitions('json')].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return definitions.map((definition) => {
      const tool = toolset.get(definition.name)
      const listed: McpTool = { name: definition.name, description: definition.description, inputSchema: listedInputSchema(definition.parameters) }
      if (tool) {
        listed.annotations = annotationsOf(tool.traits)
        const output = this.outputOf(tool)
        if (output) listed.outputSchema = output.schema
        // A tool that may move to the background may also start there, as an MCP task.
        if (this.tasks && tool.traits.background) listed.execution = { taskSupport: 'optional' }
      }
      return listed
    })
  }

  /** A tool's listed output schema; one MCP cannot state is left out, with a warning, and its data goes out as for a tool without. */
  private outputOf(tool: NonNullable<ReturnType<Toolset['get']>>) {
    try {
      return outputSchemaOf(tool)
    } catch (error) {
      if (!this.warnedOutputs.has(tool)) {
        this.warnedOutputs.add(tool)
        this.host.logger?.warn(`MCP lists ${tool.name} without an outputSchema: ${error instanceof Error ? error.message : String(error)}`)
      }
      return undefined
    }
  }

  /** With `sseCloseAfter`, closes the call's SSE stream once it has run that long; the client resumes it. */
  private closeStreamLater(extra: Extra): ReturnType<typeof setTimeout> | undefined {
    const after = this.options.sseCloseAfter
    const close = extra.closeSSEStream
    if (!after || !close) return undefined
    return setTimeout(() => close(), after)
  }

  /** A `notifications/message` on the call's own stream, when `level` is at or above the client's. */
  private sendLog(call: OpenCall, level: LogLevel, logger: string, data: unknown, events = false): void {
    // Dogu's call events go only to a client that asked for a level.
    if (events && !this.logLevel) return
    if (!isLogged(level, this.logLevel ?? DEFAULT_LOG_LEVEL) || call.extra.signal.aborted) return
    call.extra.sendNotification({ method: 'notifications/message', params: { level, logger, data } }).catch(() => {})
  }

  private async callTool(name: string, args: Record<string, unknown> | undefined, meta: unknown, extra: Extra): Promise<CallToolResult> {
    const id = `mcp_${randomUUID()}`
    const toolset = this.toolset()
    const tool = toolset.get(name)
    // The specification answers a tool the server does not have with -32602, not a result; the
    // pipeline's text names the closest tools.
    if (!tool) throw invalidParams((await toolset.execute([{ id, name, arguments: args ?? {} }], { signal: extra.signal }))[0].content)
    const call: OpenCall = { extra, progress: 0, tool: name }
    this.calls.set(id, call)
    const closeStream = this.closeStreamLater(extra)
    try {
      const start = callStartEvent(name, id)
      this.sendLog(call, start.level, CALL_EVENTS_LOGGER, start.data, true)
      // A client's trace context in `_meta` (SEP-414) is the parent of the call's span.
      const [result] = await withTraceMeta(meta, () => toolset.execute([{ id, name, arguments: args ?? {} }], { signal: extra.signal }))
      const end = callEndEvent(result)
      this.sendLog(call, end.level, CALL_EVENTS_LOGGER, end.data, true)
      // A model reads the first problems of its arguments, not the validator's whole list.
      const sent = result.code === 'invalid_arguments' ? { ...result, content: shortArgumentsMessage(result.content) } : result
      return toCallToolResult(sent, { wrapData: this.outputOf(tool)?.wrapped })
    } finally {
      clearTimeout(closeStream)
      this.calls.delete(id)
    }
  }

  /**
   * A `tools/call` in task mode (`params.task`): the call goes through the pipeline (rules,
   * approvals) and is handed to Dogu's background as soon as it runs; the answer is its task.
   */
  private async callAsTask(name: string, args: Record<string, unknown> | undefined, meta: unknown, extra: Extra): Promise<CreateTaskResult> {
    const background = this.host.background?.()
    if (!background) throw new SdkError(ErrorCode.InternalError, 'Dogu\'s background service is not loaded: call the tool without task mode')
    const id = `mcp_${randomUUID()}`
    this.calls.set(id, { extra, progress: 0, tool: name })
    try {
      this.taskTools ??= this.host.toolset(taskModeToolset({ ...this.host.selection, session: this.session }))
      const call = { id, name, arguments: args ?? {} }
      const task = await withTraceMeta(meta, () => runInTaskMode({ toolset: this.taskTools!, background, session: this.session, call, signal: extra.signal }))
      return { task: this.tasks!.present(task) }
    } finally {
      this.calls.delete(id)
    }
  }

  private taskStore(): McpTaskStore {
    return new McpTaskStore({
      background: () => this.host.background?.(),
      owns: (task) => ownsTask(task, { user: this.identity.user, sessionId: this.session.id, anonymous: this.identity.user === ANONYMOUS }),
      toResult: (result) => toCallToolResult(result, { wrapData: this.outputOfName(result.name)?.wrapped }),
    })
  }

  private outputOfName(name: string) {
    const tool = this.toolset().get(name)
    return tool && this.outputOf(tool)
  }
}
