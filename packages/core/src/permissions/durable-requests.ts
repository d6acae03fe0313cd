import { messageOf } from '../error-message'
import type { Logger } from '../logger'
import type { AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import { settledWithin } from '../settled-within'
import { label } from './answer-check'
import type { AnswerResult, Approver, AskAnswer, Asker, AskScope, PermissionRequest } from './asker'
import type { Grant } from './grant'
import { describeApprovers, mayAnswer } from './may-answer'
import type { ClaimResult, PendingApproval } from './pending-approval'
import type { ClosedRequest, PendingRecord, PendingStore, PendingStoreLoad, ResumeFailure, ResumeHandler } from './pending-record'
import type { DecisionSource } from './permission-decision'
import { PermissionError } from './permission-error'
import { RestoredApproval, type RestoredHost, type RestoredVerdict } from './restored-approval'
import { approverPolicy, type DefaultApprovers, names as namesApprovers } from './rule-approvers'
import { checkEdit, requestOf, restoredQuestion } from './stored-request'
import { StrandedCopies } from './stranded-copies'

/** How long a store switch waits for the writes under way before it reads the new store. */
const SWITCH_WAIT = 10_000
/**
 * Another instance's request counts as expired here this much after its expiry: the instance
 * that asked closes its own at the expiry, and is the one to tell its channel.
 */
export const FOREIGN_GRACE_MS = 10_000
/** What a closure claims a request for (`PendingStore.claim`'s `by`): no person's label starts with `#`. */
const CLOSING = '#'
/**
 * How long a request restored from a store no other instance shares waits for its tool to be
 * defined here before it is closed: hosts load tool plugins after the permission engine
 * (Koishi, Cordis), and a plugin that waits for a service (a database) later still.
 */
export const TOOL_GRACE_MS = 60_000

/** The engine's side of durable requests. */
export interface DurableHost {
  readonly logger: Logger
  readonly defaultApprovers: DefaultApprovers
  decide(request: AuthorizeRequest): AuthorizeResult
  remember(scope: Exclude<AskScope, 'once'>, request: AuthorizeRequest, by: string): Readonly<Grant>
  /** Reports a decision on a record (`DecisionEvent.restored`, `requestId` the record's id). */
  reportRestored(record: Readonly<PendingRecord>, request: AuthorizeRequest & { callId: string }, result: AuthorizeResult): void
  /** The askers registered now. */
  askers(): Iterable<Asker>
  /** A record closed without being asked again (`PermissionEngineOptions.onClosed`). */
  closed(closed: ClosedRequest): void
}

/** A request of this process kept in the store, and how far its write got. */
interface Kept {
  record: PendingRecord
  pending?: PendingApproval
  state: 'writing' | 'written' | 'failed'
  /** The store its record was written to: the one that held it when a move to another had not happened yet. */
  store: PendingStore
  /** Set once an answer given here claimed it in a shared store: the claimed record is left as a trace (`finish`). */
  claimed?: true
}

/**
 * The durable half of the permission engine (`permissions.durable`): it writes each question
 * the pipeline asks to a `PendingStore`, removes it when the question ends, reads the store
 * at start (and, shared, on every refresh) and asks its requests again as `RestoredApproval`s,
 * and carries an answer to one out: a claim in the store, the call authorized again, and the
 * tools host's `ResumeHandler` running it once. Writes of one request run one after another.
 */
export class DurableRequests implements RestoredHost {
  /** Resolves once the store was read and its requests restored or closed. */
  readonly ready: Promise<void>
  private store: PendingStore
  private live = new Map<string, Kept>()
  private restored = new Map<string, RestoredApproval>()
  private chains = new Map<string, Promise<void>>()
  /** Closures and answers being carried out: `idle` waits for them too. */
  private tasks = new Set<Promise<unknown>>()
  /** Loads, refreshes and switches, one after another. */
  private turn: Promise<void>
  private resumer?: ResumeHandler
  private stopped = false
  /** The tool checks of restored requests a grace after they were read (`TOOL_GRACE_MS`). */
  private toolChecks = new Set<ReturnType<typeof setTimeout>>()
  /** Copies of requests left open in a store that went, for when it is read again. */
  private stranded = new StrandedCopies()

  constructor(private readonly host: DurableHost, store: PendingStore, readonly instanceId: string, private readonly maxPending: number) {
    this.store = store
    this.ready = this.turn = this.load(store)
  }

  get logger(): Logger {
    return this.host.logger
  }

  /** Whether the store is shared by several instances (`PendingStore.shared`). */
  get shared(): boolean {
    return this.store.shared === true
  }

  // --- requests of this process -------------------------------------------------------

  /**
   * Keeps a question the pipeline just asked: makes room under `maxPending`, then writes its
   * record without waiting. Resolves `true` once written, `false` when the store failed
   * (logged: the request will not survive a restart).
   */
  keep(record: PendingRecord): Promise<boolean> {
    this.makeRoom(1)
    const store = this.store
    const entry: Kept = { record, state: 'writing', store }
    this.live.set(record.id, entry)
    return this.write(record.id, () => store.put(record)).then(() => {
      if (entry.state === 'writing') entry.state = 'written'
      return true
    }, (error) => {
      entry.state = 'failed'
      if (store.gone !== undefined) this.logger.debug('permission request %s (%s) was not kept, as the pending store went (%s): %s', record.id, record.summary, store.gone, messageOf(error))
      else this.logger.warn('could not keep permission request %s (%s) in the pending store: %s; it will not survive a restart', record.id, record.summary, messageOf(error))
      entry.pending?.notKept()
      return false
    })
  }

  /** The pending approval of a record `keep` was given. */
  attach(id: string, pending: PendingApproval): void {
    const entry = this.live.get(id)
    if (entry && !pending.ended) entry.pending = pending
  }

  /** Whether the request's record is (being) kept: stopping leaves it for after a restart. */
  isKept(id: string): boolean {
    const entry = this.live.get(id)
    return !!entry && entry.state !== 'failed'
  }

  /** A request of this process ended: its record goes, unless the engine stopped and keeps it. */
  ended(id: string, source: DecisionSource): void {
    const entry = this.live.get(id)
    if (!entry) return
    this.live.delete(id)
    if (source.kind === 'stopped' && source.kept) return
    this.stranded.endedHere(id)
    if (entry.claimed) return void this.finish(id, this.store)
    if (entry.state === 'failed') return
    // Where its record is, and the store being moved to (a move under way writes it there too).
    for (const store of new Set([entry.store, this.store])) {
      // A store that went drops the removal: the record left open there is stale.
      if (store.gone !== undefined) this.stranded.markStale(id)
      else void this.remove(id, store, true)
    }
  }

  /**
   * Before an answer to a request of this process counts, on a shared store: claims it, since
   * an answer on another instance may have. `undefined` when no claim is needed. Never rejects:
   * a store that cannot be reached counts the answer given here (logged).
   */
  claim(pending: PendingApproval, by: Approver): Promise<ClaimResult> | undefined {
    const id = pending.request.id
    const entry = this.live.get(id)
    if (!this.shared || !entry || entry.state === 'failed') return undefined
    const store = this.store
    return this.write(id, () => store.claim(id, this.instanceId, label(by))).then(async (won): Promise<ClaimResult> => {
      if (won) {
        entry.claimed = true
        return { won: true }
      }
      const now = await store.get(id).catch(() => undefined)
      return lost(now)
    }, (error): ClaimResult => {
      // A store that went (its database stopped) refuses as expected: the host moves to another.
      if (store.gone !== undefined) this.logger.debug('could not claim permission request %s (%s), as the pending store went (%s): %s; the answer given here counts', id, pending.request.summary, store.gone, messageOf(error))
      else this.logger.warn('could not claim permission request %s (%s) in the pending store: %s; the answer given here counts', id, pending.request.summary, messageOf(error))
      return { won: true }
    })
  }

  // --- restored requests ----------------------------------------------------------------

  /** The restored requests still open, for `pending()`. */
  list(): Readonly<PermissionRequest>[] {
    return [...this.restored.values()].filter((restored) => !restored.ended).map((restored) => restored.request)
  }

  /** Shows every open restored request to an asker registered now. */
  showTo(asker: Asker): void {
    for (const restored of this.restored.values()) restored.show(asker)
  }

  /** Registers the tools host that runs answered restored requests; see `PermissionEngine.onResume`. */
  onResume(handler: ResumeHandler): () => void {
    if (!handler || typeof handler.defines !== 'function' || typeof handler.resume !== 'function') {
      throw new PermissionError('INVALID_OPTIONS', 'onResume() expects a handler { defines(tool), resume(call), check?, schema? }')
    }
    this.resumer = handler
    // Questions restored before it came get its edit form (askers shown from now on see it).
    for (const restored of this.restored.values()) {
      if (restored.request.input) continue
      const request = restoredQuestion(restored.record, restored.request.restored!.at, handler, restored.request.id)
      if (request.input) restored.request = request
    }
    return () => {
      if (this.resumer === handler) this.resumer = undefined
    }
  }

  answered(restored: RestoredApproval, answer: AskAnswer, by: Approver): RestoredVerdict {
    const record = restored.record
    const request = requestOf(record)
    const via = answer.via
    if (answer.decision === 'deny') {
      const reason = `${label(by)} declined it${answer.reason ? `: ${answer.reason}` : ''}`
      const source: DecisionSource = { kind: 'answer', by, scope: 'once', ...(via ? { via } : {}) }
      return this.carryOut(restored, by, async () => {
        this.host.reportRestored(record, request, { decision: 'deny', reason, rule: source })
        return { status: 'accepted', reason, open: false }
      })
    }
    const handler = this.resumer
    if (!handler) return { status: 'refused', reason: `no tools host on this instance (${this.instanceId}) can run ${record.tool} yet; the request stays open`, open: true }
    if (!defines(handler, record.tool, this.logger)) return { status: 'refused', reason: `the tool "${record.tool}" is not defined on this instance (${this.instanceId}); the request stays open for one that defines it`, open: true }
    let decided = request
    let args = record.args
    let changes: readonly string[] | undefined
    if (answer.value !== undefined) {
      const checked = checkEdit(handler, record, answer.value)
      if ('error' in checked) return { status: 'invalid', reason: checked.error, open: true, ...(checked.refusal ? { refusal: checked.refusal } : {}) }
      if (checked.changes.length) {
        args = checked.args
        changes = checked.changes
        const permission = checked.permission ?? record.permission
        decided = { ...request, args, permission, effect: permission.effect ?? record.effect }
      }
    }
    // Authorized again now: a deny rule or a mode added meanwhile wins over the old question.
    const result = this.host.decide(decided)
    if (result.decision === 'deny') {
      const reason = `${label(by)} approved it, but it is denied now: ${result.reason ?? 'a permission rule denies it'}`
      this.drop(restored, reason)
      void this.close(record, 'denied', reason, { decision: 'deny', reason, rule: result.rule }, { ended: true })
      return { status: 'refused', reason, open: false, denial: { cause: 'rule', ...(result.cause ? { decided: result.cause } : {}) } }
    }
    let once = record.confirm === 'always' || decided.confirm === 'always'
    if (result.decision === 'ask') {
      // The call may now fall under a rule with approvers of its own: this person must be one.
      const asked = result.rule as PermissionRequest['asked']
      const approvers = asked?.kind === 'rule' ? asked.rule.approvers : undefined
      const policy = approverPolicy(record.session, approvers, this.host.defaultApprovers)
      if (!mayAnswer(policy, by)) return { status: 'not-allowed', reason: `it now needs the approval of ${describeApprovers(policy)}`, open: true, approvers: policy }
      if (namesApprovers(approvers)) once = true
    }
    const scope: AskScope = once ? 'once' : answer.scope ?? 'once'
    const where = record.instance === this.instanceId || !this.shared ? 'after a restart' : `on instance ${this.instanceId} (asked on ${record.instance})`
    const reason = `approved by ${label(by)} (${scope})${changes ? ' with edited arguments' : ''} ${where}`
    return this.carryOut(restored, by, async () => {
      const source: Extract<DecisionSource, { kind: 'answer' }> = { kind: 'answer', by, scope, ...(via ? { via } : {}), ...(changes ? { edited: true as const } : {}) }
      if (scope !== 'once') source.grant = this.host.remember(scope, decided, label(by))
      let taskId: string
      try {
        ;({ taskId } = await handler.resume({ record, args, ...(changes ? { changes } : {}), by, scope, ...(source.grant ? { grant: source.grant } : {}), ...(via ? { via } : {}), reason }))
      } catch (error) {
        const failed = `${reason}, but it could not be run: ${messageOf(error)}`
        this.logger.warn('restored permission request %s (%s): %s', record.id, record.summary, failed)
        this.host.reportRestored(record, decided, { decision: 'deny', reason: failed, rule: source })
        const failure = failureOf(error)
        return { status: 'failed', reason: failed, error: messageOf(error), ...(failure ? { failure } : {}), open: false }
      }
      this.host.reportRestored(record, decided, { decision: 'allow', reason, rule: source })
      return { status: 'accepted', reason, taskId, open: false }
    })
  }

  /**
   * Claims the record for this instance, then runs `work` and removes the record. Lost: the
   * request ends here, and the answerer hears who answered first. A store that cannot be
   * reached leaves the request open.
   */
  private carryOut(restored: RestoredApproval, by: Approver, work: () => Promise<AnswerResult>): RestoredVerdict {
    const record = restored.record
    const store = this.store
    const result = this.write(record.id, () => store.claim(record.id, this.instanceId, label(by))).then(async (won): Promise<AnswerResult> => {
      if (!won) {
        const claimed = lost(await store.get(record.id).catch(() => undefined))
        const why = claimed.closed ? `it was closed (${claimed.closed})` : `it was already answered${claimed.by ? ` by ${claimed.by}` : ''}`
        this.drop(restored, why, takenBy(claimed))
        return claimed.closed ? { status: 'closed', reason: why, open: false } : { status: 'taken', reason: why, open: false, ...(claimed.by ? { by: claimed.by } : {}) }
      }
      let done: AnswerResult
      try {
        done = await work()
      } finally {
        await this.finish(record.id, store)
      }
      this.drop(restored, done.reason ?? done.status)
      return done
    }, (error): AnswerResult => {
      const reason = `the pending store could not be reached (${messageOf(error)}); the request stays open`
      this.logger.warn('could not claim restored permission request %s (%s): %s', record.id, record.summary, messageOf(error))
      restored.reopen()
      return { status: 'failed', reason, open: true }
    })
    return { status: 'accepted', result: this.track(result) }
  }

  expired(restored: RestoredApproval): void {
    const record = restored.record
    const reason = `timed out waiting for approval (it expired at ${new Date(record.expiresAt).toISOString()})`
    this.drop(restored, reason)
    void this.close(record, 'expired', reason, { decision: 'deny', reason, rule: { kind: 'timeout', timeout: record.expiresAt - record.createdAt } }, { ended: true })
  }

  /** Ends a restored request here; `taken`: another instance's answer did (a later answer here hears whose). */
  private drop(restored: RestoredApproval, reason: string, taken?: { by: string; instance?: string }) {
    restored.end(reason, taken)
    if (this.restored.get(restored.record.id) !== restored) return
    this.restored.delete(restored.record.id)
    if (!this.stopped) this.stranded.endedHere(restored.record.id)
  }

  // --- the store --------------------------------------------------------------------------

  /**
   * Reads a shared store again: requests other instances asked appear, those they answered or
   * closed go, and a call of this process whose request another instance claimed ends, saying
   * it runs there. `wanted` is asked before the read and after a failure (a stopping host says no).
   */
  refresh(wanted?: () => boolean): Promise<void> {
    if (!this.shared || this.stopped) return Promise.resolve()
    const next = this.turn.then(() => this.poll(wanted))
    this.turn = next.catch(noop)
    return next
  }

  /** Moves to another store; see `PermissionEngine.usePendingStore`. */
  useStore(store: PendingStore): Promise<void> {
    const next = this.turn.then(() => this.switchTo(store))
    this.turn = next.catch(noop)
    return next
  }

  /**
   * Stops: restored requests end without a decision (their records stay); settles once every
   * write under way has, or after 10 s (a database that hangs must not hold the process).
   */
  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.toolChecks) clearTimeout(timer)
    this.toolChecks.clear()
    for (const restored of [...this.restored.values()]) this.drop(restored, 'the permissions service stopped')
    if (!await settledWithin(this.idle(), SWITCH_WAIT)) this.logger.warn('stopping: writes to the pending store had not finished after %d ms', SWITCH_WAIT)
  }

  /** Settles once every write, closure and answer under way has, and those they started. */
  async idle(): Promise<void> {
    while (this.chains.size || this.tasks.size) await Promise.all([...this.chains.values(), ...this.tasks])
  }

  /** Runs `task` in the background, where `idle` sees it. */
  private track<T>(task: Promise<T>): Promise<T> {
    this.tasks.add(task)
    void task.then(() => this.tasks.delete(task), () => this.tasks.delete(task))
    return task
  }

  private async load(store: PendingStore): Promise<void> {
    const loaded = await this.read(store, 'could not read the pending store; requests asked before a restart are not asked again')
    if (loaded && this.store === store && !this.stopped) await this.admit(loaded, store)
  }

  private async poll(wanted?: () => boolean): Promise<void> {
    if (wanted && !wanted()) return
    const store = this.store
    let loaded: PendingStoreLoad
    try {
      loaded = await store.load()
    } catch (error) {
      if (!wanted || wanted()) this.logger.warn('could not refresh pending permission requests: %s', messageOf(error))
      return
    }
    if (store !== this.store || this.stopped) return
    const open = new Set(loaded.records.map((record) => record.id))
    for (const [id, entry] of [...this.live]) {
      if (entry.state !== 'written' || open.has(id) || !entry.pending) continue
      let now: PendingRecord | undefined
      try {
        now = await store.get(id)
      } catch {
        continue
      }
      // Still open (written meanwhile), or claimed here: an answer of this instance is under way.
      if (now && (now.claimedBy === undefined || now.claimedBy === this.instanceId)) continue
      this.endedThere(entry, now)
    }
    for (const [id, restored] of [...this.restored]) {
      if (open.has(id) || restored.busy) continue
      // Who claimed it, for an answer read here a moment later (and the question's closing).
      const now = await store.get(id).catch(() => undefined)
      // Answered here meanwhile: that answer's claim says the rest.
      if (restored.busy || this.restored.get(id) !== restored || store !== this.store || this.stopped) continue
      const taken = takenBy(lost(now))
      this.drop(restored, taken ? answeredThere(taken) : 'it was answered or closed on another instance', taken)
    }
    if (store !== this.store || this.stopped) return
    await this.admit(loaded, store)
  }

  /**
   * A call of this process whose request another instance claimed (`now`), or that is gone
   * from a shared store (`undefined`): its wait ends, saying where the call runs.
   */
  private endedThere(entry: Kept, now: PendingRecord | undefined) {
    const pending = entry.pending
    if (!pending || this.live.get(entry.record.id) !== entry || pending.ended) return
    const claimed = lost(now)
    const where = claimed.instance ? `another instance (${claimed.instance})` : 'another instance'
    const reason = !now
      ? 'the request was answered or closed on another instance'
      : claimed.closed ? `the request was closed on ${where} (${claimed.closed})` : `the request was answered on ${where}${claimed.by ? ` by ${claimed.by}` : ''}; the call runs there, not here`
    pending.end({ decision: 'deny', reason }, { kind: 'elsewhere', ...(claimed.instance ? { instance: claimed.instance } : {}), ...(claimed.by ? { by: claimed.by } : {}) })
  }

  private async switchTo(store: PendingStore): Promise<void> {
    const old = this.store
    if (!await settledWithin(this.idle(), SWITCH_WAIT)) this.logger.warn('switching the pending store: earlier writes had not finished after %d ms; reading the new store anyway', SWITCH_WAIT)
    this.store = store
    const loaded = await this.read(store, 'could not read the new pending store') ?? { records: [], bad: [] }
    if (this.store !== store || this.stopped) return
    // This process's open requests move to the new store, unless it holds them already: then
    // that copy is the one, and the old store's goes (a database back after the file stood in).
    const there = new Set(loaded.records.map((record) => record.id))
    const moves: Promise<unknown>[] = []
    const leftOld = (id: string) => {
      this.stranded.found(id)
      if (old !== store && old.gone === undefined) moves.push(this.remove(id, old))
    }
    for (const [id, entry] of this.live) {
      if (!there.has(id)) moves.push(this.move(entry.record, old, store, entry))
      else if (entry.state !== 'failed') {
        entry.store = store
        leftOld(id)
      }
    }
    for (const [id, restored] of this.restored) {
      if (restored.busy) continue
      if (!there.has(id)) moves.push(this.move(restored.record, old, store, undefined, restored))
      else leftOld(id)
    }
    await Promise.all(moves)
    await this.admit(loaded, store)
  }

  private async move(record: PendingRecord, old: PendingStore, store: PendingStore, entry?: Kept, restored?: RestoredApproval): Promise<void> {
    // Claimed there by another instance (answered while this one could not see it): it ends
    // here, and is not written over that claim, which would open it again.
    const now = store.shared ? await store.get(record.id).catch(() => undefined) : undefined
    if (now?.claimedBy !== undefined && now.claimedBy !== this.instanceId) {
      if (entry) this.endedThere(entry, now)
      const taken = takenBy(lost(now))
      if (restored) this.drop(restored, taken ? answeredThere(taken) : 'it was answered or closed on another instance', taken)
      if (old !== store && old.gone === undefined) await this.remove(record.id, old)
      return
    }
    try {
      await this.write(record.id, () => store.put(record))
      if (entry) {
        entry.state = 'written'
        entry.store = store
      }
    } catch (error) {
      if (entry) {
        entry.state = 'failed'
        entry.pending?.notKept()
      }
      this.logger.warn('could not move permission request %s (%s) to the new pending store: %s; it will not survive a restart', record.id, record.summary, messageOf(error))
      return
    }
    if (old === store) return
    // A store that went cannot be written: its copy stays open, and is settled when it is read again.
    if (old.gone !== undefined) this.stranded.leftBehind(record.id)
    else await this.remove(record.id, old)
  }

  /** What a store holds: its bad entries closed and removed, its open requests restored, closed or left to their instance. */
  private async admit(loaded: PendingStoreLoad, store: PendingStore): Promise<void> {
    const closing: Promise<void>[] = []
    for (const bad of loaded.bad ?? []) {
      this.logger.warn('a kept permission request could not be read, and is closed: %s', bad.why)
      this.tell({ cause: 'corrupt', reason: `a permission request kept from before could not be read, and was closed (${bad.why})`, detail: bad.why, ...(bad.id !== undefined ? { id: bad.id } : {}), ...(bad.session ? { session: bad.session } : {}) })
      if (bad.id !== undefined) closing.push(this.remove(bad.id, store))
    }
    const now = Date.now()
    const restored: RestoredApproval[] = []
    for (const record of loaded.records) {
      if (this.live.has(record.id) || this.restored.has(record.id)) continue
      // A copy of a request that ended here while this store was away: its decision was made and reported.
      if (this.stranded.isStale(record.id)) {
        closing.push(this.close(record, 'stale', `it ended on instance ${this.instanceId} while this store was away`, undefined))
        continue
      }
      // Another instance's request may be live there: it closes its own first.
      const foreign = this.shared && record.instance !== this.instanceId
      const closesAt = record.expiresAt + (foreign ? FOREIGN_GRACE_MS : 0)
      if (closesAt <= now) {
        const reason = `it expired at ${new Date(record.expiresAt).toISOString()}, before anyone answered`
        closing.push(this.close(record, 'expired', reason, { decision: 'deny', reason, rule: { kind: 'timeout', timeout: record.expiresAt - record.createdAt } }, { tell: true }))
      } else if (record.inRun || record.masked) {
        if (foreign) continue
        const reason = record.inRun
          ? `${record.tool} asked this from inside its run, which ended when the process stopped; it cannot be resumed`
          : `its arguments had secret fields, which are never stored, so the call cannot run from the record`
        closing.push(this.close(record, record.inRun ? 'in-run' : 'masked', reason, { decision: 'deny', reason, rule: { kind: 'stopped' } }, { tell: true }))
      } else {
        restored.push(this.restore(record, closesAt))
      }
    }
    closing.push(...this.makeRoom(0))
    if (restored.length && !this.shared) this.checkToolsLater(restored)
    await Promise.all(closing)
  }

  private restore(record: PendingRecord, closesAt: number): RestoredApproval {
    const restored = new RestoredApproval(this, record, restoredQuestion(record, Date.now(), this.resumer), closesAt)
    this.restored.set(record.id, restored)
    for (const asker of this.host.askers()) restored.show(asker)
    return restored
  }

  /**
   * On a store no other instance shares, a restored request is answered here or nowhere: one
   * whose tool this instance still does not define a grace after it was read is closed, with
   * a reason, rather than left open with every answer refused. On a shared store another
   * instance may define it, and the request stays open for one that does, until its expiry.
   */
  private checkToolsLater(restored: readonly RestoredApproval[]) {
    const timer = setTimeout(() => {
      this.toolChecks.delete(timer)
      if (this.stopped || this.shared) return
      const handler = this.resumer
      for (const one of restored) {
        if (one.ended || one.busy || this.restored.get(one.record.id) !== one) continue
        if (handler && defines(handler, one.record.tool, this.logger)) continue
        const record = one.record
        const reason = `the tool "${record.tool}" is not defined here: no plugin defined it within ${TOOL_GRACE_MS / 1000} s of the restart`
        this.logger.warn('restored permission request %s (%s) is closed: %s', record.id, record.summary, reason)
        this.drop(one, reason)
        void this.close(record, 'undefined-tool', reason, { decision: 'deny', reason, rule: { kind: 'stopped' } }, { tell: true, ended: true })
      }
    }, TOOL_GRACE_MS)
    // A check waiting to run does not keep a process alive; `stop` clears it.
    ;(timer as { unref?: () => void }).unref?.()
    this.toolChecks.add(timer)
  }

  /**
   * Closes a record: claimed first, so that of several instances reading it one reports it;
   * then removed, reported as a decision (`result`; none for a stale copy, whose request's was
   * reported when it ended), and (`tell`) handed to the host to tell its channel. `ended`: the
   * request already ended here (answered, expired, closed while asked again); when the store
   * cannot be written, it is reported all the same, and its record is closed when a store
   * holding it is read again, rather than asked again.
   */
  private close(record: Readonly<PendingRecord>, cause: Closure, reason: string, result: AuthorizeResult | undefined, how: { tell?: true; ended?: true } = {}): Promise<void> {
    return this.track(this.closing(record, cause, reason, result, how))
  }

  private async closing(record: Readonly<PendingRecord>, cause: Closure, reason: string, result: AuthorizeResult | undefined, how: { tell?: true; ended?: true }): Promise<void> {
    const store = this.store
    let won: boolean
    try {
      won = await this.write(record.id, () => store.claim(record.id, this.instanceId, `${CLOSING}${cause === 'stale' ? reason : cause}`))
    } catch (error) {
      this.logger.warn('could not close permission request %s (%s) in the pending store: %s', record.id, record.summary, messageOf(error))
      // Read again later, a record left open would be asked again: it is closed then instead.
      if (!how.ended) return
      this.stranded.markStale(record.id)
      return this.closed(record, cause, reason, result, how.tell)
    }
    if (cause === 'stale') this.stranded.closed(record.id)
    if (!won) return
    await this.finish(record.id, store)
    this.closed(record, cause, reason, result, how.tell)
  }

  /** A closure carried out: its decision reported, and its channel told. */
  private closed(record: Readonly<PendingRecord>, cause: Closure, reason: string, result: AuthorizeResult | undefined, tell: true | undefined) {
    if (result) this.host.reportRestored(record, requestOf(record), result)
    if (tell && cause !== 'denied' && cause !== 'stale') this.tell({ cause, reason, record })
  }

  /**
   * Past `maxPending` open requests, the oldest expire first: a request of this process ends
   * as its expiry would, a restored one is closed and its channel told.
   */
  private makeRoom(adding: number): Promise<void>[] {
    const closing: Promise<void>[] = []
    while (this.live.size + this.restored.size + adding > this.maxPending) {
      let oldest: { at: number; entry?: Kept; restored?: RestoredApproval } | undefined
      for (const entry of this.live.values()) {
        if (entry.pending && !entry.pending.ended && (!oldest || entry.record.createdAt < oldest.at)) oldest = { at: entry.record.createdAt, entry }
      }
      for (const restored of this.restored.values()) {
        if (!restored.busy && (!oldest || restored.record.createdAt < oldest.at)) oldest = { at: restored.record.createdAt, restored }
      }
      if (!oldest) break
      const reason = `it expired early: more than ${this.maxPending} permission requests were open (maxPending), and it was the oldest`
      if (oldest.entry) {
        const { record, pending } = oldest.entry
        pending!.end({ decision: 'deny', reason }, { kind: 'timeout', timeout: record.expiresAt - record.createdAt })
      } else {
        const record = oldest.restored!.record
        this.drop(oldest.restored!, reason)
        closing.push(this.close(record, 'evicted', reason, { decision: 'deny', reason, rule: { kind: 'timeout', timeout: record.expiresAt - record.createdAt } }, { tell: true, ended: true }))
      }
    }
    return closing
  }

  private tell(closed: ClosedRequest) {
    try {
      this.host.closed(closed)
    } catch (error) {
      this.logger.warn('an onClosed listener threw: %s', messageOf(error))
    }
  }

  private async read(store: PendingStore, failure: string): Promise<PendingStoreLoad | undefined> {
    try {
      return await store.load()
    } catch (error) {
      // A database disposed while its table is read fails the read before the host has told
      // the store it went: wait for that word (a turn of the loop) before calling it a fault.
      if (store.gone === undefined) await new Promise((resolve) => setImmediate(resolve))
      if (store.gone !== undefined) this.logger.debug('%s as it went (%s): %s', failure, store.gone, messageOf(error))
      else if (this.store !== store) this.logger.debug('%s as it was replaced: %s', failure, messageOf(error))
      else this.logger.warn('%s: %s', failure, messageOf(error))
      return undefined
    }
  }

  /**
   * A record this instance claimed and carried out: removed, or on a shared store left as it
   * is, claimed, so that the instance that asked learns who answered (the store removes it
   * a while after its expiry).
   */
  private finish(id: string, store: PendingStore): Promise<void> {
    return store.shared ? Promise.resolve() : this.remove(id, store)
  }

  /**
   * Removes a record. `ended`: its request ended here, so a record the store refused to remove
   * (a database that went) is stale: closed when a store holding it is read again, not asked again.
   */
  private remove(id: string, store = this.store, ended = false): Promise<void> {
    return this.write(id, () => store.remove(id)).catch((error) => {
      if (ended) this.stranded.markStale(id)
      if (store.gone !== undefined) this.logger.debug('removing permission request %s did not happen, as the pending store went (%s): %s', id, store.gone, messageOf(error))
      else this.logger.warn('could not remove permission request %s from the pending store: %s', id, messageOf(error))
    })
  }

  /** Runs `op` once every earlier write of the same request has settled. */
  private write<T>(id: string, op: () => Promise<T>): Promise<T> {
    const before = this.chains.get(id)
    const next = before ? before.then(op) : Promise.resolve().then(op)
    const settled = next.then(noop, noop)
    this.chains.set(id, settled)
    void settled.then(() => {
      if (this.chains.get(id) === settled) this.chains.delete(id)
    })
    return next
  }
}

