import type { BackgroundTask } from '../background/background-task'
import { CALL_SERIAL, type CallInfo } from '../events'
import { type Logger, silentLogger } from '../logger'
import type { DecisionEvent, DecisionSource } from '../permissions/permission-decision'
import { messageOf } from '../error-message'
import type { Session } from '../session'
import type { ToolResult, ToolResultCode, ToolStatus } from '../tool-result'
import {
  type AuditAsk,
  type AuditCaller,
  type AuditDecider,
  type AuditFilter,
  type AuditRecord,
  type AuditRetention,
  DEFAULT_AUDIT_RETENTION,
} from './audit-record'
import { type AuditStore, MemoryAuditStore } from './audit-store'
import { keepNewest } from './retention-order'
import { canonicalJson, sha256 } from './canonical-json'

export interface AuditLogOptions {
  /** Where records persist. @default a MemoryAuditStore (forgotten on restart) */
  store?: AuditStore
  /**
   * Record a sha256 of the arguments' canonical JSON instead of the arguments: `true` for
   * every tool, or the names of the tools whose arguments are hashed. @default false
   */
  hashArguments?: boolean | readonly string[]
  /** @default 10_000 */
  maxRecords?: number
  /** @default 30 days */
  maxAgeMs?: number
  /** Arguments whose JSON is longer than this many characters are hashed instead. @default 16_384 */
  maxArgumentsLength?: number
  /** Milliseconds records wait in the queue before they are written. @default 200 */
  flushInterval?: number
  /** Records queued that trigger a write at once. @default 100 */
  batchSize?: number
  logger?: Logger
}

type Preset = Omit<AuditRecord, 'id' | 'argsHash'> & { id?: string }

/**
 * A record as the engine queues it: finished (hash, id) off the call's path, when written.
 * A class with every field set in its constructor: all drafts share one shape, so the call
 * path's stores into them stay monomorphic, whatever a call carried.
 */
class Draft {
  decided: DecisionSource | undefined = undefined
  ask: AuditAsk | undefined = undefined
  code: ToolResultCode | undefined = undefined
  reason: string | undefined = undefined
  taskId: string | undefined = undefined
  waitMs: number | undefined = undefined
  repaired: ToolResult['repaired'] = undefined
  /** Set once finished: a write that failed keeps it for the next. */
  record: AuditRecord | undefined = undefined
  /** The call ended before its authorization (`AuditRecord.early`). */
  early = false
  /** The calls an early draft stands for (`AuditRecord.count`). */
  count = 1

  constructor(
    readonly at: number,
    /**
     * `endedAt - at`: a small integer the draft holds inline, where a second timestamp would
     * be one more boxed number per queued record for the collector to copy. A coalesced
     * draft's grows to its last call's end.
     */
    public elapsed: number,
    readonly tool: string,
    readonly callId: string,
    readonly args: unknown,
    readonly session: Session | undefined,
    readonly outcome: ToolStatus,
    readonly durationMs: number,
    /** A record a host assembled (`record()`): only its id and arguments are finished. */
    readonly preset: Preset | undefined = undefined,
  ) {}
}

/** What the decision events of one call said, until the call ends. */
interface Pending {
  decided?: DecisionSource
  ask?: AuditAsk
  reason?: string
  /** The call's session and model id: how a call end that carries no serial finds it. */
  sessionId: string | undefined
  callId: string
}

/** A source that decided without asking anyone (an authorize, or an approve a grant settled first). */
function decides(kind: DecisionSource['kind']): boolean {
  return kind === 'rule' || kind === 'grant' || kind === 'mode' || kind === 'default' || kind === 'middleware' || kind === 'quota'
}
/** What a call carries that the pipeline made: its own identity (`CALL_SERIAL`). */
interface Serialed {
  [CALL_SERIAL]?: number
}

/** How a call's decisions are found at its end: the pipeline's serial, else session and model id. */
type CallKey = number | string

/** Calls whose decisions are held awaiting their end; beyond it the oldest are dropped. */
const MAX_PENDING = 10_000
/** A store is pruned at least this often while records are written. */
const PRUNE_INTERVAL = 60 * 60 * 1000

