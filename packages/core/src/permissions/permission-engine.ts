import { type Logger, silentLogger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, AuthorizeRequest, AuthorizeResult, ElicitQuestion, PermissionGate, PipelineDecision } from '../permission-gate'
import type { Decision } from '../types/decision'
import { approvalQuestion, elicitationQuestion } from './approval-question'
import { reviseEdit } from './argument-edit'
import { answerAuthor } from './answer-check'
import type { Approver, Asker, AskAnswer, PermissionRequest } from './asker'
import { compileRule } from './compile-rule'
import { decideCall } from './decide-call'
import { DurableRequests } from './durable-requests'
import type { Grant } from './grant'
import { GrantLedger } from './grant-ledger'
import { type GrantStore, MemoryGrantStore } from './grant-store'
import { MemoryPendingStore } from './memory-pending-store'
import { type ClaimResult, denied, type EditVerdict, label, PendingApproval } from './pending-approval'
import type { PendingRecord, PendingStore, ResumeHandler } from './pending-record'
import type { DecisionEvent, DecisionSource } from './permission-decision'
import { checkConditions, type PermissionEngineOptions } from './permission-engine-options'
import { PermissionError } from './permission-error'
import type { PermissionMode } from './permission-modes'
import type { PermissionRule, RuleCondition } from './permission-rule'
import type { DefaultApprovers } from './rule-approvers'
import { RuleIndex } from './rule-index'
import { SessionModes } from './session-modes'
import { type SessionHost, recordOf } from './stored-request'
import { settledWithin } from '../settled-within'
import { ruleDenial } from '../messages/denial-of'
import { enUS } from '../messages/en-us'
import type { AskedFor, Denial } from '../types/denial'

export type { PermissionEngineOptions } from './permission-engine-options'

const MAX_TIMEOUT = 2 ** 31 - 1
/** How long a pipeline ask waits for a store switch in progress before it asks anyway. */
const SWITCH_WAIT = 10_000
const DEFAULT_TIMEOUT = 300_000
const DEFAULT_MAX_PENDING = 1000

/**
 * The host-free permission gate: rules, modes, remembered grants and approvals in flight.
 * Hosts set it as `ToolRegistry.permissions`; `@dogu/cordis` wraps it as `ctx.permissions`.
 *
 * Order for a call: any matching deny rule → deny; the session's mode (readOnly denies
 * write/exec, acceptEdits allows write, trust allows all); a matching ask rule → ask;
 * a matching allow rule → allow; otherwise the effect default (read allow, write/exec
 * ask). An `ask` is turned into `allow` by a grant for the same subject, permission and
 * target, unless the request has `confirm: 'always'`.
 */
export class PermissionEngine implements PermissionGate {
  /** Resolves once stored grants are loaded; saves wait for it. */
  readonly ready: Promise<void>
  readonly logger: Logger
  private rules = new RuleIndex()
  private modes: SessionModes
  private ledger: GrantLedger
  private askers = new Set<Asker>()
  private pendings = new Set<PendingApproval>()
  private stopped = false
  private readonly timeout: number
  /** Who may answer when the rule that asked (if any) names no approvers. */
  private readonly defaultApprovers: DefaultApprovers
  private readonly onDecision?: (event: DecisionEvent) => void
  private readonly wantsDecision: () => boolean
  private readonly conditions: ReadonlyMap<string, RuleCondition>
  /** Set when questions are kept in a pending store (`durable`). */
  private readonly durable?: DurableRequests
  private readonly sessionHost?: SessionHost
  /** This instance's name in the pending store (`PermissionEngineOptions.instanceId`). */
  readonly instanceId: string

