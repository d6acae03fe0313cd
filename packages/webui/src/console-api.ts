import {
  type Approver,
  type AskedMessage,
  askedMessage,
  type BackgroundTask,
  type Dialect,
  type Grant,
  type ListTasksOptions,
  PERMISSION_MODES,
  type PermissionMode,
  type PermissionRequest,
  type Session,
  type Tool,
  type ToolRegistry,
  type ToolResult,
  ToolSearchIndex,
} from '@dogu/core'
import type { ChangeLog, FileChange, UndoOutcome } from '@dogu/fs'
import Schema from 'schemastery'
import type { ConsoleAsker } from './console-asker'
import { ConsoleError } from './console-error'
import type { ConsoleLog, LogEntry } from './console-log'

/** The platform of every session the console calls as: rules and answers can tell it apart. */
export const CONSOLE_PLATFORM = 'webui'

const DIALECTS: readonly Dialect[] = ['openai', 'anthropic', 'gemini', 'json']

/** What the console reads and drives. On Cordis these are `ctx.tools`, `ctx.permissions`, `ctx.background`. */
export interface ConsoleHost {
  registry: ToolRegistry
  permissions?: {
    grants(): Readonly<Grant>[]
    revoke(id: string): boolean
    setMode(sessionId: string, mode: PermissionMode | undefined): void
    modeOf(sessionId: string): PermissionMode
  }
  background?: {
    list(options?: ListTasksOptions): BackgroundTask[]
    wait(id: string, options: { timeout: number; signal?: AbortSignal }): Promise<BackgroundTask | undefined>
    cancel(id: string, reason?: string): Promise<BackgroundTask | undefined>
  }
  /** `@dogu/fs` change logs whose changes the console lists and undoes. */
  changeLogs(): Iterable<ChangeLog>
  asker: Pick<ConsoleAsker, 'list' | 'answer'>
  log: ConsoleLog
  /** The operator's authority: calls run with it, whoever they impersonate. */
  authority: number
}

/** How one request reached the API. */
export interface ConsoleRequestOptions {
  signal?: AbortSignal
  /**
   * Who sent it, when the transport knows (Koishi's console: the logged-in user). Calls
   * run with this authority and answers are given as this approver; without it, the
   * host's `authority` and the asker's own operator.
   */
  operator?: Approver
}

/** One tool as the console lists it. `schema` is the schemastery JSON its form is made from. */
export interface ToolSummary {
  name: string
  description: string
  effect: Tool['traits']['effect']
  groups: readonly string[]
  owner?: string
  mode: Tool['mode']
  timeout: number
  confirm?: 'always'
  schema: unknown
}

/** What `call` returns: the result the model would get, with what led to it. */
export interface CallOutcome {
  session: Session
  result: ToolResult
  progress: string[]
}

export type FileChangeSummary = Omit<FileChange, 'prior'>

interface Method<P, R> {
  /** `write` methods change state: POST only. */
  kind: 'read' | 'write'
  payload: Schema<any, P>
  run(host: ConsoleHost, payload: P, context: { signal?: AbortSignal; operator?: Approver; progress: Map<string, string[]> }): R | Promise<R>
}

const method = <P, R>(m: Method<P, R>) => m

const ID = Schema.string().min(1).max(200)

/**
 * Every method of the console's API, by name. The same table serves the HTTP routes of
 * the standalone host and any other transport (Koishi's console): `send(method, payload)`.
 */
