import {
  type AnswerResult,
  type Approver,
  type AuditFilter,
  type AuditRecord,
  type AskedMessage,
  askedMessage,
  type BackgroundTask,
  type Dialect,
  type Grant,
  type InputQuestion,
  type ListTasksOptions,
  type MaxRunning,
  PERMISSION_MODES,
  type PermissionMode,
  type PermissionRequest,
  type QuotaStatus,
  type RevisionRefusal,
  type Session,
  type Tool,
  type ToolRegistry,
  type ToolResult,
  ToolSearchIndex,
  type ToolSource,
  TOOL_STATUSES,
  type ToolStatus,
} from '@dogu/core'
import type { ChangeLog, FileChange, UndoOutcome } from '@dogu/fs'
import Schema from 'schemastery'
import type { ConsoleAsker } from './console-asker'
import { ConsoleError, refusedEdit } from './console-error'
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
  asker: Pick<ConsoleAsker, 'list' | 'answer' | 'carryOut' | 'fill'>
  log: ConsoleLog
  /** The audit trail the Log view reads (`ctx.audit`); a getter, as the service may come and go. */
  audit?: ConsoleAuditSource
  /** The operator's authority: calls run with it, whoever they impersonate. */
  authority: number
}

/** What the console reads of an audit trail: `ctx.audit` on Cordis and Koishi. Records come newest first. */
export interface ConsoleAuditSource {
  query(filter: AuditFilter): Promise<AuditRecord[]>
}

/** One page of `audit.list`: records newest first; `next`, when older ones match, is the `before` of the next page. */
export interface AuditPage {
  records: AuditRecord[]
  next?: string
}

/** The most records one `audit.list` page holds. */
export const MAX_AUDIT_PAGE = 200

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

/**
 * What an approver may edit on a pending question, as the console sends it: the arguments'
 * schemastery JSON (`schema`, what `ToolForm` renders), a line to show, and the call's
 * arguments to start from, secret fields as `••••` (left so, they keep their value).
 */
export interface EditableInput {
  schema: unknown
  message?: string
  initial?: unknown
}

/** A pending question as `approvals.list` sends it. */
export type PendingRequest = Omit<Readonly<PermissionRequest>, 'input'> & { message?: AskedMessage; input?: EditableInput }

/** What `call` returns: the result the model would get, with what led to it. */
export interface CallOutcome {
  session: Session
  result: ToolResult
  progress: string[]
}

export type FileChangeSummary = Omit<FileChange, 'prior'>

/** What `quotas.list` returns for one session: every quota that applies to it, and the caps on running calls. */
export interface SessionQuotas {
  session: Session
  quotas: QuotaStatus[]
  maxRunning: MaxRunning
}