  constructor(options: PermissionEngineOptions = {}) {
    if (!options || typeof options !== 'object') throw new PermissionError('INVALID_OPTIONS', 'PermissionEngine expects an options object')
    const { mode = 'default', askTimeout = DEFAULT_TIMEOUT, approvers = {} } = options
    this.modes = new SessionModes(mode)
    if (!(typeof askTimeout === 'number' && askTimeout > 0)) throw new PermissionError('INVALID_OPTIONS', `askTimeout must be a positive number of milliseconds, got ${JSON.stringify(askTimeout)}`)
    const authority = approvers.authority ?? 4
    if (typeof authority !== 'number' || Number.isNaN(authority)) throw new PermissionError('INVALID_OPTIONS', 'approvers.authority must be a number')
    if (options.rules !== undefined && !Array.isArray(options.rules)) throw new PermissionError('INVALID_RULE', 'rules must be an array')
    this.timeout = Math.min(askTimeout, MAX_TIMEOUT)
    this.defaultApprovers = { authority, caller: approvers.caller ?? true }
    this.onDecision = options.onDecision
    this.wantsDecision = options.wantsDecision ?? (() => true)
    this.logger = options.logger ?? silentLogger
    this.conditions = checkConditions(options.conditions)
    // Compile every rule before indexing any: one bad rule rejects the whole config, and
    // before the store is read, so a rejected config leaves it alone.
    const compiled = (options.rules ?? []).map((rule, i) => compileRule(rule, `config.rules[${i}]`, this.conditions))
    for (const rule of compiled) this.rules.add(rule)
    const durable = options.durable ?? options.pendingStore !== undefined
    if (typeof durable !== 'boolean') throw new PermissionError('INVALID_OPTIONS', `durable must be true or false, got ${JSON.stringify(durable)}`)
    const { maxPending = DEFAULT_MAX_PENDING, instanceId = globalThis.crypto.randomUUID().slice(0, 8) } = options
    if (!(Number.isInteger(maxPending) && maxPending > 0)) throw new PermissionError('INVALID_OPTIONS', `maxPending must be a positive integer, got ${JSON.stringify(maxPending)}`)
    if (typeof instanceId !== 'string' || !instanceId || instanceId.length > 255) throw new PermissionError('INVALID_OPTIONS', `instanceId must be a non-empty string of at most 255 characters, got ${JSON.stringify(instanceId)}`)
    if (options.pendingStore !== undefined) checkPendingStore(options.pendingStore, 'pendingStore')
    if (options.onClosed !== undefined && typeof options.onClosed !== 'function') throw new PermissionError('INVALID_OPTIONS', 'onClosed must be a function')
    if (options.sessionHost !== undefined && typeof options.sessionHost !== 'function') throw new PermissionError('INVALID_OPTIONS', 'sessionHost must be a function')
    this.instanceId = instanceId
    this.sessionHost = options.sessionHost
    this.ledger = new GrantLedger(options.store ?? new MemoryGrantStore(), this.logger)
    if (durable) {
      const onClosed = options.onClosed
      this.durable = new DurableRequests({
        logger: this.logger,
        defaultApprovers: this.defaultApprovers,
        decide: (request) => this.decide(request),
        remember: (scope, request, by) => this.ledger.remember(scope, request, by),
        reportRestored: (record, request, result) => this.report('approve', request, result, undefined, record),
        askers: () => this.askers,
        closed: (closed) => onClosed?.(closed),
      }, options.pendingStore ?? new MemoryPendingStore(), instanceId, maxPending)
      this.ready = Promise.all([this.ledger.ready, this.durable.ready]).then(() => {})
    } else {
      this.ready = this.ledger.ready
    }
  }

  /** Whether questions are kept in a pending store and outlive the process (`durable`). */
  get isDurable(): boolean {
    return this.durable !== undefined
  }

  /** Set when the grant store could not be trusted at load. */
  get storeProblem(): { message: string; movedTo?: string } | undefined {
    return this.ledger.problem
  }

  /** The number of rules in force. */
  get ruleCount(): number {
    return this.rules.size
  }