const METHODS = {
  'tools.list': method({
    kind: 'read',
    payload: Schema.object({}),
    run: (host): ToolSummary[] => host.registry.list().map((tool) => summarize(host, tool)),
  }),
  'tools.search': method({
    kind: 'read',
    payload: Schema.object({ query: Schema.string().required(), limit: Schema.natural().min(1).max(100).default(10) }),
    run(host, { query, limit }) {
      const index = new ToolSearchIndex()
      for (const tool of host.registry.list()) index.add(tool)
      return index.search(query, { limit })
    },
  }),
  definitions: method({
    kind: 'read',
    payload: Schema.object({ tool: ID.required(), sessionId: ID.default('webui'), locale: Schema.string() }),
    run(host, { tool: name, sessionId, locale }, { operator }) {
      const tool = requireTool(host, name)
      const toolset = host.registry.toolset({ session: consoleSession(host, operator, sessionId), include: [name], groups: [...tool.groups], locale })
      if (!toolset.has(name)) throw new ConsoleError('NOT_FOUND', `tool "${name}" is hidden from session "${sessionId}"`)
      const result: Record<string, { definition: unknown; loosened: unknown[] }> = {}
      for (const dialect of DIALECTS) {
        result[dialect] = { definition: toolset.definitions(dialect)[0], loosened: [...toolset.loosened(dialect)[name] ?? []] }
      }
      return result
    },
  }),
  call: method({
    kind: 'write',
    payload: Schema.object({
      tool: ID.required(),
      // An object, or JSON text as a model would send it (even text the form would refuse).
      args: Schema.union([Schema.dict(Schema.any()), String]),
      sessionId: ID.required(),
      userId: ID,
    }),
    async run(host, { tool: name, args, sessionId, userId }, { signal, operator, progress }): Promise<CallOutcome> {
      const tool = host.registry.get(name)
      const session = consoleSession(host, operator, sessionId, userId)
      const toolset = host.registry.toolset({ session, include: [name], groups: tool ? [...tool.groups] : [] })
      const id = `webui_${globalThis.crypto.randomUUID()}`
      const lines: string[] = []
      progress.set(id, lines)
      try {
        const [result] = await toolset.execute([{ id, name, arguments: args as Record<string, unknown> | string | undefined }], { signal })
        return { session, result, progress: lines }
      } finally {
        progress.delete(id)
      }
    },
  }),
  'approvals.list': method({
    kind: 'read',
    payload: Schema.object({}),
    // `message`: why it asks, for the page to word in its language (`reason` is English).
    run: (host): (Readonly<PermissionRequest> & { message?: AskedMessage })[] => host.asker.list().map((request) => {
      const message = askedMessage(request)
      return message ? { ...request, message } : request
    }),
  }),
  'approvals.answer': method({
    kind: 'write',
    payload: Schema.object({
      id: ID.required(),
      decision: Schema.union(['allow', 'deny'] as const).required(),
      scope: Schema.union(['once', 'session', 'always'] as const).default('once'),
      reason: Schema.string().max(500),
    }),
    run(host, { id, decision, scope, reason }, { operator }) {
      const status = host.asker.answer(id, decision, scope, reason, operator)
      if (status === 'closed') throw new ConsoleError('NOT_FOUND', `question ${id} is not waiting: it was answered elsewhere, timed out or never existed`)
      return { status }
    },
  }),
  'tasks.list': method({
    kind: 'read',
    payload: Schema.object({ sessionId: ID }),
    run: (host, { sessionId }) => background(host).list(sessionId ? { session: sessionId } : {}),
  }),
  'tasks.wait': method({
    kind: 'write',
    payload: Schema.object({ id: ID.required(), timeout: Schema.natural().max(60_000).default(10_000) }),
    async run(host, { id, timeout }, { signal }) {
      return found(await background(host).wait(id, { timeout, signal }), `task ${id}`)
    },
  }),
  'tasks.cancel': method({
    kind: 'write',
    payload: Schema.object({ id: ID.required() }),
    async run(host, { id }) {
      return found(await background(host).cancel(id, 'cancelled from the console'), `task ${id}`)
    },
  }),
  'grants.list': method({
    kind: 'read',
    payload: Schema.object({}),
    run: (host) => permissions(host).grants(),
  }),
  'grants.revoke': method({
    kind: 'write',
    payload: Schema.object({ id: ID.required() }),
    run(host, { id }) {
      if (!permissions(host).revoke(id)) throw new ConsoleError('NOT_FOUND', `no grant with id ${id}`)
      return { revoked: id }
    },
  }),
  'modes.get': method({
    kind: 'read',
    payload: Schema.object({ sessionId: ID.required() }),
    run: (host, { sessionId }) => ({ sessionId, mode: permissions(host).modeOf(sessionId), modes: Object.keys(PERMISSION_MODES) }),
  }),
  'modes.set': method({
    kind: 'write',
    payload: Schema.object({
      sessionId: ID.required(),
      // `null` returns the session to the configured mode.
      mode: Schema.union([...Object.keys(PERMISSION_MODES) as PermissionMode[], Schema.const(null)]).required(),
    }),
    run(host, { sessionId, mode }) {
      permissions(host).setMode(sessionId, mode ?? undefined)
      return { sessionId, mode: permissions(host).modeOf(sessionId) }
    },
  }),
  'log.list': method({
    kind: 'read',
    payload: Schema.object({ since: Schema.natural().default(0) }),
    run: (host, { since }): LogEntry[] => host.log.list(since),
  }),
  'changes.list': method({
    kind: 'read',
    payload: Schema.object({}),
    run(host): FileChangeSummary[] {
      const changes: FileChangeSummary[] = []
      for (const log of host.changeLogs()) {
        for (const { prior: _, ...change } of log.list()) changes.push(change)
      }
      return changes.sort((a, b) => (a.createdAt as number) - (b.createdAt as number))
    },
  }),
  'changes.undo': method({
    kind: 'write',
    payload: Schema.object({ id: ID.required() }),
    async run(host, { id }): Promise<UndoOutcome> {
      for (const log of host.changeLogs()) {
        if (log.get(id)) return (await log.undo(id))[0]
      }
      throw new ConsoleError('NOT_FOUND', `no file change with id ${id}`)
    },
  }),
} satisfies Record<string, Method<any, any>>

