import type { BackgroundTask } from '../background/background-task'
import { CALL_SERIAL, type CallInfo, type ResumedFrom } from '../events'
import { type Logger, silentLogger } from '../logger'
import type { DecisionEvent } from '../permissions/permission-decision'
import type { ToolResult } from '../tool-result'
import { coalescingKey, type Draft, DraftPool, isEarlyDraft, type PresetRecord } from './audit-draft'
import { type AuditAsk, type AuditFilter, type AuditRecord, type AuditRetention, DEFAULT_AUDIT_RETENTION } from './audit-record'
import { type AuditLogOptions, checkStore, positive } from './audit-log-options'
import { type AuditStore, MemoryAuditStore } from './audit-store'
import { AuditWriter } from './audit-writer'
import { askOf, type CallKey, callKeyOf, decides, PendingDecisions, type Serialed } from './pending-decisions'
import { RecordFinisher } from './record-finisher'
import { keepNewest } from './retention-order'

export type { AuditLogOptions } from './audit-log-options'

/**
 * The audit trail's host-free engine: one record per tool call, assembled from the call's
 * `permissions/decision` events and its `tools/call-end`, plus records for denials no call
 * carried. Recording costs the call a few property stores into a reused draft; the records
 * are finished (ids, hashes) and written in batches, off the call's path, every
 * `flushInterval` ms or `batchSize` records, and on `flush()` / `stop()`.
 *
 * The queue is bounded: at most `maxRecords` records wait for a store that cannot keep up
 * (beyond it, early ones go first, in the retention order), so calls that never yield to the
 * event loop cannot grow it without end. The built-in stores' writes finish without the event
 * loop, so there nothing is dropped.
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
  private queue: Draft[] = []
  /** The queue's early drafts, by what coalesces them (`coalescingKey`): later refusals add to their count. */
  private earlyDrafts = new Map<string, Draft>()
  private readonly decisions = new PendingDecisions()
  /**
   * Asks the permission service's stop ended (`source.kind: 'stopped'`), by call, until the
   * call ends: a write before that (a host flushing as the process exits) records the call
   * from its decision, so a call still waiting when the process stops is never lost.
   */
  private interrupted = new Map<CallKey, DecisionEvent>()
  /** Calls recorded from their interrupted ask before they ended: their end adds nothing. */
  private recordedEarly = new Set<CallKey>()
  private readonly pool: DraftPool
  private readonly writer: AuditWriter
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private urgent = false
  /** A write of the whole queue was asked for (`flush`): the writer takes it however short. */
  private due = false
  /** Drafts dropped from a full queue since the last warning. */
  private dropped = 0
  private readonly flushInterval: number
  private readonly batchSize: number
  private readonly flushNow = () => { void this.flush() }
  /** A full batch's write: the timer stays armed for the records after it (no re-arm per batch). */
  private readonly flushBatch = () => {
    this.urgent = false
    this.startWrite()
  }

  constructor(options: AuditLogOptions = {}) {
    const { hashArguments = false } = options
    if (typeof hashArguments !== 'boolean' && !(Array.isArray(hashArguments) && hashArguments.every((name) => typeof name === 'string'))) {
      throw new TypeError('hashArguments must be a boolean or a list of tool names')
    }
    this.retention = Object.freeze({
      maxRecords: positive('maxRecords', options.maxRecords ?? DEFAULT_AUDIT_RETENTION.maxRecords),
      maxAgeMs: positive('maxAgeMs', options.maxAgeMs ?? DEFAULT_AUDIT_RETENTION.maxAgeMs),
    })
    const maxArgumentsLength = positive('maxArgumentsLength', options.maxArgumentsLength ?? 16_384)
    this.flushInterval = positive('flushInterval', options.flushInterval ?? 200)
    this.batchSize = positive('batchSize', options.batchSize ?? 100)
    this.logger = options.logger ?? silentLogger
    this.pool = new DraftPool(Math.min(this.retention.maxRecords, 4 * this.batchSize))
    const finisher = new RecordFinisher(hashArguments === true, new Set(Array.isArray(hashArguments) ? hashArguments : []), maxArgumentsLength)
    this.writer = new AuditWriter(checkStore(options.store ?? new MemoryAuditStore()), finisher, this.retention, this.logger, {
      take: () => this.take(),
      written: (batch) => this.pool.give(batch),
      failed: (batch) => {
        // Kept for the next write, within what the store would keep anyway: early ones go first.
        this.queue = keepNewest(batch.concat(this.queue), this.retention.maxRecords, isEarlyDraft)
        // Retried after the interval, not at once: a failing store is not hammered.
        if (!this.stopped && this.timer === undefined) this.arm()
      },
    })
    this.ready = this.writer.ready
  }

  /** Takes a `permissions/decision` event: held until its call ends, or recorded at once when no call carries it. */
  onDecision(event: DecisionEvent): void {
    if (this.stopped) return
    if (event.restored) return this.onRestored(event)
    const callId = event.request.callId
    if (callId !== undefined) {
      // A tool's own `call.ask` may be caught and its run go on: only the pipeline's asks end their call.
      if (event.source?.kind === 'stopped' && !(event.request as { inRun?: boolean }).inRun) this.keepInterrupted(event, callId)
      return this.decisions.hold(event, callId)
    }
    // A host asked the gate itself (no call): only a denial is worth a record of its own.
    if (event.decision !== 'deny') return
    const request = event.request
    const draft = this.pool.take().fill(event.at, 0, request.tool, '', request.args, request.session, 'denied', 0)
    draft.code = 'permission_denied'
    if (event.source && decides(event.source.kind)) draft.decided = event.source
    draft.reason = event.reason
    this.push(draft)
  }

  /** Takes a `tools/call-end`: the call's record, with whatever its decisions said. */
  onCallEnd(info: CallInfo, result: ToolResult): void {
    if (this.stopped) return
    const session = info.session
    const at = info.startedAt
    const draft = this.pool.take().fill(at, Date.now() - at, info.name, info.id, info.args, session, result.status, result.durationMs)
    const serial = (info as Serialed)[CALL_SERIAL]
    const code = result.code
    draft.code = code
    draft.repaired = result.repaired
    // Before its authorization: a call never prepared (only the pipeline's refusals carry these
    // codes), or one whose permission was never worked out (cancelled first, `permission()` threw).
    if (serial === undefined ? code === 'unknown_tool' || code === 'invalid_arguments' : (info as { permission?: unknown }).permission === undefined) {
      return this.pushEarly(draft)
    }
    if (this.interrupted.size || this.recordedEarly.size) {
      const key = callKeyOf(serial, session?.id, info.id)
      this.interrupted.delete(key)
      if (this.recordedEarly.delete(key)) {
        this.pool.give([draft])
        return
      }
    }
    const decisions = this.decisions
    decisions.take(serial, session?.id, info.id)
    draft.decided = decisions.decided
    draft.ask = decisions.ask
    draft.waitMs = result.waitMs
    draft.taskId = result.taskId
    if (result.status === 'denied') draft.reason = decisions.reason ?? result.content
    const resumes = info.resumes
    if (resumes !== undefined) {
      draft.resumes = { callId: resumes.callId, requestId: resumes.requestId, askedAt: resumes.askedAt }
      draft.ask ??= resumedAsk(resumes)
    }
    this.push(draft)
  }

  /**
   * A decision on a request kept from before a restart, or asked on another instance
   * (`DecisionEvent.restored`): no call of this process waited for it. Approved, the call it
   * runs has the record (`CallInfo.resumes`); declined, expired, closed or denied by a rule
   * meanwhile, it gets a record of its own, `denied`, linked to the ask (`resumes`).
   */
  private onRestored(event: DecisionEvent): void {
    if (event.decision === 'allow') return
    const request = event.request
    const callId = request.callId ?? ''
    const draft = this.pool.take().fill(event.at, 0, request.tool, callId, request.args, request.session, 'denied', 0)
    draft.code = 'permission_denied'
    const source = event.source
    if (source && decides(source.kind)) draft.decided = source
    else if (source) draft.ask = askOf(event)
    draft.reason = event.reason
    draft.resumes = { callId, requestId: event.requestId ?? '' }
    if (typeof event.askedAt === 'number') draft.resumes.askedAt = event.askedAt
    this.push(draft)
  }

  private keepInterrupted(event: DecisionEvent, callId: string) {
    const key = callKeyOf((event.request as Serialed)[CALL_SERIAL], event.request.session?.id, callId)
    if (this.interrupted.size >= MAX_INTERRUPTED) this.interrupted.delete(this.interrupted.keys().next().value!)
    this.interrupted.set(key, event)
  }

  /** The calls whose ask the permission service's stop ended and that have not ended yet: recorded from their decision. */
  private recordInterrupted() {
    for (const [key, event] of this.interrupted) {
      const request = event.request
      const callId = request.callId ?? ''
      // Their decision is this record's: it is no longer held for the call's end.
      this.decisions.take(typeof key === 'number' ? key : undefined, request.session?.id, callId)
      const draft = this.pool.take().fill(event.at, 0, request.tool, callId, request.args, request.session, 'denied', 0)
      draft.code = 'permission_denied'
      draft.ask = askOf(event)
      draft.reason = event.reason
      this.push(draft)
      if (this.recordedEarly.size >= MAX_INTERRUPTED) this.recordedEarly.delete(this.recordedEarly.values().next().value!)
      this.recordedEarly.add(key)
    }
    this.interrupted.clear()
  }

  /**
   * Adds a record a host assembled itself (a decision outside the pipeline). `id` is
   * given when absent; `args` are hashed as configured.
   */
  record(record: PresetRecord): void {
    if (this.stopped) return
    // Hashing and the id are applied when written, as for the pipeline's records.
    const draft = this.pool.take().fill(record.at, record.endedAt - record.at, record.tool, record.callId, record.args, undefined, record.outcome, record.durationMs)
    draft.preset = { ...record }
    this.push(draft)
  }

  /**
   * Takes a background task's end (`background/settled`): a record of its own, next to the
   * call's (`outcome: 'background'`), with the task's final status and the result's.
   */
  onTaskSettled(task: BackgroundTask): void {
    if (this.stopped || !task || task.status === 'running') return
    const result = task.result
    const endedAt = task.settledAt ?? Date.now()
    const record: PresetRecord = {
      at: task.startedAt,
      endedAt,
      tool: task.tool,
      callId: task.callId,
      caller: this.writer.finisher.callerOf(task.session),
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
    return this.writer.store.query(filter)
  }

  /** Every retained record matching `filter`, oldest first: for a download or a report. */
  async export(filter: Omit<AuditFilter, 'limit'> = {}): Promise<AuditRecord[]> {
    return (await this.query({ ...filter, limit: undefined })).reverse()
  }

  /** Writes the queue now; resolves once every write started so far has finished. */
  flush(): Promise<void> {
    if (this.interrupted.size) this.recordInterrupted()
    this.urgent = false
    this.due = true
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    return this.startWrite()
  }

  /**
   * Switches where records go, under the living log: writes already started finish on the
   * old store (which is then closed), queued records go to the new one. Resolves once the
   * new store is opened and pruned.
   */
  useStore(store: AuditStore): Promise<void> {
    return this.writer.switchTo(checkStore(store))
  }

  /** Writes what is queued and closes the store; later records are ignored. Idempotent. */
  async stop(): Promise<void> {
    if (!this.stopped) {
      if (this.interrupted.size) this.recordInterrupted()
      this.stopped = true
      this.recordedEarly.clear()
      this.decisions.clear()
      await this.flush()
      await this.writer.close()
    }
    await this.writer.idle()
  }

  /** Hands the queue to the writer, after what it holds; resolves once it has all been written. */
  private startWrite(): Promise<void> {
    return this.writer.start(this.queue.length > 0)
  }

  /**
   * The next batch for the writer: the whole queue, once it is a batch or a flush asked for
   * it (a writer that took every draft queued during its last write would write one or two
   * at a time). Refusals after it start a record of their own.
   */
  private take(): Draft[] {
    const batch = this.queue
    if (!batch.length || !this.due && batch.length < this.batchSize) return NONE
    this.due = false
    this.queue = []
    if (this.earlyDrafts.size) this.earlyDrafts.clear()
    return batch
  }

  private push(draft: Draft) {
    const queue = this.queue
    queue.push(draft)
    // A store that cannot keep up (its writes wait for an event loop the caller never yields
    // to): the queue keeps what the retention would, early drafts going first.
    if (queue.length >= this.retention.maxRecords + this.batchSize) this.shrink()
    this.schedule()
  }

  private shrink() {
    const before = this.queue.length
    this.queue = keepNewest(this.queue, this.retention.maxRecords, isEarlyDraft)
    this.earlyDrafts.clear()
    if (!this.dropped) this.logger.warn('the audit store cannot keep up: the oldest queued records are dropped (early ones first), %d at most are kept', this.retention.maxRecords)
    this.dropped += before - this.queue.length
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
      this.pool.give([draft])
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
    } else if (this.timer === undefined) this.arm()
  }

  private arm() {
    this.timer = setTimeout(this.flushNow, this.flushInterval)
    // A log waiting to write does not keep a process alive; `stop()` writes what is left.
    ;(this.timer as { unref?: () => void }).unref?.()
  }
}

const NONE: Draft[] = []

/** Interrupted asks (and calls recorded from one) remembered at most; the oldest go first. */
const MAX_INTERRUPTED = 10_000

/** The ask of a call run for an answer given after a restart: who approved it then. */
function resumedAsk(resumes: ResumedFrom): AuditAsk {
  const ask: AuditAsk = { requestId: resumes.requestId, ended: 'answer', decision: 'allow', by: resumes.by, scope: resumes.scope }
  if (resumes.approvers !== undefined) ask.approvers = resumes.approvers
  if (resumes.via !== undefined) ask.via = resumes.via
  if (resumes.grantId !== undefined) ask.grantId = resumes.grantId
  if (resumes.edited) ask.edited = true
  return ask
}