  /** Decides a call from rules, mode, grants and defaults. Synchronous and allocation-free on the common path. */
  authorize(request: AuthorizeRequest): AuthorizeResult {
    const result = this.decide(request)
    if (this.onDecision && !request.probe && this.wantsDecision()) this.report('authorize', request, result)
    return result
  }

  /**
   * Asks a person. A pipeline ask (no `reason`) is decided again first, since a grant may
   * have appeared meanwhile; a tool's own `call.ask(reason)` always reaches a person.
   */
  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalOutcome> {
    // A store being switched to (a database that just started) may hold the grant that allows
    // this: decide once it is read, not before. The switch is bounded; so is this wait.
    if (request.elicit) return this.elicit(request, request.elicit, signal)
    const switching = request.reason === undefined ? this.ledger.switching : undefined
    if (switching && !this.stopped) return settledWithin(switching, SWITCH_WAIT).then(() => this.ask(request, signal))
    return this.ask(request, signal)
  }

  private ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalOutcome> {
    if (this.stopped) return this.early(request, denied({ cause: 'stopped', when: 'before_ask' }), { kind: 'stopped' })
    if (signal?.aborted) return this.early(request, denied({ cause: 'cancelled', when: 'before_ask' }), { kind: 'cancelled' })
    let why: string
    let askedFor: AskedFor
    let asked: PermissionRequest['asked']
    // A framework user's no is final: the call is not decided again, only declined (and audited).
    if (request.answer?.decision === 'deny' && request.reason === undefined) {
      return this.answerAtOnce(request, approvalQuestion(request, 'the caller\'s framework asked its user', undefined, this.defaultApprovers, this.timeout), request.answer, signal)
    }
    if (request.reason === undefined) {
      const result = this.decide(request)
      if (result.decision === 'allow') return this.early(request, result.reason === undefined ? { decision: 'allow' } : { decision: 'allow', reason: result.reason }, result.rule as DecisionSource)
      if (result.decision === 'deny') return this.early(request, denied(ruleDenial(result.reason, result.cause)), result.rule as DecisionSource)
      why = result.reason!
      askedFor = result.cause && enUS.decided(result.cause) === why ? result.cause : { kind: 'tool', reason: why }
      // Only a rule or an effect default asks: modes and grants allow or deny.
      asked = result.rule as PermissionRequest['asked']
    } else {
      why = String(request.reason)
      askedFor = { kind: 'tool', reason: why }
    }
    // A framework that asked its own user brings the answer: no asker is needed.
    if (request.answer) return this.answerAtOnce(request, approvalQuestion(request, why, asked, this.defaultApprovers, this.timeout), request.answer, signal)
    // Said to the model too: a developer's app with no approver learns how to add one.
    if (!this.askers.size) return this.early(request, denied({ cause: 'no_asker', asked: askedFor }), { kind: 'no-asker' })
    const shown = approvalQuestion(request, why, asked, this.defaultApprovers, this.timeout)
    if (!this.durable) {
      const pending = new PendingApproval(this, shown, request, [...this.askers], signal, this.timeout)
      if (!pending.ended) this.pendings.add(pending)
      return pending.promise
    }
    // Written without waiting: the question is asked at once, and says so if the write fails.
    const kept = this.durable.keep(recordOf(request, shown, this.instanceId, this.sessionHost))
    const pending = new PendingApproval(this, shown, request, [...this.askers], signal, this.timeout, { kept, outlivesAskers: true })
    if (!pending.ended) {
      this.pendings.add(pending)
      this.durable.attach(shown.id, pending)
    }
    return pending.promise
  }