/**
 * The audit trail's host-free engine: one record per tool call, assembled from the call's
 * `permissions/decision` events and its `tools/call-end`, plus records for denials no call
 * carried. Recording costs the call a few property reads and a push; the records are
 * finished (ids, hashes) and written in batches, off the call's path, every
 * `flushInterval` ms or `batchSize` records, and on `flush()` / `stop()`.
 *
 * Like the permission engine, it outlives its stores: `useStore` switches where records go
 * (a database arriving late) under the living log; writes already started finish on the
 * old store, the queue goes to the new one.
 */
export class AuditLog {
  readonly logger: Logger
  readonly retention: Readonly<AuditRetention>
  /** Resolves once the first store is opened and pruned. */
  readonly ready: Promise<void>
  private store: AuditStore
  private queue: Draft[] = []
  /** The queue's early drafts, by what coalesces them (`coalescingKey`): later refusals add to their count. */
  private earlyDrafts = new Map<string, Draft>()
  /**
   * Decisions by call: keyed by the pipeline's own identity of the call (`CALL_SERIAL`), so two
   * calls of a batch with the same model id keep their own; by session and model id for a
   * request that does not carry it (a host's own gate or events).
   */
  private pending = new Map<CallKey, Pending>()
  /** How many calls are held by session and model id (in `pending` or as the latest). */
  private loose = 0
  /**
   * The latest call's decisions, outside the map and in fields of the log, not an object: a
   * call is usually decided and ended before the next is decided, and then nothing is
   * allocated and no map is touched. A second call's decision moves it to the map.
   * `lastKey` is undefined while no call is held here.
   */
  private lastKey: CallKey | undefined
  private lastSessionId: string | undefined
  private lastCallId: string | undefined
  private lastDecided: DecisionSource | undefined
  private lastAsk: AuditAsk | undefined
  private lastReason: string | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  /** Every store operation, in order: appends, prunes, switches. Never rejects. */
  private writing: Promise<void>
  private stopped = false
  private urgent = false
  private failing = false
  private sincePrune = 0
  private lastPrune = 0
  private readonly hashAll: boolean
  private readonly hashed: ReadonlySet<string>
  private readonly maxArgumentsLength: number
  private readonly flushInterval: number
  private readonly batchSize: number
  private readonly flushNow = () => { void this.flush() }
  /** A full batch's write: the timer stays armed for the records after it (no re-arm per batch). */
  private readonly flushBatch = () => {
    this.urgent = false
    this.startWrite()
  }
  /** Ids are this log's random prefix and a counter: unique across instances, cheap per record. */
  private readonly idPrefix = `aud_${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 16)}_`
  private sequence = 0
  /** Records of one session, or decided by one rule, share the caller's and the decider's objects. */
  private callers = new WeakMap<object, AuditCaller>()
  private deciders = new WeakMap<object, AuditDecider | undefined>()

  constructor(options: AuditLogOptions = {}) {
    const { hashArguments = false } = options
    if (typeof hashArguments !== 'boolean' && !(Array.isArray(hashArguments) && hashArguments.every((name) => typeof name === 'string'))) {
      throw new TypeError('hashArguments must be a boolean or a list of tool names')
    }
    this.hashAll = hashArguments === true
    this.hashed = new Set(Array.isArray(hashArguments) ? hashArguments : [])
    this.retention = Object.freeze({
      maxRecords: positive('maxRecords', options.maxRecords ?? DEFAULT_AUDIT_RETENTION.maxRecords),
      maxAgeMs: positive('maxAgeMs', options.maxAgeMs ?? DEFAULT_AUDIT_RETENTION.maxAgeMs),
    })
    this.maxArgumentsLength = positive('maxArgumentsLength', options.maxArgumentsLength ?? 16_384)
    this.flushInterval = positive('flushInterval', options.flushInterval ?? 200)
    this.batchSize = positive('batchSize', options.batchSize ?? 100)
    this.logger = options.logger ?? silentLogger
    this.store = checkStore(options.store ?? new MemoryAuditStore())
    this.writing = this.opened(this.store)
    this.ready = this.writing
  }

