import { type Logger, silentLogger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, AuthorizeRequest, AuthorizeResult, ElicitQuestion, PermissionGate, PipelineDecision } from '../permission-gate'
import type { Decision } from '../types/decision'
import { approvalQuestion, elicitationQuestion } from './approval-question'
import { reviseEdit } from './argument-edit'
import type { Approver, Asker, PermissionRequest } from './asker'
import { compileRule } from './compile-rule'
import { decideCall } from './decide-call'
import type { Grant } from './grant'
import { GrantLedger } from './grant-ledger'
import { type GrantStore, MemoryGrantStore } from './grant-store'
import { type EditVerdict, label, PendingApproval } from './pending-approval'
import type { DecisionEvent, DecisionSource } from './permission-decision'
import { checkConditions, type PermissionEngineOptions } from './permission-engine-options'
import { PermissionError } from './permission-error'
import type { PermissionMode } from './permission-modes'
import type { PermissionRule, RuleCondition } from './permission-rule'
import type { DefaultApprovers } from './rule-approvers'
import { RuleIndex } from './rule-index'
import { SessionModes } from './session-modes'
import { settledWithin } from '../settled-within'

export type { PermissionEngineOptions } from './permission-engine-options'

const MAX_TIMEOUT = 2 ** 31 - 1
/** How long a pipeline ask waits for a store switch in progress before it asks anyway. */
const SWITCH_WAIT = 10_000
const DEFAULT_TIMEOUT = 300_000

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
    this.ledger = new GrantLedger(options.store ?? new MemoryGrantStore(), this.logger)
    this.ready = this.ledger.ready
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
    if (this.onDecision && this.wantsDecision()) this.report('authorize', request, result)
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
    if (this.stopped) return this.early(request, 'deny', 'the permissions service is stopped', { kind: 'stopped' })
    if (signal?.aborted) return this.early(request, 'deny', 'the call was cancelled before approval was asked', { kind: 'cancelled' })
    let why: string
    let asked: PermissionRequest['asked']
    if (request.reason === undefined) {
      const result = this.decide(request)
      if (result.decision !== 'ask') return this.early(request, result.decision, result.reason, result.rule as DecisionSource)
      why = result.reason!
      // Only a rule or an effect default asks: modes and grants allow or deny.
      asked = result.rule as PermissionRequest['asked']
    } else {
      why = String(request.reason)
    }
    if (!this.askers.size) {
      return this.early(request, 'deny', `it needs a person's approval (${why}), but no asker is registered to ask anyone`, { kind: 'no-asker' })
    }
    const shown = approvalQuestion(request, why, asked, this.defaultApprovers, this.timeout)
    const pending = new PendingApproval(this, shown, request, [...this.askers], signal, this.timeout)
    if (!pending.ended) this.pendings.add(pending)
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
    return this.ledger.refresh(wanted)
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

  /** Requests waiting for an answer, for UIs that list them. */
  pending(): Readonly<PermissionRequest>[] {
    return [...this.pendings].map((pending) => pending.request)
  }

  /**
   * Stops the engine: every waiting request ends as a denial with `reason`, askers are
   * dropped, and the returned promise settles once grants are saved. Idempotent.
   */
  async stop(reason = 'the permissions service stopped while waiting for approval'): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      for (const pending of [...this.pendings]) pending.end({ decision: 'deny', reason }, { kind: 'stopped' })
      this.askers.clear()
    }
    await this.ledger.saved()
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
    // An edited call is what was approved: its request, not the model's, is remembered and reported.
    const decided = outcome.edited?.request ?? pending.input
    let created = false
    if (source.kind === 'answer' && outcome.decision === 'allow' && source.scope !== 'once' && !this.stopped) {
      source.grant = this.ledger.remember(source.scope, decided, label(source.by))
      created = true
    }
    this.report('approve', decided, { decision: outcome.decision, reason: outcome.reason, rule: source }, pending.request)
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

  private early(request: ApprovalRequest, decision: Decision, reason: string | undefined, source: DecisionSource): Promise<ApprovalOutcome> {
    const final = decision === 'allow' ? 'allow' : 'deny'
    this.report('approve', request, { decision: final, reason, rule: source })
    return Promise.resolve(reason === undefined ? { decision: final, rule: source } : { decision: final, reason, rule: source })
  }

  /** A decision the pipeline made (a middleware blocked the call), reported like the engine's own. */
  reportDecision({ request, decision, reason, source }: PipelineDecision): void {
    this.report(source.kind === 'quota' ? 'quota' : 'middleware', request, { decision, reason, rule: source })
  }

  private report(phase: DecisionEvent['phase'], request: DecisionEvent['request'], result: AuthorizeResult, asked?: Readonly<PermissionRequest>) {
    if (!this.onDecision || !this.wantsDecision()) return
    const event: DecisionEvent = { phase, decision: result.decision, reason: result.reason, source: result.rule as DecisionSource, request, at: Date.now() }
    if (asked) {
      event.requestId = asked.id
      event.approvers = asked.approvers
    }
    try {
      this.onDecision(event)
    } catch (error) {
      this.logger.warn('a permissions/decision listener threw: %s', error)
    }
  }
}
