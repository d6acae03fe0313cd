import { type Logger, type ToolCall, type ToolOptions, traceMeta } from '@dogu/core'
import { fromJsonSchema, type JsonSchema, type Loosening } from '@dogu/schema'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  McpError as SdkError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { formDefaults } from './form-defaults'
import { GroupStdioTransport } from './group-stdio-transport'
import { fromCallToolResult } from './from-call-tool-result'
import { importedName, SERVER_NAME_RULE } from './imported-name'
import { McpError } from './mcp-error'
import { effectOf } from './tool-annotations'

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
}

/** A tool the server lists that Dogu could not import, and why. */
export interface SkippedTool {
  tool: string
  reason: string
}

export interface McpClientConnectionOptions {
  /** The server's name: `/^[a-zA-Z0-9-]{1,32}$/`, the prefix of its tools' names. */
  name: string
  server: McpServerConfig
  /** Defines one imported tool (`ctx.tools.define`); returns its disposer. */
  define(tool: ToolOptions): () => void
  logger?: Logger
  /** Backoff between reconnection attempts: doubles from `initialDelay` up to `maxDelay` (ms). */
  reconnect?: { initialDelay?: number; maxDelay?: number }
  /** Makes the transport instead of `server.command`/`server.url` (an in-memory pair in benchmarks and tests). */
  transport?: () => Transport
  /**
   * Milliseconds a stdio server has to exit once its stdin is closed, and again after SIGTERM
   * to its process group, before SIGKILL. @default 2000
   */
  killGrace?: number
}

export type McpClientStatus = 'connecting' | 'connected' | 'reconnecting' | 'closed'

interface Imported {
  /** The listing it was made from: redefined only when that changes. */
  key: string
  dispose: () => void
  /** What its schema states that Dogu does not enforce. */
  loosened: readonly Loosening[]
}

const silent: Logger = { debug() {}, warn() {} }

/**
 * One MCP server whose tools are Dogu tools while it is connected: it spawns or dials the
 * server, imports its tools (`<server>_<tool>`), follows `list_changed`, reconnects with
 * backoff when the connection drops, and on `close` ends the child process.
 */
export class McpClientConnection {
  readonly name: string
  private client: Client | undefined
  private transport: Transport | undefined
  /** Every transport made and not yet closed: one still connecting is closed by `close` too. */
  private transports = new Set<Transport>()
  private imported = new Map<string, Imported>()
  private running: ToolCall[] = []
  private _status: McpClientStatus = 'connecting'
  private _skipped: SkippedTool[] = []
  private attempt = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private waiters: { resolve: () => void; reject: (error: Error) => void }[] = []
  private logger: Logger
  private readonly trusted: boolean
  private readonly requestTimeout: number

  constructor(private options: McpClientConnectionOptions) {
    const { name, server } = options
    if (typeof name !== 'string' || !SERVER_NAME_RULE.test(name)) throw new McpError('INVALID_OPTIONS', `MCP server name ${JSON.stringify(name)} must match ${SERVER_NAME_RULE}`)
    if (!server || typeof server !== 'object') throw new McpError('INVALID_OPTIONS', `servers.${name} must be { command, args?, env?, cwd? } or { url, headers? }`)
    if (!options.transport && (typeof server.command === 'string') === (typeof server.url === 'string')) throw new McpError('INVALID_OPTIONS', `servers.${name} needs exactly one of "command" (stdio) and "url" (Streamable HTTP)`)
    if (server.url !== undefined) {
      try {
        new URL(server.url)
      } catch {
        throw new McpError('INVALID_OPTIONS', `servers.${name}.url is not a URL: ${JSON.stringify(server.url)}`)
      }
    }
    this.name = name
    this.trusted = server.trusted === true
    this.requestTimeout = server.requestTimeout ?? 60_000
    this.logger = options.logger ?? silent
  }

  get status(): McpClientStatus {
    return this._status
  }

  /** Imported tool names, sorted. */
  get tools(): string[] {
    return [...this.imported.keys()].sort()
  }

  /** Tools of the last listing that were not imported. */
  get skipped(): readonly SkippedTool[] {
    return this._skipped
  }

  /**
   * Rules of imported tools' schemas that Dogu does not enforce, by Dogu tool name: a
   * `pattern` the linear-time engine cannot run (backreferences, lookaround) is never run
   * on a backtracking one. Each is also logged when the tool is imported.
   */
  get loosened(): Readonly<Record<string, readonly Loosening[]>> {
    const result: Record<string, readonly Loosening[]> = {}
    for (const [name, { loosened }] of this.imported) {
      if (loosened.length) result[name] = loosened
    }
    return result
  }