/** A method name of the console API. */
export type ConsoleMethod = keyof typeof METHODS

/**
 * Runs console methods against a host. Payloads are untrusted: each is checked against its
 * method's schema first, and a bad one is an `INVALID_PAYLOAD` naming the field.
 */
export class ConsoleApi {
  /** Progress lines of the console's own calls in flight, by call id. */
  private progress = new Map<string, string[]>()

  constructor(private host: ConsoleHost) {}

  /** True when `name` is a method that only reads. */
  static isRead(name: string): boolean {
    return Object.hasOwn(METHODS, name) && METHODS[name as ConsoleMethod].kind === 'read'
  }

  static has(name: string): name is ConsoleMethod {
    return Object.hasOwn(METHODS, name)
  }

  /** Every method name, for a transport that registers one handler per method (Koishi's console). */
  static methods(): ConsoleMethod[] {
    return Object.keys(METHODS) as ConsoleMethod[]
  }

  /** Records a progress line of a call, when the call is one of the console's. */
  onProgress(callId: string, message: string): void {
    this.progress.get(callId)?.push(message)
  }

  async handle(name: string, payload: unknown, options: ConsoleRequestOptions = {}): Promise<unknown> {
    if (!ConsoleApi.has(name)) throw new ConsoleError('UNKNOWN_METHOD', `no console method "${name}"`)
    const entry = METHODS[name] as Method<unknown, unknown>
    let checked: unknown
    try {
      checked = entry.payload(payload ?? {})
    } catch (error) {
      throw new ConsoleError('INVALID_PAYLOAD', `${name}: ${error instanceof Error ? error.message : String(error)}`)
    }
    return entry.run(this.host, checked, { signal: options.signal, operator: options.operator, progress: this.progress })
  }
}

function summarize(host: ConsoleHost, tool: Tool): ToolSummary {
  return {
    name: tool.name,
    description: tool.description,
    effect: tool.traits.effect,
    groups: tool.groups,
    owner: host.registry.ownerOf(tool.name),
    mode: tool.mode,
    timeout: tool.traits.timeout,
    ...(tool.confirm ? { confirm: tool.confirm } : {}),
    schema: tool.args.toJSON(),
  }
}

/** The session a console call runs as: the chosen ids, the operator's authority, the console's platform. */
function consoleSession(host: ConsoleHost, operator: Approver | undefined, id: string, userId?: string): Session {
  return { id, ...(userId ? { userId } : {}), platform: CONSOLE_PLATFORM, authority: operator?.authority ?? host.authority }
}

function requireTool(host: ConsoleHost, name: string): Tool {
  const tool = host.registry.get(name)
  if (!tool) throw new ConsoleError('NOT_FOUND', `no tool named "${name}"`)
  return tool
}

function permissions(host: ConsoleHost): NonNullable<ConsoleHost['permissions']> {
  if (!host.permissions) throw new ConsoleError('UNAVAILABLE', 'the permissions service is not loaded')
  return host.permissions
}

function background(host: ConsoleHost): NonNullable<ConsoleHost['background']> {
  if (!host.background) throw new ConsoleError('UNAVAILABLE', 'the background service is not loaded')
  return host.background
}

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new ConsoleError('NOT_FOUND', `no ${what}`)
  return value
}