/** One source of tools (an imported MCP server) as `sources.list` sends it. */
export interface SourceSummary {
  kind: string
  name: string
  /** `connected`, `connecting`, `reconnecting`, `needs-authorization` or `closed`. */
  status: string
  /** The Dogu names of its tools now; none while it is not connected. */
  tools: string[]
  toolCount: number
  lastError?: string
  /** A person has to authorize it (`sources.authorize`) before it has tools. */
  needsAuthorization: boolean
}

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
    // `input`: what an approver may edit, as JSON (never its `check`; secrets stay masked).
    run: (host): PendingRequest[] => host.asker.list().map((request) => {
      const message = askedMessage(request)
      const { input, ...rest } = request
      return { ...rest, ...(message ? { message } : {}), ...(input ? { input: editableInput(input) } : {}) }
    }),
  }),
  'approvals.answer': method({
    kind: 'write',
    payload: Schema.object({
      id: ID.required(),
      decision: Schema.union(['allow', 'deny'] as const).required(),
      scope: Schema.union(['once', 'session', 'always'] as const).default('once'),
      reason: Schema.string().max(500),
      // With `allow`: the call's edited arguments, for a question that offers an edit (`input`);
      // for a tool's form (`kind: 'elicitation'`), its values.
      value: Schema.any(),
      // With `deny`, on a tool's form: closed unanswered (the tool reads `cancel`, not `decline`).
      dismissed: Schema.boolean(),
    }),
    run(host, { id, decision, scope, reason, value, dismissed }, { operator }) {
      const closed = () => new ConsoleError('NOT_FOUND', `question ${id} is not waiting: it was answered elsewhere, timed out or never existed`)
      const form = host.asker.list().find((entry) => entry.id === id && entry.kind === 'elicitation')
      if (form) return fillForm(host, form, { decision, value, dismissed }, operator, closed)
      if (dismissed) throw new ConsoleError('INVALID_PAYLOAD', 'approvals.answer: `dismissed` closes a tool\'s form; a permission question is allowed or denied')
      // Asked again after a restart: the answer is carried out (claimed, authorized again, run
      // as a background task) before the page hears what came of it.
      const restored = host.asker.list().find((entry) => entry.id === id)
      if (restored?.restored) {
        if (value !== undefined) {
          const why = restored.input ? restored.input.check(value) : `question ${id} offers no edit: approve or deny the call as it is`
          if (why !== undefined) throw refusedEdit(why, restored.input && refusalOf(restored.input, value))
        }
        return host.asker.carryOut(id, decision, scope, reason, operator, value).then((result) => restoredAnswer(result, closed))
      }
      if (value === undefined) {
        const status = host.asker.answer(id, decision, scope, reason, operator)
        if (status === 'closed') throw closed()
        return { status }
      }
      // An edit is checked first, so a refusal says why; the question keeps waiting.
      const request = host.asker.list().find((entry) => entry.id === id)
      if (!request) throw closed()
      if (decision !== 'allow') throw new ConsoleError('INVALID_EDIT', 'edited arguments go with an approval (allow), not a denial')
      if (!request.input) throw new ConsoleError('INVALID_EDIT', `question ${id} offers no edit: approve or deny the call as it is`)
      const why = request.input.check(value)
      if (why !== undefined) throw refusedEdit(why, refusalOf(request.input, value))
      const status = host.asker.answer(id, decision, scope, reason, operator, value)
      if (status === 'closed') throw closed()
      if (status === 'invalid') throw new ConsoleError('INVALID_EDIT', 'the edited arguments do not pass the tool\'s validation')
      if (status === 'not-allowed') throw new ConsoleError('NOT_ALLOWED', 'you may not approve this edited call: it falls under approvers you are not among')
      return { status }
    },
  }),
  /**
   * An edit as the call would run with it, before it is approved: the arguments after the
   * tool's validation (defaults filled in, secrets `••••`) and what changed. The edit form
   * shows it under the changes, so the person approves what runs, not only what they typed.
   */
  'approvals.resolve': method({
    kind: 'read',
    payload: Schema.object({ id: ID.required(), value: Schema.any() }),
    run(host, { id, value }) {
      const request = host.asker.list().find((entry) => entry.id === id && entry.kind !== 'elicitation')
      if (!request) throw new ConsoleError('NOT_FOUND', `question ${id} is not waiting: it was answered elsewhere, timed out or never existed`)
      if (!request.input?.resolve) throw new ConsoleError('INVALID_EDIT', `question ${id} offers no edit: approve or deny the call as it is`)
      const resolved = request.input.resolve(value)
      if ('error' in resolved) throw refusedEdit(resolved.error, resolved.refusal)
      return { args: resolved.args, changes: [...resolved.changes] }
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
  'quotas.list': method({
    kind: 'read',
    payload: Schema.object({
      sessionId: ID.required(),
      userId: ID,
      channelId: ID,
      guildId: ID,
      // A chat user's session is theirs on their platform: without one, the console's own.
      platform: ID,
    }),
    async run(host, { sessionId, userId, channelId, guildId, platform }, { operator }): Promise<SessionQuotas> {
      const session: Session = {
        ...consoleSession(host, operator, sessionId, userId),
        ...(platform ? { platform } : {}),
        ...(channelId ? { channelId } : {}),
        ...(guildId ? { guildId } : {}),
      }
      return { session, quotas: await host.registry.quotas.status(session), maxRunning: { ...host.registry.caps.config } }
    },
  }),
  'log.list': method({
    kind: 'read',
    payload: Schema.object({ since: Schema.natural().default(0) }),
    run: (host, { since }): LogEntry[] => host.log.list(since),
  }),
  'audit.list': method({
    kind: 'read',
    payload: Schema.object({
      // `platform:id` or a bare user id, as `ctx.audit.query` takes it.
      user: Schema.string().min(1).max(200),
      tool: ID,
      outcome: Schema.union([Schema.union(TOOL_STATUSES), Schema.array(Schema.union(TOOL_STATUSES)).min(1)]),
      limit: Schema.natural().min(1).max(MAX_AUDIT_PAGE).default(50),
      // The `next` of the page before: this page starts after that record.
      before: ID,
    }),
    run: (host, payload) => auditPage(audit(host), payload),
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
  'sources.list': method({
    kind: 'read',
    payload: Schema.object({}),
    run: (host): SourceSummary[] => host.registry.sources().map(summarizeSource),
  }),
  'sources.authorize': method({
    kind: 'write',
    payload: Schema.object({ kind: ID.required(), name: ID.required() }),
    // The URL is bound to this operator: only they can complete it (`sources.complete`).
    async run(host, { kind, name }, { operator }): Promise<{ url: string }> {
      const source = host.registry.sources().find((entry) => entry.kind === kind && entry.name === name)
      if (!source) throw new ConsoleError('NOT_FOUND', `no ${kind} source named "${name}"`)
      if (!source.startAuthorization) throw new ConsoleError('INVALID_AUTHORIZATION', `${kind} source "${name}" has no authorization to start (no auth in its config)`)
      if (!source.needsAuthorization) throw new ConsoleError('INVALID_AUTHORIZATION', `${kind} source "${name}" does not need authorization (it is ${source.status})`)
      try {
        return { url: await source.startAuthorization(operatorId(operator)) }
      } catch (error) {
        throw new ConsoleError('AUTHORIZATION_FAILED', `${kind} source "${name}": ${error instanceof Error ? error.message : String(error)}`)
      }
    },
  }),
  'sources.complete': method({
    kind: 'write',
    // What the authorization server's redirect brought to the console's callback page.
    payload: Schema.object({ code: Schema.string().min(1).max(4096).required(), state: Schema.string().min(1).max(512).required() }),
    async run(host, { code, state }, { operator }): Promise<{ kind: string; name: string; status: string }> {
      const by = operatorId(operator)
      for (const source of host.registry.sources()) {
        if (!source.authorize) continue
        try {
          await source.authorize(code, state, by)
        } catch (error) {
          // Not this source's state (or not this operator's): the next may own it.
          if (isForeignState(error)) continue
          throw new ConsoleError('AUTHORIZATION_FAILED', `${source.kind} source "${source.name}": ${error instanceof Error ? error.message : String(error)}`)
        }
        return { kind: source.kind, name: source.name, status: source.status }
      }
      throw new ConsoleError('INVALID_AUTHORIZATION', 'no authorization with this state is under way (it was completed already, started by another operator, replaced by a newer one, or never started)')
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

/**
 * Answers a tool's form: `allow` with its values, checked first so a refusal says why (the
 * form keeps waiting); `deny` declines, `deny` with `dismissed` closes it unanswered.
 */
function fillForm(host: ConsoleHost, request: Readonly<PermissionRequest>, answer: { decision: 'allow' | 'deny'; value?: unknown; dismissed?: boolean }, operator: Approver | undefined, closed: () => ConsoleError) {
  const { id } = request
  if (answer.decision === 'deny') {
    const status = host.asker.fill(id, answer.dismissed ? { dismiss: true } : { decline: true }, operator)
    if (status === 'closed') throw closed()
    if (status === 'not-allowed') throw new ConsoleError('NOT_ALLOWED', 'you may not answer this form')
    return { status }
  }
  if (answer.value === undefined) throw new ConsoleError('INVALID_FORM', `question ${id} is a tool's form: send its values (value) to fill it, or deny to decline`)
  const why = request.input?.check(answer.value)
  if (why !== undefined) throw new ConsoleError('INVALID_FORM', why)
  const status = host.asker.fill(id, { value: answer.value }, operator)
  if (status === 'closed') throw closed()
  if (status === 'invalid') throw new ConsoleError('INVALID_FORM', 'the values do not fit the form')
  if (status === 'not-allowed') throw new ConsoleError('NOT_ALLOWED', 'you may not answer this form')
  return { status }
}

function summarizeSource(source: ToolSource): SourceSummary {
  return {
    kind: source.kind,
    name: source.name,
    status: source.status,
    tools: [...source.tools],
    toolCount: source.tools.length,
    ...(source.lastError !== undefined ? { lastError: source.lastError } : {}),
    needsAuthorization: source.needsAuthorization === true,
  }
}

/**
 * Who starts and completes an authorization: the logged-in user a transport names, or the
 * standalone console's one operator (the id its asker answers as).
 */
function operatorId(operator: Approver | undefined): string {
  if (!operator) return CONSOLE_PLATFORM
  // `console:admin`, as the chat's `dogu.mcp.auth` binds `discord:42`: one namespace, no clash.
  return operator.platform ? `${operator.platform}:${operator.id}` : operator.id
}

/** Why an edit is refused, in the structured form a page renders in its locale (`InputQuestion.resolve`'s refusal). */
function refusalOf(input: InputQuestion, value: unknown): RevisionRefusal | undefined {
  const resolved = input.resolve?.(value)
  return resolved && 'error' in resolved ? resolved.refusal : undefined
}

/** What `approvals.answer` says of an answer to a restored question: the started task, or why it did not count. */
function restoredAnswer(result: AnswerResult, closed: () => ConsoleError): { status: 'accepted'; taskId?: string; reason?: string } {
  switch (result.status) {
    case 'accepted': return { status: 'accepted', ...(result.taskId ? { taskId: result.taskId } : {}), ...(result.reason ? { reason: result.reason } : {}) }
    case 'closed': throw closed()
    case 'invalid': throw new ConsoleError('INVALID_EDIT', result.reason ?? 'the edited arguments do not pass the tool\'s validation')
    case 'not-allowed': throw new ConsoleError('NOT_ALLOWED', result.reason ?? 'you may not answer this question')
    case 'taken': throw new ConsoleError('REFUSED', `it was already answered${result.by ? ` by ${result.by}` : ''}`)
    default: throw new ConsoleError('REFUSED', result.reason ?? result.status)
  }
}

/**
 * A source refuses a state that is not its own with a coded `INVALID_AUTHORIZATION`
 * (`McpError` of `@dogu/mcp`, which the console does not depend on): matched by code.
 */
function isForeignState(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'INVALID_AUTHORIZATION'
}

function editableInput(input: Readonly<InputQuestion>): EditableInput {
  return {
    schema: input.schema.toJSON(),
    ...(input.message !== undefined ? { message: input.message } : {}),
    ...(input.initial !== undefined ? { initial: input.initial } : {}),
  }
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

function audit(host: ConsoleHost): ConsoleAuditSource {
  if (!host.audit) throw new ConsoleError('UNAVAILABLE', 'the audit service is not loaded')
  return host.audit
}

/**
 * One page of records matching the filter, newest first. The cursor is a record id, not a
 * time: records come in the order they were recorded (at a call's end), which is not the
 * order of `at` (its start), so a time would skip or repeat records. Records recorded since
 * the first page only come before the cursor: a page never repeats or skips one.
 */
async function auditPage(source: ConsoleAuditSource, request: { user?: string; tool?: string; outcome?: ToolStatus | ToolStatus[]; limit: number; before?: string }): Promise<AuditPage> {
  const { limit, before } = request
  const filter: AuditFilter = {
    ...(request.user !== undefined ? { user: request.user } : {}),
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.outcome !== undefined ? { outcome: request.outcome } : {}),
  }
  // One more than the page, to tell whether older records match.
  for (let want = before === undefined ? limit + 1 : 4 * (limit + 1); ; want *= 4) {
    const records = await source.query({ ...filter, limit: want })
    const start = before === undefined ? 0 : records.findIndex((record) => record.id === before) + 1
    const exhausted = records.length < want
    if (before !== undefined && start === 0) {
      if (exhausted) throw new ConsoleError('NOT_FOUND', `audit record ${before} is not in the log for this filter (removed by retention?): load the newest records again`)
      continue
    }
    if (records.length > start + limit || exhausted) {
      const page = records.slice(start, start + limit)
      return records.length > start + limit ? { records: page, next: page.at(-1)!.id } : { records: page }
    }
  }
}

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new ConsoleError('NOT_FOUND', `no ${what}`)
  return value
}