  /**
   * The child process of a stdio server, while it runs: the command started, which leads a
   * process group of its own (POSIX), so this is also the group's id.
   */
  get pid(): number | undefined {
    return (this.transport as StdioClientTransport | GroupStdioTransport | undefined)?.pid ?? undefined
  }

  /** Starts connecting; failures are retried with backoff. */
  start(): void {
    void this.connect()
  }

  /** Resolves when the server is connected and its tools imported (now, or after the next (re)connect). */
  connected(signal?: AbortSignal): Promise<void> {
    if (this._status === 'connected') return Promise.resolve()
    if (this._status === 'closed') return Promise.reject(new McpError('CLOSED', `MCP server "${this.name}" is closed`))
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject }
      this.waiters.push(waiter)
      signal?.addEventListener('abort', () => {
        this.waiters = this.waiters.filter((other) => other !== waiter)
        reject(signal.reason)
      }, { once: true })
    })
  }

  /** Disconnects for good: the tools go away and a stdio server's process is ended. Idempotent. */
  async close(): Promise<void> {
    if (this._status === 'closed') return
    this._status = 'closed'
    clearTimeout(this.timer)
    for (const { reject } of this.waiters.splice(0)) reject(new McpError('CLOSED', `MCP server "${this.name}" was closed`))
    for (const { dispose } of this.imported.values()) dispose()
    this.imported.clear()
    const client = this.client
    // A transport still connecting (or one dropped and still closing) is closed too: its
    // process ends before `close` resolves.
    const others = [...this.transports].filter((transport) => transport !== this.transport)
    this.client = undefined
    this.transport = undefined
    await Promise.all([client?.close(), ...others.map((transport) => transport.close())])
  }

  private async connect(): Promise<void> {
    if (this._status === 'closed') return
    const client = new Client({ name: 'dogu', version: '0.1.0' }, { capabilities: { elicitation: { form: {} } } })
    const transport = this.makeTransport()
    this.transports.add(transport)
    const close = transport.close.bind(transport)
    transport.close = () => close().finally(() => this.transports.delete(transport))
    client.setRequestHandler(ElicitRequestSchema, (request) => this.elicit(request.params))
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh(client).catch((error) => {
      this.logger.warn('MCP server "%s": cannot list its tools after list_changed: %s', this.name, error instanceof Error ? error.message : error)
    }))
    client.onclose = () => this.dropped(client)
    try {
      await client.connect(transport)
      if ((this._status as McpClientStatus) === 'closed') {
        await client.close()
        return
      }
      this.client = client
      this.transport = transport
      await this.refresh(client)
    } catch (error) {
      // Closed meanwhile: the failure is the closing, nothing to report.
      if ((this._status as McpClientStatus) !== 'closed') this.logger.warn('MCP server "%s": cannot connect: %s', this.name, error instanceof Error ? error.message : error)
      await client.close().catch(() => {})
      if (this.client === client) this.client = undefined
      this.retry()
      return
    }
    if (this.client !== client) return
    this.attempt = 0
    this._status = 'connected'
    for (const { resolve } of this.waiters.splice(0)) resolve()
  }

  private makeTransport(): Transport {
    const { server } = this.options
    if (this.options.transport) return this.options.transport()
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
      return new GroupStdioTransport({ ...params, name: this.name, grace: this.options.killGrace, logger: this.logger })
    }
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } })
  }

  private dropped(client: Client) {
    if (this.client !== client || this._status === 'closed') return
    this.logger.warn('MCP server "%s": the connection dropped; reconnecting', this.name)
    this.client = undefined
    this.transport = undefined
    this.retry()
    void client.close().catch(() => {})
  }

  private retry() {
    if (this._status === 'closed') return
    this._status = 'reconnecting'
    const { initialDelay = 500, maxDelay = 30_000 } = this.options.reconnect ?? {}
    const delay = Math.min(maxDelay, initialDelay * 2 ** this.attempt++)
    clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.connect(), delay)
  }

  /** Lists the server's tools and brings the imported ones in line: new ones defined, changed ones redefined, gone ones removed. */
  private async refresh(client: Client): Promise<void> {
    const listed: McpTool[] = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor ? { cursor } : {})
      listed.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor)
    if (this.client !== client || this._status === 'closed') return
    const skipped: SkippedTool[] = []
    const seen = new Set<string>()
    for (const tool of listed) {
      const name = importedName(this.name, tool.name)
      if (seen.has(name)) {
        skipped.push({ tool: tool.name, reason: `its Dogu name ${name} is taken by another tool of this server` })
        continue
      }
      seen.add(name)
      const key = JSON.stringify([tool.description, tool.inputSchema, this.trusted ? tool.annotations : undefined])
      if (this.imported.get(name)?.key === key) continue
      // Converting the schema and defining the tool both refuse what Dogu cannot take (a
      // schema outside the converter's subset, args that are no object, a name another
      // plugin's tool holds): that tool is skipped, the others are imported.
      const previous = this.imported.get(name)
      this.imported.delete(name)
      previous?.dispose()
      try {
        const loosened: Loosening[] = []
        this.imported.set(name, { key, loosened, dispose: this.options.define(this.toolOptions(name, tool, loosened)) })
        if (loosened.length) this.logger.warn('MCP server "%s": tool %s is imported without enforcing %s', this.name, tool.name, loosened.map(({ path, rule }) => `${rule} (at ${path})`).join('; '))
      } catch (error) {
        skipped.push({ tool: tool.name, reason: error instanceof Error ? error.message : String(error) })
        seen.delete(name)
      }
    }
    for (const [name, { dispose }] of this.imported) {
      if (seen.has(name)) continue
      dispose()
      this.imported.delete(name)
    }
    for (const { tool, reason } of skipped) this.logger.warn('MCP server "%s": skipped tool %s: %s', this.name, tool, reason)
    this._skipped = skipped
  }

  private toolOptions(name: string, tool: McpTool, loosened: Loosening[]): ToolOptions {
    // A schema the converter refuses throws here, and the tool is skipped.
    const args = fromJsonSchema(tool.inputSchema as JsonSchema, { onLoosen: (loosening) => loosened.push(loosening) })
    return {
      name,
      description: tool.description || tool.title || `${tool.name} (MCP server ${this.name})`,
      args,
      traits: { effect: this.trusted ? effectOf(tool.annotations) : 'exec', timeout: this.options.server.timeout ?? 180_000 },
      run: (input, call) => this.call(tool.name, input, call),
    }
  }

  private async call(tool: string, args: unknown, call: ToolCall) {
    const client = this.client
    if (!client) throw new Error(`the MCP server "${this.name}" is not connected (${this._status})`)
    this.running.push(call)
    let result: Awaited<ReturnType<Client['callTool']>>
    try {
      // The call's span is the active context here (the tool runs inside it): its W3C trace
      // context rides in `_meta` (SEP-414), so the server's work joins the trace.
      const meta = traceMeta()
      result = await client.callTool({ name: tool, arguments: (args ?? {}) as Record<string, unknown>, ...(meta ? { _meta: meta } : {}) }, undefined, {
        signal: call.signal,
        timeout: this.requestTimeout,
        resetTimeoutOnProgress: true,
        onprogress: ({ progress, total, message }) => call.progress(message ?? (total ? `${progress}/${total}` : String(progress))),
      })
    } catch (error) {
      // The SDK reports an abort and its own timeout alike; the call's signal says which it was,
      // and the pipeline already knows whether it was cancelled or timed out.
      if (call.signal.aborted) throw call.signal.reason ?? error
      if (error instanceof SdkError && error.code === ErrorCode.RequestTimeout) {
        throw new Error(`the MCP server "${this.name}" sent neither a result nor progress for ${this.requestTimeout} ms`)
      }
      // Over HTTP nothing closes when a server goes away or restarts: a request that fails
      // below the protocol (refused, or 404 for a session it forgot) is how the drop shows.
      if (!(error instanceof SdkError) && this.options.server.url !== undefined) {
        this.dropped(client)
        throw new Error(`the MCP server "${this.name}" could not be reached (${error instanceof Error ? error.message : String(error)}); reconnecting`)
      }
      throw error
    } finally {
      this.running.splice(this.running.indexOf(call), 1)
    }
    return fromCallToolResult(result as never, call, this.trusted)
  }

  /**
   * A server's elicitation goes to Dogu's askers as the running call's `ask`: an approval
   * accepts the form with its defaults. A form Dogu cannot fill (a required field without a
   * default, a URL) and a request with no call in flight are declined; so is a denial.
   */
  private async elicit(params: { mode?: string; message: string; requestedSchema?: unknown }): Promise<ElicitResult> {
    const content = params.mode === 'url' ? undefined : formDefaults(params.requestedSchema)
    // Over stdio a request names no call: it belongs to the latest one of this server.
    const call = this.running[this.running.length - 1]
    if (!content || !call) {
      this.logger.warn('MCP server "%s": declined an elicitation (%s): %s', this.name, params.message, !call ? 'no call of this server is running' : 'its form has required fields Dogu cannot fill')
      return { action: 'decline' }
    }
    try {
      await call.ask(`MCP server "${this.name}" asks: ${params.message}`)
    } catch {
      return { action: 'decline' }
    }
    return { action: 'accept', content }
  }
}
