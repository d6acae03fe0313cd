import { type Logger, type LogLevel, type ToolCall, type ToolOptions, type ToolSource, traceMeta } from '@dogu/core'
import { fromJsonSchema, type JsonSchema, type Loosening } from '@dogu/schema'
import type Schema from 'schemastery'
import { extractWWWAuthenticateParams, auth as sdkAuth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError as SdkError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { GroupStdioTransport } from './group-stdio-transport'
import { fromCallToolResult } from './from-call-tool-result'
import { headerSecrets } from './header-secrets'
import { IdleDeadline } from './idle-deadline'
import { answerElicitation } from './imported-elicitation'
import { callImportedTask, callsAsTask } from './imported-task-call'
import { importedName } from './imported-name'
import { McpError } from './mcp-error'
import { checkServerConfig, type McpServerConfig } from './mcp-server-config'
import { McpOAuthProvider, type PendingAuthorization } from './oauth-provider'
import type { McpOAuthStore } from './oauth-token-store'
import { logServerMessage } from './server-log'
import { serverTransport } from './server-transport'
import { effectOf } from './tool-annotations'

export type { McpServerConfig } from './mcp-server-config'

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
  /**
   * For a server with `auth`: where its tokens are kept, and the redirect URL its config
   * does not name (the console's callback): a URL, or how to find it once the console's
   * server listens.
   */
  oauth?: { store: McpOAuthStore; redirectUrl?: string | (() => string | undefined) }
  /** A person has to open `pending.url` to authorize this server (`authorize` takes the code back). */
  onAuthorization?: (pending: PendingAuthorization) => void
  /** Gets each access and refresh token as it is loaded or received: the plugin redacts them. */
  onTokens?: (tokens: string[]) => void
}

/** `needs-authorization`: the server wants OAuth and nobody has authorized it yet (or its tokens were revoked); its tools are absent, and nothing retries until `authorize`. */
export type McpClientStatus = 'connecting' | 'connected' | 'reconnecting' | 'needs-authorization' | 'closed'

interface Imported {
  /** The listing it was made from: redefined only when that changes. */
  key: string
  dispose: () => void
  /** What its schema states that Dogu does not enforce. */
  loosened: readonly Loosening[]
}

/** A call of this server in flight, with the deadline of its silence (`requestTimeout`); a task's requests each have their own. */
interface Running {
  call: ToolCall
  idle?: IdleDeadline
}

/** What a `403 insufficient_scope` asked for: the scope the operation needs, and where the server's resource metadata is. */
interface ScopeChallenge {
  scope?: string
  resourceMetadataUrl?: URL
}

/** `a b` and `b c` → `a b c`: a step-up keeps what was granted and adds what the server asks for. */
function unionOfScopes(granted: string | undefined, wanted: string): string {
  return [...new Set([...(granted ?? '').split(' '), ...wanted.split(' ')].filter(Boolean))].join(' ')
}

const silent: Logger = { debug() {}, warn() {} }
// Authorizations in a row the server may refuse before Dogu stops passing them on (the conformance suite's limit).
const MAX_AUTHORIZATIONS = 3
// How long `startAuthorization` waits for the server's discovery to give a URL.
const START_TIMEOUT = 30_000
// The SDK's own request timer never fires first (Dogu's `timeout` bounds every call): the
// silence deadline is Dogu's, which holds while a person answers the server's elicitation.
// setTimeout's largest delay; a larger one would fire at once.
const NO_SDK_TIMEOUT = 2 ** 31 - 1

/**
 * One MCP server whose tools are Dogu tools while it is connected: it spawns or dials the
 * server, imports its tools (`<server>_<tool>`), follows `list_changed`, reconnects with
 * backoff when the connection drops, and on `close` ends the child process.
 */