  /**
   * A question the caller's framework already put to its user (`ApprovalRequest.answer`):
   * answered at once with that answer, checked as any asker's (who may give it, its scope),
   * so it is remembered and audited as an answer. Nothing is kept: it ends before a restart could.
   */
  private answerAtOnce(request: ApprovalRequest, shown: PermissionRequest, answer: Readonly<AskAnswer>, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const pending = new PendingApproval(this, shown, request, [], signal, this.timeout)
    if (pending.ended) return pending.promise
    this.pendings.add(pending)
    const status = pending.respond(answer)
    if (!pending.ended) {
      const by = answerAuthor(answer)
      pending.end(denied(status === 'not-allowed' && by
        ? { cause: 'answer_refused', by: label(by), approvers: shown.approvers }
        : { cause: 'answer_refused', by: by ? label(by) : String((answer as { by?: unknown })?.by) }), { kind: 'askers-failed' })
    }
    return pending.promise
  }

  /**
   * A tool's form (`call.elicit`) put to the askers: no rule, mode or grant applies, nothing
   * is remembered, and it is not a decision to audit. Unanswered, it ends dismissed.
   */
  private elicit(request: ApprovalRequest, question: ElicitQuestion, signal?: AbortSignal): Promise<ApprovalOutcome> {
    if (this.stopped) return Promise.resolve({ decision: 'deny', dismissed: true, reason: 'the permissions service is stopped' })
    if (signal?.aborted) return Promise.resolve({ decision: 'deny', dismissed: true, reason: 'the call was cancelled before anyone was asked' })
    if (!this.askers.size) return Promise.resolve({ decision: 'deny', dismissed: true, reason: 'no asker is registered to ask anyone' })
    const timeout = question.timeout ?? this.timeout
    const shown = elicitationQuestion(request, question, this.defaultApprovers, timeout)
    const pending = new PendingApproval(this, shown, request, [...this.askers], signal, timeout)
    if (!pending.ended) this.pendings.add(pending)
    return pending.promise
  }

  /** Adds a rule at run time; the returned function removes it. */
  addRule(rule: PermissionRule, origin = 'addRule()'): () => void {
    return this.rules.add(compileRule(rule, origin, this.conditions))
  }

  /** Registers an asker; the returned function removes it. Requests it alone was showing are denied. */
  addAsker(asker: Asker): () => void {
    if (typeof asker !== 'function') throw new PermissionError('INVALID_ASKER', `an asker must be a function (request, { signal, respond }) => answer, got ${typeof asker}`)
    if (this.stopped) throw new PermissionError('INVALID_OPTIONS', 'the permission engine is stopped')
    // The same function twice is two registrations: wrap so each disposer removes its own.
    const entry: Asker = (request, context) => asker(request, context)
    this.askers.add(entry)
    // Kept questions are shown to askers that come later: a chat reloaded, a console opened.
    if (this.durable) {
      for (const pending of [...this.pendings]) if (!pending.input.elicit) pending.show(entry)
      this.durable.showTo(entry)
    }
    return () => {
      if (!this.askers.delete(entry)) return
      for (const pending of [...this.pendings]) pending.askerGone(entry)
    }
  }

  /** Sets a session's mode; `undefined` returns it to the configured default. */
  setMode(sessionId: string, mode: PermissionMode | undefined): void {
    if (typeof sessionId !== 'string') throw new PermissionError('INVALID_OPTIONS', 'setMode() needs a session id string')
    this.modes.set(sessionId, mode)
  }

  /** The mode in force for a session. */
  modeOf(sessionId: string): PermissionMode {
    return this.modes.of(sessionId)
  }

  /** Forgets a session: its mode and its `session` grants. */
  endSession(sessionId: string): void {
    this.modes.set(sessionId, undefined)
    this.ledger.endSession(sessionId)
  }

  /** Every remembered grant, oldest first. */
  grants(): Readonly<Grant>[] {
    return this.ledger.list()
  }

  /**
   * Reads the grant store again: `always` grants given or revoked by other instances on a
   * shared store (a database) take effect here. Hosts call it on a timer; see `GrantLedger.refresh`.
   * `wanted`, asked right before the read, lets a stopping host skip it.
   */
  refreshGrants(wanted?: () => boolean): Promise<void> {
    if (!this.durable?.shared) return this.ledger.refresh(wanted)
    return Promise.all([this.ledger.refresh(wanted), this.durable.refresh(wanted)]).then(() => {})
  }