  /** Takes a `permissions/decision` event: held until its call ends, or recorded at once when no call carries it. */
  onDecision(event: DecisionEvent): void {
    if (this.stopped) return
    const request = event.request
    const callId = request.callId
    if (callId === undefined) {
      // A host asked the gate itself (no call): only a denial is worth a record of its own.
      if (event.decision === 'deny') this.push(decisionOnly(event))
      return
    }
    const serial = (request as Serialed)[CALL_SERIAL]
    const key: CallKey = serial !== undefined ? serial : keyOf(request.session?.id, callId)
    const source = event.source
    if (this.lastKey !== key) {
      const held = this.pending.size ? this.pending.get(key) : undefined
      if (held) {
        if (source && decides(source.kind)) held.decided = source
        else if (source) held.ask = askOf(event)
        held.reason = event.reason
        return
      }
      // A new call: the one held here (decided, not ended yet) moves to the map.
      if (this.lastKey !== undefined) {
        if (this.pending.size >= MAX_PENDING) {
          const oldest = this.pending.keys().next().value!
          this.pending.delete(oldest)
          if (typeof oldest === 'string') this.loose--
        }
        const moved: Pending = { sessionId: this.lastSessionId, callId: this.lastCallId! }
        if (this.lastDecided) moved.decided = this.lastDecided
        if (this.lastAsk) moved.ask = this.lastAsk
        moved.reason = this.lastReason
        this.pending.set(this.lastKey, moved)
      }
      if (typeof key === 'string') this.loose++
      this.lastKey = key
      this.lastSessionId = request.session?.id
      this.lastCallId = callId
      this.lastDecided = undefined
      this.lastAsk = undefined
    }
    // An authorize, or an approve decided again before anyone was asked (a grant appeared).
    if (source && decides(source.kind)) this.lastDecided = source
    else if (source) this.lastAsk = askOf(event)
    this.lastReason = event.reason
  }

  /** Takes a `tools/call-end`: the call's record, with whatever its decisions said. */
  onCallEnd(info: CallInfo, result: ToolResult): void {
    if (this.stopped) return
    const session = info.session
    const at = info.startedAt
    const draft = new Draft(at, Date.now() - at, info.name, info.id, info.args, session, result.status, result.durationMs)
    const serial = (info as Serialed)[CALL_SERIAL]
    const code = result.code
    // Before its authorization: a call never prepared (only the pipeline's refusals carry these
    // codes), or one whose permission was never worked out (cancelled first, `permission()` threw).
    if (serial === undefined ? code === 'unknown_tool' || code === 'invalid_arguments' : (info as { permission?: unknown }).permission === undefined) {
      draft.code = code
      draft.repaired = result.repaired
      return this.pushEarly(draft)
    }
    let reason: string | undefined
    const last = this.lastKey
    // The latest call held: by the serial; by session and model id where the end or the
    // decision did not carry one (a host's own `CallInfo` or gate).
    if (last !== undefined && (serial !== undefined && last === serial || (serial === undefined || typeof last === 'string') && this.lastCallId === info.id && this.lastSessionId === session?.id)) {
      draft.decided = this.lastDecided
      draft.ask = this.lastAsk
      reason = this.lastReason
      if (typeof last === 'string') this.loose--
      this.lastKey = this.lastSessionId = this.lastCallId = this.lastDecided = this.lastAsk = this.lastReason = undefined
    } else if (this.pending.size) {
      const pending = this.takePending(serial, session?.id, info.id)
      if (pending) {
        draft.decided = pending.decided
        draft.ask = pending.ask
        reason = pending.reason
      }
    }
    draft.code = code
    draft.waitMs = result.waitMs
    draft.taskId = result.taskId
    draft.repaired = result.repaired
    if (result.status === 'denied') draft.reason = reason ?? result.content
    this.push(draft)
  }

  /** The decisions held for a call that ended, removed: by its serial, else by session and model id. */
  private takePending(serial: number | undefined, sessionId: string | undefined, callId: string): Pending | undefined {
    if (serial !== undefined) {
      const held = this.pending.get(serial)
      if (held) {
        this.pending.delete(serial)
        return held
      }
      if (!this.loose) return undefined
    }
    const key = keyOf(sessionId, callId)
    const held = this.pending.get(key)
    if (held) {
      this.pending.delete(key)
      this.loose--
      return held
    }
    if (serial !== undefined) return undefined
    // A host's own `CallInfo` for a call the pipeline's requests named by serial.
    for (const [key, held] of this.pending) {
      if (held.callId === callId && held.sessionId === sessionId) {
        this.pending.delete(key)
        if (typeof key === 'string') this.loose--
        return held
      }
    }
    return undefined
  }