export class McpClientConnection implements ToolSource {
  readonly name: string
  readonly kind = 'mcp'
  private client: Client | undefined
  private transport: Transport | undefined
  /** Every transport made and not yet closed: one still connecting is closed by `close` too. */
  private transports = new Set<Transport>()
  private imported = new Map<string, Imported>()
  private running: Running[] = []
  private _status: McpClientStatus = 'connecting'
  private _skipped: SkippedTool[] = []
  private attempt = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private waiters: { resolve: () => void; reject: (error: Error) => void }[] = []
  private logger: Logger
  private readonly trusted: boolean
  private readonly requestTimeout: number
  private readonly logLevel: LogLevel
  /** What the server's own log lines must not show on the host: its configured headers. */
  private readonly secrets: readonly string[]
  private readonly oauth: McpOAuthProvider | undefined
  /**
   * What completes the authorization under way: the transport that met the 401 (its
   * `finishAuth` knows the server's resource metadata and scope), or a step-up's own.
   */
  private unauthorized: Pick<StreamableHTTPClientTransport, 'finishAuth' | 'close'> | undefined
  private _lastError: string | undefined
  /** Authorizations completed since the last connection that held: a server that refuses each one is not asked forever. */
  private authorizations = 0
  /** `startAuthorization` waiting for the URL the SDK makes. */
  private starting: ((url: string) => void) | undefined
  /** A connection attempt with a new store's tokens is under way (its refusal is not warned of twice). */
  private retriedStore = false
  /** What the server's last `403 insufficient_scope` asked for (its `WWW-Authenticate`). */
  private challenge: ScopeChallenge | undefined
  /**
   * A request was refused for too little scope, and the SDK's own step-up could not end it
   * (it needs a person to authorize, or a refresh brought no more): the next authorization
   * drops the tokens and asks for the scope the server named.
   */
  private stepUp: ScopeChallenge | undefined

  constructor(private options: McpClientConnectionOptions) {
    const { name, server } = options
    checkServerConfig(name, server, !!options.transport)
    this.name = name
    this.trusted = server.trusted === true
    this.logLevel = server.logLevel ?? 'info'
    this.secrets = server.url !== undefined ? headerSecrets(server.headers) : []
    this.requestTimeout = server.requestTimeout ?? 60_000
    this.logger = options.logger ?? silent
    if (server.url !== undefined && server.auth !== undefined) {
      const auth = server.auth === 'oauth' ? {} : server.auth
      const redirectUrl = auth.redirectUrl ?? options.oauth?.redirectUrl
      if (!options.oauth || !redirectUrl) throw new McpError('INVALID_OPTIONS', `servers.${name}.auth needs a token store and a redirect URL (the console's callback, or auth.redirectUrl)`)
      this.oauth = new McpOAuthProvider(name, { ...auth, redirectUrl }, options.oauth.store, {
        onAuthorization: (pending) => {
          const starting = this.starting
          this.starting = undefined
          if (starting) return starting(pending.url)
          if (this.authorizations >= MAX_AUTHORIZATIONS) return
          // Still unauthorized after trying a new store's tokens: it was said already.
          if (this.retriedStore) {
            this.retriedStore = false
            return
          }
          this.logger.warn('MCP server "%s" needs authorization: open the MCP servers view of the console (or send dogu.mcp.auth %s)', name, name)
          options.onAuthorization?.(pending)
        },
        onTokens: options.onTokens,
        onStoreSwitch: () => this.retryWithStore(),
      })
    }
  }

  /** The authorization a person has to complete while the status is `needs-authorization`. */
  get authorization(): PendingAuthorization | undefined {
    return this._status === 'needs-authorization' ? this.oauth?.authorization : undefined
  }

  /** Whether a person has to authorize the server (OAuth) before it has tools. */
  get needsAuthorization(): boolean {
    return this._status === 'needs-authorization'
  }