/** Why a record is closed: a `ClosedRequest` cause, a denial at the answer, or a stale copy (`StrandedCopies`). */
type Closure = ClosedRequest['cause'] | 'denied' | 'stale'

/** `handler.defines(tool)`; a handler that throws defines nothing (logged). */
function defines(handler: ResumeHandler, tool: string, logger: Logger): boolean {
  try {
    return handler.defines(tool) === true
  } catch (error) {
    logger.warn('the tools host\'s defines(%s) threw: %s', tool, messageOf(error))
    return false
  }
}

/** The structured form of a resume's error (`ResumeFailure`), when the tools host gave one. */
function failureOf(error: unknown): ResumeFailure | undefined {
  const failure = (error as { failure?: unknown } | undefined)?.failure
  return failure && typeof failure === 'object' && typeof (failure as { kind?: unknown }).kind === 'string' ? failure as ResumeFailure : undefined
}

/** What a lost claim found in the store: who claimed it, or the closure that did. */
function lost(now: PendingRecord | undefined): { won: false; by?: string; instance?: string; closed?: string } {
  if (!now?.claimedBy) return { won: false }
  const result: { won: false; by?: string; instance?: string; closed?: string } = { won: false, instance: now.claimedBy }
  if (now.claimedFor?.startsWith(CLOSING)) result.closed = now.claimedFor.slice(CLOSING.length)
  else if (now.claimedFor) result.by = now.claimedFor
  return result
}

/** A lost claim's answer given on another instance (not a closure): who gave it, and where. */
function takenBy(claimed: { by?: string; instance?: string }): { by: string; instance?: string } | undefined {
  if (!claimed.by) return undefined
  return claimed.instance ? { by: claimed.by, instance: claimed.instance } : { by: claimed.by }
}

/** `it was already answered by mock:alice on instance b`. */
function answeredThere(taken: { by: string; instance?: string }): string {
  return `it was already answered by ${taken.by}${taken.instance ? ` on instance ${taken.instance}` : ''}`
}

function noop() {}