  /**
   * Reads a shared pending store again (`PendingStore.shared`): requests other instances
   * asked are shown here, those they answered or closed go, and a call of this process whose
   * request another instance claimed ends (denied, saying the call runs there). `refreshGrants`
   * does this too, on the timer hosts already run. Does nothing for an unshared store.
   */
  refreshPending(wanted?: () => boolean): Promise<void> {
    return this.durable?.refresh(wanted) ?? Promise.resolve()
  }

  /**
   * Switches where questions are kept, under the living engine (a database that started
   * after it, or went), as `useStore` does for grants: the writes under way finish first (at
   * most 10 s), then the new store is read (its requests are restored, closed or left to
   * their instance) and this process's open requests are written to it, and removed from the
   * old store. Resolves once that is done. Throws on an engine made with `durable: false`.
   */
  usePendingStore(store: PendingStore): Promise<void> {
    checkPendingStore(store, 'usePendingStore()')
    if (!this.durable) throw new PermissionError('INVALID_OPTIONS', 'usePendingStore(): this engine does not keep questions (durable: false)')
    return this.durable.useStore(store)
  }

  /**
   * Registers the tools host's side of resuming: an answer to a restored request is carried
   * out through it (`ResumeHandler`), once the engine has checked the answerer, claimed the
   * request in the store and authorized the call again. One handler at a time: a later one
   * replaces it; the returned function removes it. Without one, such answers are refused and
   * the requests stay open.
   */
  onResume(handler: ResumeHandler): () => void {
    if (!this.durable) throw new PermissionError('INVALID_OPTIONS', 'onResume(): this engine does not keep questions (durable: false)')
    return this.durable.onResume(handler)
  }

  /**
   * Switches where `always` grants persist, under the living engine: rules, askers, modes,
   * `session` grants and requests waiting for an answer stay as they are. Saves already
   * started finish on the old store; then the new store's grants are the ones in force. An
   * answer given meanwhile is saved to the new store. Hosts call this when a database
   * appears or goes; resolves once the new store is read.
   */
  useStore(store: GrantStore): Promise<void> {
    if (!store || typeof store.load !== 'function' || typeof store.save !== 'function') {
      throw new PermissionError('INVALID_OPTIONS', 'useStore() expects a grant store { load, save, add?, remove? }')
    }
    return this.ledger.useStore(store)
  }

  /** Removes a grant; `always` grants are removed from the store too. True when it existed. */
  revoke(id: string): boolean {
    return this.ledger.revoke(id)
  }

  /**
   * Requests waiting for an answer, for UIs that list them: those this process asked, then
   * those restored from the pending store (`request.restored`), oldest first.
   */
  pending(): Readonly<PermissionRequest>[] {
    const own = [...this.pendings].map((pending) => pending.request)
    return this.durable ? [...own, ...this.durable.list()] : own
  }