  /**
   * Starts a fresh authorization for the operator `by` (the one pressing "Authorize") and
   * gives the URL to open: the state in it is bound to them, and the one made before is
   * dropped. Only while the status is `needs-authorization`.
   */
  async startAuthorization(by?: string): Promise<string> {
    if (!this.oauth) throw new McpError('INVALID_OPTIONS', `MCP server "${this.name}" has no auth in its config`)
    if (this._status !== 'needs-authorization') throw new McpError('INVALID_AUTHORIZATION', `MCP server "${this.name}" does not need authorization (it is ${this._status})`)
    const previous = this.unauthorized
    this.unauthorized = undefined
    this.oauth.settle()
    this.oauth.begin(by)
    // A person asks: the retry limit starts over.
    this.authorizations = 0
    const url = new Promise<string>((resolve) => { this.starting = resolve })
    await previous?.close().catch(() => {})
    if (this.stepUp && this.options.server.url !== undefined) {
      // The tokens still work for what they have, so connecting would just succeed, and a
      // refresh keeps their scope: they are dropped, and the authorization asks for the scope
      // the server's challenge named (with what was granted before), else for its scopes
      // (`scopes_supported`, else auth.scopes).
      const { scope, resourceMetadataUrl } = this.stepUp
      this.stepUp = undefined
      this.challenge = undefined
      const granted = (await this.oauth.tokens())?.scope
      await this.oauth.invalidateCredentials('tokens')
      const options = {
        serverUrl: this.options.server.url,
        ...scope ? { scope: unionOfScopes(granted, scope) } : {},
        ...resourceMetadataUrl ? { resourceMetadataUrl } : {},
      }
      const oauth = this.oauth
      this.unauthorized = {
        async finishAuth(authorizationCode: string) {
          if (await sdkAuth(oauth, { ...options, authorizationCode }) !== 'AUTHORIZED') throw new UnauthorizedError('Failed to authorize')
        },
        close: async () => {},
      }
      void sdkAuth(oauth, options).catch((error) => {
        this._lastError = error instanceof Error ? error.message : String(error)
      })
    } else {
      this._status = 'connecting'
      void this.connect()
    }
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new McpError('NEEDS_AUTHORIZATION', `MCP server "${this.name}" made no authorization URL within ${START_TIMEOUT / 1000} s: ${this._lastError ?? this._status}`)), START_TIMEOUT).unref())
    try {
      return await Promise.race([url, timeout])
    } finally {
      this.starting = undefined
    }
  }

  /** Why the last connection attempt failed, while it is not connected. */
  get lastError(): string | undefined {
    return this._status === 'connected' ? undefined : this._lastError
  }

  /**
   * Completes the authorization under way with the code the redirect brought back: `state`
   * must be its own (and `by` the operator who started it, if one did). Then connects.
   */
  async authorize(code: string, state: string, by?: string): Promise<void> {
    const transport = this.unauthorized
    if (!this.oauth || !transport || !this.oauth.matches(state, by)) {
      throw new McpError('INVALID_AUTHORIZATION', `no authorization of MCP server "${this.name}" with this state is under way`)
    }
    this.oauth.settle()
    this.unauthorized = undefined
    this.authorizations++
    try {
      await transport.finishAuth(code)
    } finally {
      await transport.close().catch(() => {})
    }
    // New tokens, with the scope asked for: an older challenge is answered.
    this.stepUp = undefined
    this.challenge = undefined
    if (this._status !== 'needs-authorization') return
    this._status = 'connecting'
    await this.connect()
  }

  /**
   * The token store switched (a database driver started after this server was found
   * unauthorized): the tokens may be in the new store, so it connects once more with them,
   * unless a person already started an authorization.
   */
  private retryWithStore(): void {
    if (this._status !== 'needs-authorization' || this.starting || this.oauth?.authorization?.by !== undefined) return
    const previous = this.unauthorized
    this.unauthorized = undefined
    this.oauth?.settle()
    this.retriedStore = true
    this._status = 'connecting'
    void (async () => {
      await previous?.close().catch(() => {})
      await this.connect()
    })()
  }

  /** Who started the authorization under way with this `state` (`{}` when nobody in particular did), or `undefined` when none with it is. */
  authorizationBy(state: string): { by?: string } | undefined {
    const pending = this.authorization
    if (!pending || !this.oauth?.matches(state, pending.by)) return undefined
    return pending.by === undefined ? {} : { by: pending.by }
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
    // Over stdio a request names no call, and over HTTP the SDK does not say which stream it
    // came on: a server's elicitation and log lines belong to the latest call of this server.
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const running = this.latest()
      // A person may take longer than requestTimeout to answer: the call is not silent meanwhile.
      const release = running?.idle?.hold()
      try {
        return await answerElicitation(running?.call, request.params, { server: this.name, logger: this.logger, signal: extra.signal })
      } finally {
        release?.()
      }
    })
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
      const call = this.latest()?.call
      if (call) call.log(params.level, params.data)
      else logServerMessage(this.logger, this.name, params, this.secrets)
    })
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
      await this.setLogLevel(client)
      await this.refresh(client)
    } catch (error) {
      if (this.client === client) this.client = undefined
      const stepUp = this.stepUpOf(error)
      if ((error instanceof UnauthorizedError || stepUp) && this.oauth && (this._status as McpClientStatus) !== 'closed') {
        // Refused for too little scope (listing the tools, say): reconnecting would meet the same 403.
        if (stepUp) this.stepUp = stepUp
        await this.requireAuthorization(client, transport)
        return
      }
      this._lastError = error instanceof Error ? error.message : String(error)
      // Closed meanwhile: the failure is the closing, nothing to report.
      if ((this._status as McpClientStatus) !== 'closed') this.logger.warn('MCP server "%s": cannot connect: %s', this.name, this._lastError)
      await client.close().catch(() => {})
      this.retry()
      return
    }
    if (this.client !== client) return
    this.attempt = 0
    this.authorizations = 0
    this.retriedStore = false
    // Connected and listed on these tokens: a scope challenge from before is stale (a call that needs more meets its own).
    this.challenge = undefined
    this.stepUp = undefined
    this._status = 'connected'
    for (const { resolve } of this.waiters.splice(0)) resolve()
  }

  /** Asks a server that logs to send what is at or above `logLevel`; one that refuses still connects. */
  private async setLogLevel(client: Client): Promise<void> {
    if (!client.getServerCapabilities()?.logging) return
    try {
      await client.setLoggingLevel(this.logLevel, { timeout: this.requestTimeout })
    } catch (error) {
      if (this.client === client) this.logger.warn('MCP server "%s": cannot set its log level to %s: %s', this.name, this.logLevel, error instanceof Error ? error.message : error)
    }
  }

  private latest(): Running | undefined {
    return this.running[this.running.length - 1]
  }

  private makeTransport(): Transport {
    if (this.options.transport) return this.options.transport()
    return serverTransport(this.name, this.options.server, { grace: this.options.killGrace, logger: this.logger, authProvider: this.oauth, ...this.oauth ? { fetch: this.watchScope } : {} })
  }

  /**
   * The HTTP transport's fetch for a server with OAuth: it notes what a `403
   * insufficient_scope` asks for. The SDK reads the same header to step up on its own, but
   * when that needs a person (no refresh token) or a refresh brings no more scope, all a
   * call gets is an error: this is what the next authorization asks for.
   */
  private watchScope: FetchLike = async (url, init) => {
    const response = await fetch(url, init)
    if (response.status === 403) {
      const { error, scope, resourceMetadataUrl } = extractWWWAuthenticateParams(response)
      if (error === 'insufficient_scope') this.challenge = { ...scope ? { scope } : {}, ...resourceMetadataUrl ? { resourceMetadataUrl } : {} }
    }
    return response
  }

  /**
   * Whether `error` ended a request the server refused for too little scope, and with what
   * challenge: the SDK's "403 after trying upscoping" (a refresh brought no more), or its
   * `UnauthorizedError` after a 403 insufficient_scope (stepping up needs a person).
   */
  private stepUpOf(error: unknown): ScopeChallenge | undefined {
    if (error instanceof StreamableHTTPError && error.code === 403 && /upscoping/.test(error.message)) return this.challenge ?? {}
    if (error instanceof UnauthorizedError) return this.challenge
    return undefined
  }

  /**
   * The server refused the tokens (none yet, revoked past refreshing, or too little scope)
   * and the SDK made an authorization URL: a person has to act, so the tools go away and
   * nothing retries until `authorize`.
   */
  private async requireAuthorization(client: Client, transport: Transport): Promise<void> {
    this._status = 'needs-authorization'
    // The status says it; a last error is only what went wrong besides, or the scope a step-up asks for.
    this._lastError = this.stepUp ? `the server wants more scope${this.stepUp.scope ? ` (${this.stepUp.scope})` : ''} than the tokens have: authorizing again asks for it` : undefined
    if (this.authorizations >= MAX_AUTHORIZATIONS) {
      // Asking again would loop (the SDK's own step-up memory is per transport): a person
      // has to look at the server's scopes first. Whoever waits for a connection is told.
      this._lastError = `the server refused ${this.authorizations} authorizations in a row (it wants more scope than it grants?); check auth.scopes, then authorize again`
      this.logger.warn('MCP server "%s": %s', this.name, this._lastError)
      for (const { reject } of this.waiters.splice(0)) reject(new McpError('NEEDS_AUTHORIZATION', `MCP server "${this.name}": ${this._lastError}`))
    }
    this.unauthorized = transport as StreamableHTTPClientTransport
    if (this.client === client) {
      this.client = undefined
      this.transport = undefined
    }
    for (const { dispose } of this.imported.values()) dispose()
    this.imported.clear()
    client.onclose = undefined
    await client.close().catch(() => {})
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
      const key = JSON.stringify([tool.description, tool.inputSchema, tool.outputSchema, tool.execution, this.trusted ? tool.annotations : undefined])
      if (this.imported.get(name)?.key === key) continue
      // Converting the schema and defining the tool both refuse what Dogu cannot take (a
      // schema outside the converter's subset, args that are no object, a name another
      // plugin's tool holds): that tool is skipped, the others are imported.
      const previous = this.imported.get(name)
      this.imported.delete(name)
      previous?.dispose()
      try {
        const loosened: Loosening[] = []
        this.imported.set(name, { key, loosened, dispose: this.options.define(this.toolOptions(name, tool, loosened, this.asTask(tool, client))) })
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

  private toolOptions(name: string, tool: McpTool, loosened: Loosening[], asTask: boolean): ToolOptions {
    // A schema the converter refuses throws here, and the tool is skipped.
    const args = fromJsonSchema(tool.inputSchema as JsonSchema, { onLoosen: (loosening) => loosened.push(loosening) })
    const output = tool.outputSchema && this.outputOf(tool)
    return {
      name,
      description: tool.description || tool.title || `${tool.name} (MCP server ${this.name})`,
      args,
      ...(output ? { output } : {}),
      traits: { effect: this.trusted ? effectOf(tool.annotations) : 'exec', timeout: this.options.server.timeout ?? 180_000 },
      run: (input, call) => this.call(tool.name, input, call, asTask),
    }
  }

  /**
   * Whether a tool is called as a task: only when it requires it. Polling a task costs at
   * least the server's poll interval (a second, for a Dogu server) on every call; a plain
   * call that runs long moves to Dogu's background all the same.
   */
  private asTask(tool: McpTool, client: Client): boolean {
    return tool.execution?.taskSupport === 'required' && callsAsTask(tool, client.getServerCapabilities())
  }

  /**
   * A tool's `outputSchema` as its Dogu `output`, which checks `data` (the result's
   * `structuredContent`). One Dogu cannot read leaves the tool without it, with a warning:
   * the SDK still checks the result against the server's schema.
   */
  private outputOf(tool: McpTool): Schema | undefined {
    try {
      return fromJsonSchema(tool.outputSchema as JsonSchema)
    } catch (error) {
      this.logger.warn('MCP server "%s": tool %s is imported without its output schema: %s', this.name, tool.name, error instanceof Error ? error.message : error)
      return undefined
    }
  }

  /** Calls the server's tool: as a task (polled) when the tool and the server support it, else one `tools/call`. */
  private async call(tool: string, args: unknown, call: ToolCall, asTask: boolean) {
    const client = this.client
    if (!client) throw new Error(`the MCP server "${this.name}" is not connected (${this._status})`)
    // Its reason is what the server is told when it passes, as the SDK's own timer would say.
    const idle = asTask ? undefined : new IdleDeadline(this.requestTimeout, () => new SdkError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: this.requestTimeout }), call.signal)
    const running: Running = idle ? { call, idle } : { call }
    this.running.push(running)
    let result: Awaited<ReturnType<Client['callTool']>>
    try {
      // The call's span is the active context here (the tool runs inside it): its W3C trace
      // context rides in `_meta` (SEP-414), so the server's work joins the trace.
      const meta = traceMeta()
      const input = (args ?? {}) as Record<string, unknown>
      result = !idle
        ? await callImportedTask(client, tool, input, call, { server: this.name, requestTimeout: this.requestTimeout, ...(meta ? { meta } : {}) })
        : await client.callTool({ name: tool, arguments: input, ...(meta ? { _meta: meta } : {}) }, undefined, {
          signal: idle.signal,
          timeout: NO_SDK_TIMEOUT,
          onprogress: ({ progress, total, message }) => {
            idle.touch()
            call.progress(message ?? (total ? `${progress}/${total}` : String(progress)))
          },
        })
    } catch (error) {
      // The SDK reports an abort and a timeout alike; the call's signal says which it was,
      // and the pipeline already knows whether it was cancelled or timed out.
      if (call.signal.aborted) throw call.signal.reason ?? error
      if (idle?.expired || (error instanceof SdkError && error.code === ErrorCode.RequestTimeout)) {
        throw new Error(`the MCP server "${this.name}" sent neither a result nor progress for ${this.requestTimeout} ms`)
      }
      const stepUp = this.stepUpOf(error)
      if ((error instanceof UnauthorizedError || stepUp) && this.oauth && this.transport) {
        if (stepUp) this.stepUp = stepUp
        const transport = this.transport
        // Once this call has settled: removing its tool now would end it `cancelled`, without this reason.
        setImmediate(() => {
          if (this.client === client && this._status !== 'closed') void this.requireAuthorization(client, transport)
        })
        const why = stepUp ? `more scope${stepUp.scope ? `: ${stepUp.scope}` : ''}` : 'its tokens were refused or revoked'
        throw new Error(`the MCP server "${this.name}" needs authorization (${why}); an operator can authorize it in the console's MCP servers view`)
      }
      // Over HTTP nothing closes when a server goes away or restarts: a request that fails
      // below the protocol (refused, or 404 for a session it forgot) is how the drop shows.
      if (!(error instanceof SdkError) && this.options.server.url !== undefined) {
        this.dropped(client)
        throw new Error(`the MCP server "${this.name}" could not be reached (${error instanceof Error ? error.message : String(error)}); reconnecting`)
      }
      throw error
    } finally {
      idle?.dispose()
      this.running.splice(this.running.indexOf(running), 1)
    }
    return fromCallToolResult(result as never, call, this.trusted)
  }
}