  /**
   * Adds a record a host assembled itself (a decision outside the pipeline). `id` is
   * given when absent; `args` are hashed as configured.
   */
  record(record: Omit<AuditRecord, 'id' | 'argsHash'> & { id?: string }): void {
    if (this.stopped) return
    // Hashing and the id are applied when written, as for the pipeline's records.
    this.push(new Draft(record.at, record.endedAt - record.at, record.tool, record.callId, record.args, undefined, record.outcome, record.durationMs, { ...record }))
  }

  /**
   * Takes a background task's end (`background/settled`): a record of its own, next to the
   * call's (`outcome: 'background'`), with the task's final status and the result's.
   */
  onTaskSettled(task: BackgroundTask): void {
    if (this.stopped || !task || task.status === 'running') return
    const result = task.result
    const endedAt = task.settledAt ?? Date.now()
    const record: Omit<AuditRecord, 'id' | 'argsHash'> = {
      at: task.startedAt,
      endedAt,
      tool: task.tool,
      callId: task.callId,
      caller: this.callerOf(task.session),
      // An interrupted task's result was lost with its process.
      outcome: result?.status ?? 'error',
      taskId: task.id,
      taskStatus: task.status,
      durationMs: result?.durationMs ?? endedAt - task.startedAt,
    }
    if (result?.code !== undefined) record.code = result.code
    if (result?.status === 'denied') record.reason = result.content
    this.record(record)
  }

  /** Records matching `filter`, newest (last recorded) first; queued records are written first. */
  async query(filter: AuditFilter = {}): Promise<AuditRecord[]> {
    await this.flush()
    return this.store.query(filter)
  }

  /** Every retained record matching `filter`, oldest first: for a download or a report. */
  async export(filter: Omit<AuditFilter, 'limit'> = {}): Promise<AuditRecord[]> {
    return (await this.query({ ...filter, limit: undefined })).reverse()
  }

  /** Writes the queue now; resolves once every write started so far has finished. */
  flush(): Promise<void> {
    this.urgent = false
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    return this.startWrite()
  }

  /** Hands the queue to a write after those started so far. */
  private startWrite(): Promise<void> {
    if (this.queue.length) {
      const batch = this.queue
      this.queue = []
      // Refusals after this one start a record of their own.
      if (this.earlyDrafts.size) this.earlyDrafts.clear()
      this.writing = this.writing.then(() => this.write(batch))
    }
    return this.writing
  }

  /**
   * Switches where records go, under the living log: writes already started finish on the
   * old store (which is then closed), queued records go to the new one. Resolves once the
   * new store is opened and pruned.
   */
  useStore(store: AuditStore): Promise<void> {
    checkStore(store)
    const previous = this.store
    this.writing = this.writing.then(async () => {
      await this.closeStore(previous)
      this.store = store
      await this.opened(store)
    })
    return this.writing
  }