  /**
   * Stops the engine: every waiting request ends as a denial with `reason` (by default, that
   * the permissions service stopped while waiting for approval), askers are
   * dropped, and the returned promise settles once grants are saved. Idempotent. With a
   * pending store, kept requests stay in it: their calls end denied with "interrupted while
   * waiting for approval (the request is kept and asked again after a restart)", and the
   * promise settles once every write to the store has too.
   */
  async stop(reason?: string): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      for (const pending of [...this.pendings]) {
        if (this.durable?.isKept(pending.request.id)) pending.end(denied({ cause: 'stopped', when: 'waiting', kept: true }), { kind: 'stopped', kept: true })
        else pending.end(reason === undefined ? denied({ cause: 'stopped', when: 'waiting' }) : { decision: 'deny', reason }, { kind: 'stopped' })
      }
      this.askers.clear()
    }
    await Promise.all([this.ledger.saved(), this.durable?.stop()])
  }

  /** @internal PendingApproval asks here whether an answer must be claimed in a shared store first. */
  claim(pending: PendingApproval, by: Approver): Promise<ClaimResult> | undefined {
    if (pending.input.elicit) return undefined
    return this.durable?.claim(pending, by)
  }

  /**
   * @internal PendingApproval asks here about an approver's edited arguments: they are
   * validated (the pipeline's `edit.revise`), then decided again as a new request from the
   * same caller. Synchronous, so the answer is accepted or refused at once.
   */
  reviseFor(pending: PendingApproval, value: unknown, by: Approver): EditVerdict {
    return reviseEdit(pending.input, value, by, (request) => this.decide(request), this.defaultApprovers)
  }

  /** @internal PendingApproval reports here when it ends. */
  settled(pending: PendingApproval, outcome: ApprovalOutcome, source: DecisionSource): void {
    this.pendings.delete(pending)
    if (pending.input.elicit) return
    this.durable?.ended(pending.request.id, source)
    // An edited call is what was approved: its request, not the model's, is remembered and reported.
    const decided = outcome.edited?.request ?? pending.input
    let created = false
    if (source.kind === 'answer' && outcome.decision === 'allow' && source.scope !== 'once' && !this.stopped) {
      source.grant = this.ledger.remember(source.scope, decided, label(source.by))
      created = true
    }
    this.report('approve', decided, { decision: outcome.decision, reason: outcome.reason, rule: source }, pending.request, undefined, outcome.denial)
    // Others waiting on the same thing need not be asked again.
    if (created) {
      for (const other of [...this.pendings]) {
        if (other.input.reason !== undefined || other.input.confirm === 'always') continue
        const result = this.decide(other.input)
        if (result.decision === 'allow') other.end({ decision: 'allow', reason: result.reason }, result.rule as DecisionSource)
      }
    }
  }

  private decide(request: AuthorizeRequest): AuthorizeResult {
    return decideCall(request, this.rules, this.modes, this.ledger)
  }

  private early(request: ApprovalRequest, outcome: ApprovalOutcome, source: DecisionSource): Promise<ApprovalOutcome> {
    this.report('approve', request, { decision: outcome.decision, reason: outcome.reason, rule: source }, undefined, undefined, outcome.denial)
    return Promise.resolve({ ...outcome, rule: source })
  }

  /** A decision the pipeline made (a middleware blocked the call), reported like the engine's own. */
  reportDecision({ request, decision, reason, source }: PipelineDecision): void {
    this.report(source.kind === 'quota' ? 'quota' : 'middleware', request, { decision, reason, rule: source })
  }

  private report(phase: DecisionEvent['phase'], request: DecisionEvent['request'], result: AuthorizeResult, asked?: Readonly<PermissionRequest>, restored?: Readonly<PendingRecord>, denial?: Denial) {
    if (!this.onDecision || !this.wantsDecision()) return
    const event: DecisionEvent = { phase, decision: result.decision, reason: result.reason, source: result.rule as DecisionSource, request, at: Date.now() }
    if (denial && result.decision === 'deny') event.denial = denial
    if (asked) {
      event.requestId = asked.id
      event.approvers = asked.approvers
    }
    if (restored) {
      event.requestId = restored.id
      event.approvers = restored.approvers
      event.restored = true
      event.askedAt = restored.createdAt
    }
    try {
      this.onDecision(event)
    } catch (error) {
      this.logger.warn('a permissions/decision listener threw: %s', error)
    }
  }
}

/** A pending store has the methods the engine calls. */
function checkPendingStore(store: PendingStore, where: string): void {
  const methods = ['load', 'put', 'remove', 'claim', 'get'] as const
  if (!store || typeof store !== 'object' || methods.some((name) => typeof store[name] !== 'function')) {
    throw new PermissionError('INVALID_OPTIONS', `${where} expects a pending store { load, put, remove, claim, get }`)
  }
}