  /** Writes what is queued and closes the store; later records are ignored. Idempotent. */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      this.pending.clear()
      this.loose = 0
      this.lastKey = this.lastSessionId = this.lastCallId = this.lastDecided = this.lastAsk = this.lastReason = undefined
      await this.flush()
      await this.closeStore(this.store)
    }
    await this.writing
  }

  private push(draft: Draft) {
    this.queue.push(draft)
    this.schedule()
  }

  /**
   * A call that ended before its authorization: one record for the refusals of a session
   * with the same code (and tool) queued until the next write, with their count, so a flood
   * of them is a line, not a thousand. Retention drops these records first.
   */
  private pushEarly(draft: Draft) {
    const key = coalescingKey(draft)
    const first = this.earlyDrafts.get(key)
    if (first) {
      first.count++
      first.elapsed = Math.max(first.elapsed, draft.at + draft.elapsed - first.at)
      return
    }
    draft.early = true
    this.earlyDrafts.set(key, draft)
    this.push(draft)
  }

  private schedule() {
    if (this.queue.length >= this.batchSize) {
      // A full batch is written after the current task's microtasks, not on a timer: calls
      // that never yield to the event loop (a tight loop of awaits) would grow the queue.
      if (this.urgent) return
      this.urgent = true
      queueMicrotask(this.flushBatch)
    } else if (this.timer === undefined) {
      this.timer = setTimeout(this.flushNow, this.flushInterval)
      // A log waiting to write does not keep a process alive; `stop()` writes what is left.
      ;(this.timer as { unref?: () => void }).unref?.()
    }
  }

  private async write(batch: Draft[]): Promise<void> {
    const records: AuditRecord[] = []
    for (const draft of batch) {
      try {
        if (!draft.record) {
          const record = this.finish(draft)
          draft.record = record instanceof Promise ? await record : record
        }
        records.push(draft.record)
      } catch (error) {
        this.logger.warn('dropped an audit record of %s (%s): %s', draft.tool, draft.callId, messageOf(error))
      }
    }
    if (!records.length) return
    const store = this.store
    try {
      await store.append(records)
      if (this.failing) this.logger.warn('audit records are written again')
      this.failing = false
      this.sincePrune += records.length
    } catch (error) {
      if (!this.failing) this.logger.warn('could not write %d audit record(s); they are kept to retry: %s', records.length, messageOf(error))
      this.failing = true
      // Kept for the next write, within what the store would keep anyway: early ones go first.
      this.queue = keepNewest(batch.concat(this.queue), this.retention.maxRecords, isEarlyDraft)
      if (!this.stopped) this.schedule()
      return
    }
    if (this.sincePrune >= Math.max(1, Math.ceil(this.retention.maxRecords / 10)) || Date.now() - this.lastPrune >= PRUNE_INTERVAL) {
      await this.prune(store)
    }
  }

  /** The record of a draft: synchronous unless its arguments are hashed. */
  private finish(draft: Draft): AuditRecord | Promise<AuditRecord> {
    const preset = draft.preset
    const record: AuditRecord = preset
      // `id` and `at` first, then `early`, as in every line the file store writes (it reads them from there).
      ? (({ id, at, ...rest }) => rest.early === true ? { id: id ?? this.nextId(), at, early: true as const, ...rest } : { id: id ?? this.nextId(), at, ...rest })(preset)
      : draft.early
        ? {
            id: this.nextId(),
            at: draft.at,
            early: true,
            endedAt: draft.at + draft.elapsed,
            tool: draft.tool,
            callId: draft.callId,
            caller: this.callerOf(draft.session),
            outcome: draft.outcome,
            durationMs: draft.durationMs,
          }
        : {
            id: this.nextId(),
            at: draft.at,
            endedAt: draft.at + draft.elapsed,
            tool: draft.tool,
            callId: draft.callId,
            caller: this.callerOf(draft.session),
            outcome: draft.outcome,
            durationMs: draft.durationMs,
          }
    if (draft.count > 1) record.count = draft.count
    if (!preset) {
      // A record carries only what its call had: a draft's fields are `undefined` when unset.
      const decided = this.deciderOf(draft.decided)
      if (decided) record.decided = decided
      if (draft.ask) record.ask = draft.ask
      if (draft.code !== undefined) record.code = draft.code
      if (draft.reason !== undefined) record.reason = draft.reason
      if (draft.taskId !== undefined) record.taskId = draft.taskId
      if (draft.waitMs !== undefined) record.waitMs = draft.waitMs
      if (draft.repaired) record.repaired = { steps: [...draft.repaired.steps] }
    }
    const args = preset ? preset.args : draft.args
    delete record.args
    if (args === undefined) return record
    let json: string | undefined
    if (!this.hashAll && !this.hashed.has(record.tool)) {
      try {
        json = JSON.stringify(args)
      } catch (error) {
        record.args = `[arguments not JSON: ${messageOf(error)}]`
        return record
      }
      // The validated arguments, as the tool saw them: the call has ended, nothing changes them now.
      if (json === undefined || json.length <= this.maxArgumentsLength) {
        record.args = args
        return record
      }
    }
    try {
      json = canonicalJson(args)
    } catch (error) {
      json = JSON.stringify(`[arguments not JSON: ${messageOf(error)}]`)
    }
    return sha256(json).then((hash) => {
      record.argsHash = hash
      return record
    })
  }

  private nextId(): string {
    return this.idPrefix + (this.sequence++).toString(36)
  }

  private callerOf(session: Session | undefined): AuditCaller {
    if (!session || typeof session !== 'object') return callerOf(session)
    let caller = this.callers.get(session)
    // A session is the host's object: reuse its copy only while it still says the same.
    if (!caller || caller.sessionId !== session.id || caller.userId !== session.userId || caller.authority !== session.authority || caller.platform !== session.platform || caller.channelId !== session.channelId || caller.guildId !== session.guildId) {
      caller = Object.freeze(callerOf(session))
      this.callers.set(session, caller)
    }
    return caller
  }

  private deciderOf(source: DecisionSource | undefined): AuditDecider | undefined {
    if (!source) return undefined
    if (this.deciders.has(source)) return this.deciders.get(source)
    const decider = deciderOf(source)
    if (decider) Object.freeze(decider)
    this.deciders.set(source, decider)
    return decider
  }

  private async opened(store: AuditStore): Promise<void> {
    try {
      await store.open?.()
    } catch (error) {
      this.logger.warn('could not open the audit store: %s', messageOf(error))
    }
    await this.prune(store)
  }

  private async prune(store: AuditStore): Promise<void> {
    this.sincePrune = 0
    this.lastPrune = Date.now()
    try {
      await store.prune(this.retention)
    } catch (error) {
      this.logger.warn('could not prune the audit store: %s', messageOf(error))
    }
  }

  private async closeStore(store: AuditStore): Promise<void> {
    try {
      await store.close?.()
    } catch (error) {
      this.logger.warn('could not close the audit store: %s', messageOf(error))
    }
  }
}

function keyOf(sessionId: string | undefined, callId: string): string {
  return `${sessionId ?? ''}\u0000${callId}`
}

/**
 * What early drafts coalesce by: the session and the code, and the tool but for unknown
 * tools (whose names the model makes up, one per call if it likes).
 */
function coalescingKey(draft: Draft): string {
  return `${draft.session?.id ?? ''}\u0000${draft.code ?? ''}\u0000${draft.code === 'unknown_tool' ? '' : draft.tool}`
}

function isEarlyDraft(draft: Draft): boolean {
  return draft.early || draft.preset?.early === true
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && value > 0)) throw new TypeError(`${name} must be a positive number, got ${JSON.stringify(value)}`)
  return value
}

function checkStore(store: AuditStore): AuditStore {
  if (!store || typeof store.append !== 'function' || typeof store.query !== 'function' || typeof store.prune !== 'function') {
    throw new TypeError('an audit store needs append(records), query(filter) and prune(retention)')
  }
  return store
}

function callerOf(session: Session | undefined): AuditCaller {
  const caller: AuditCaller = { sessionId: session?.id ?? '' }
  if (!session) return caller
  if (session.platform !== undefined) caller.platform = session.platform
  if (session.userId !== undefined) caller.userId = session.userId
  if (session.channelId !== undefined) caller.channelId = session.channelId
  if (session.guildId !== undefined) caller.guildId = session.guildId
  if (session.authority !== undefined) caller.authority = session.authority
  return caller
}

function deciderOf(source: DecisionSource | undefined): AuditDecider | undefined {
  switch (source?.kind) {
    case 'rule': {
      const decider: AuditDecider = { kind: 'rule', id: source.id, origin: source.origin, decision: source.rule.decision, permission: source.rule.permission }
      if (source.rule.name !== undefined) decider.name = source.rule.name
      return decider
    }
    case 'grant': return { kind: 'grant', id: source.grant.id, scope: source.grant.scope, by: source.grant.by }
    case 'mode': return { kind: 'mode', mode: source.mode }
    case 'default': return { kind: 'default', effect: source.effect }
    case 'middleware': return { kind: 'middleware', name: source.name }
    case 'quota': return { kind: 'quota', name: source.name }
    default: return undefined
  }
}

function askOf(event: DecisionEvent): AuditAsk {
  const source = event.source
  const ask: AuditAsk = {
    ended: source.kind === 'answer' ? 'answer' : source.kind as AuditAsk['ended'],
    decision: event.decision === 'allow' ? 'allow' : 'deny',
  }
  if (event.requestId !== undefined) ask.requestId = event.requestId
  if (event.approvers !== undefined) ask.approvers = event.approvers
  if (source.kind === 'answer') {
    ask.by = source.by
    ask.scope = source.scope
    if (source.via !== undefined) ask.via = source.via
    if (source.grant) ask.grantId = source.grant.id
    if (source.edited) ask.edited = true
  }
  return ask
}

/** A denial no call carried (a host asked the gate itself): recorded on its own. */
function decisionOnly(event: DecisionEvent): Draft {
  const draft = new Draft(event.at, 0, event.request.tool, '', event.request.args, event.request.session, 'denied', 0)
  draft.code = 'permission_denied'
  if (event.source && decides(event.source.kind)) draft.decided = event.source
  draft.reason = event.reason
  return draft
}
