import { type Logger, silentLogger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, AuthorizeRequest, AuthorizeResult, Decision, PermissionGate } from '../permission-gate'
import type { Effect } from '../tool'
import type { Asker, PermissionRequest } from './asker'
import { compileRule, normalizeTarget } from './compile-rule'
import { type Grant, type GrantPath, grantPath, grantSubject } from './grant'
import { GrantTable } from './grant-table'
import { type GrantStore, MemoryGrantStore } from './grant-store'
import { label, PendingApproval } from './pending-approval'
import type { DecisionEvent, DecisionSource } from './permission-decision'
import { PermissionError } from './permission-error'
import { EFFECT_DEFAULTS, isPermissionMode, knownEffect, PERMISSION_MODES, type PermissionMode } from './permission-modes'
import type { PermissionRule } from './permission-rule'
import { RuleIndex } from './rule-index'
import { summarizeArgs } from './summarize-args'
import { messageOf } from '../error-message'

export interface PermissionEngineOptions {
  /** Rules from config; their origin in events reads `config.rules[i]`. */
  rules?: readonly PermissionRule[]
  /** The mode of sessions that have none of their own. @default 'default' */
  mode?: PermissionMode
  /** Milliseconds a permission request waits for an answer before it is denied. @default 300_000 */
  askTimeout?: number
  /** Who may answer a request besides… see `caller` and `authority`. */
  approvers?: {
    /** The calling user may answer their own request. @default true */
    caller?: boolean
    /** Users at or above this authority may answer any request. @default 4 */
    authority?: number
  }
  /** Where `always` grants persist. @default a MemoryGrantStore (forgotten on restart) */
  store?: GrantStore
  /** Receives every decision: the `permissions/decision` event. */
  onDecision?: (event: DecisionEvent) => void
  logger?: Logger
}

interface GrantEntry {
  grant: Readonly<Grant>
  path: GrantPath
  result: Readonly<AuthorizeResult>
}

const MAX_TIMEOUT = 2 ** 31 - 1
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
  /** Set when the grant store could not be trusted at load. */
  storeProblem?: { message: string; movedTo?: string }
  private index = new RuleIndex()
  private askers = new Set<Asker>()
  private pendings = new Set<PendingApproval>()
  private sessionModes = new Map<string, PermissionMode>()
  private sessionGrants = new GrantTable<GrantEntry>()
  private alwaysGrants = new GrantTable<GrantEntry>()
  private grantsById = new Map<string, GrantEntry>()
  private saving: Promise<void>
  private loaded = false
  private stopped = false
  private readonly defaultMode: PermissionMode
  private readonly timeout: number
  private readonly approverAuthority: number
  private readonly callerMayAnswer: boolean
  private readonly store: GrantStore
  private readonly onDecision?: (event: DecisionEvent) => void
  readonly logger: Logger

  constructor(options: PermissionEngineOptions = {}) {
    if (!options || typeof options !== 'object') throw new PermissionError('INVALID_OPTIONS', 'PermissionEngine expects an options object')
    const { mode = 'default', askTimeout = DEFAULT_TIMEOUT, approvers = {} } = options
    checkMode(mode)
    if (!(typeof askTimeout === 'number' && askTimeout > 0)) throw new PermissionError('INVALID_OPTIONS', `askTimeout must be a positive number of milliseconds, got ${JSON.stringify(askTimeout)}`)
    const authority = approvers.authority ?? 4
    if (typeof authority !== 'number' || Number.isNaN(authority)) throw new PermissionError('INVALID_OPTIONS', 'approvers.authority must be a number')
    if (options.rules !== undefined && !Array.isArray(options.rules)) throw new PermissionError('INVALID_RULE', 'rules must be an array')
    this.defaultMode = mode
    this.timeout = Math.min(askTimeout, MAX_TIMEOUT)
    this.approverAuthority = authority
    this.callerMayAnswer = approvers.caller ?? true
    this.store = options.store ?? new MemoryGrantStore()
    this.onDecision = options.onDecision
    this.logger = options.logger ?? silentLogger
    // Compile every rule before indexing any: one bad rule rejects the whole config.
    const compiled = (options.rules ?? []).map((rule, i) => compileRule(rule, `config.rules[${i}]`))
    for (const rule of compiled) this.index.add(rule)
    this.ready = this.load()
    this.saving = this.ready
  }

  /** The number of rules in force. */
  get ruleCount(): number {
    return this.index.size
  }

  /** Decides a call from rules, mode, grants and defaults. Synchronous and allocation-free on the common path. */
  authorize(request: AuthorizeRequest): AuthorizeResult {
    const result = this.evaluate(request)
    if (this.onDecision) this.report('authorize', request, result)
    return result
  }

  /**
   * Asks a person. A pipeline ask (no `reason`) is decided again first, since a grant may
   * have appeared meanwhile; a tool's own `call.ask(reason)` always reaches a person.
   */
  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalOutcome> {
    if (this.stopped) return this.early(request, 'deny', 'the permissions service is stopped', { kind: 'stopped' })
    if (signal?.aborted) return this.early(request, 'deny', 'the call was cancelled before approval was asked', { kind: 'cancelled' })
    let why: string
    if (request.reason === undefined) {
      const result = this.evaluate(request)
      if (result.decision !== 'ask') return this.early(request, result.decision, result.reason, result.rule as DecisionSource)
      why = result.reason!
    } else {
      why = String(request.reason)
    }
    if (!this.askers.size) {
      return this.early(request, 'deny', `it needs a person's approval (${why}), but no asker is registered to ask anyone`, { kind: 'no-asker' })
    }
    const now = Date.now()
    const session = request.session
    const permission = { ...request.permission }
    const effect = knownEffect(request.effect)
    const shown: PermissionRequest = Object.freeze({
      id: `perm_${globalThis.crypto.randomUUID()}`,
      callId: request.callId ?? '',
      session: Object.freeze({ ...session }),
      tool: request.tool,
      permission: Object.freeze(permission),
      effect,
      summary: summarizeArgs(request.tool, request.args),
      reason: why,
      approvers: Object.freeze({
        ...(this.callerMayAnswer && session.userId !== undefined ? { userId: session.userId } : {}),
        ...(session.platform !== undefined ? { platform: session.platform } : {}),
        authority: this.approverAuthority,
      }),
      ...(request.confirm === 'always' ? { confirm: 'always' as const } : {}),
      createdAt: now,
      expiresAt: now + this.timeout,
    })
    const pending = new PendingApproval(this, shown, request, [...this.askers], signal, this.timeout)
    if (!pending.ended) this.pendings.add(pending)
    return pending.promise
  }

  /** Adds a rule at run time; the returned function removes it. */
  addRule(rule: PermissionRule, origin = 'addRule()'): () => void {
    return this.index.add(compileRule(rule, origin))
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
    if (mode === undefined) return void this.sessionModes.delete(sessionId)
    checkMode(mode)
    this.sessionModes.set(sessionId, mode)
  }

  /** The mode in force for a session. */
  modeOf(sessionId: string): PermissionMode {
    return this.sessionModes.get(sessionId) ?? this.defaultMode
  }

  /** Forgets a session: its mode and its `session` grants. */
  endSession(sessionId: string): void {
    this.sessionModes.delete(sessionId)
    for (const entry of this.sessionGrants.values()) {
      if (entry.grant.subject.sessionId === sessionId) this.drop(entry)
    }
  }

  /** Every remembered grant, oldest first. */
  grants(): Readonly<Grant>[] {
    return [...this.grantsById.values()].map((entry) => entry.grant).sort((a, b) => a.createdAt - b.createdAt)
  }

  /** Removes a grant; `always` grants are removed from the store too. True when it existed. */
  revoke(id: string): boolean {
    const entry = this.grantsById.get(id)
    if (!entry) return false
    this.drop(entry)
    if (entry.grant.scope === 'always') this.persist()
    return true
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
    await this.saving
  }

  /** @internal PendingApproval reports here when it ends. */
  settled(pending: PendingApproval, outcome: ApprovalOutcome, source: DecisionSource): void {
    this.pendings.delete(pending)
    let created: GrantEntry | undefined
    if (source.kind === 'answer' && outcome.decision === 'allow' && source.scope !== 'once' && !this.stopped) {
      created = this.remember(source.scope, pending.input, label(source.by))
      source.grant = created.grant
    }
    this.report('approve', pending.input, { decision: outcome.decision, reason: outcome.reason, rule: source }, pending.request.id)
    // Others waiting on the same thing need not be asked again.
    if (created) {
      for (const other of [...this.pendings]) {
        if (other.input.reason !== undefined || other.input.confirm === 'always') continue
        const result = this.evaluate(other.input)
        if (result.decision === 'allow') other.end({ decision: 'allow', reason: result.reason }, result.rule as DecisionSource)
      }
    }
  }

  private evaluate(request: AuthorizeRequest): AuthorizeResult {
    const name = request?.permission?.name
    const target = request?.permission?.target
    if (typeof name !== 'string' || (target !== undefined && typeof target !== 'string') || typeof request.session?.id !== 'string') {
      return MALFORMED
    }
    const effect = knownEffect(request.effect)
    const path = target === undefined ? undefined : normalizeTarget(target)
    let matched
    for (const rule of this.index.candidates(name)) {
      if (rule.matchCall(request.session, target, path)) {
        matched = rule
        break
      }
    }
    if (matched?.decision === 'deny') return matched.result
    const mode = this.sessionModes.get(request.session.id) ?? this.defaultMode
    const forced = MODE_RESULTS[mode][effect]
    if (forced) return forced
    const result = matched?.result ?? DEFAULT_RESULTS[effect]
    if (result.decision !== 'ask' || request.confirm === 'always') return result
    return this.grantFor(request, name, target) ?? result
  }

  private grantFor(request: AuthorizeRequest, name: string, target: string | undefined): AuthorizeResult | undefined {
    const { id, userId, platform } = request.session
    if (this.sessionGrants.size) {
      const entry = this.sessionGrants.get('s', id, userId, name, target)
      if (entry) return entry.result
    }
    if (this.alwaysGrants.size) {
      const entry = userId === undefined
        ? this.alwaysGrants.get('s', id, undefined, name, target)
        : this.alwaysGrants.get('u', platform, userId, name, target)
      if (entry) return entry.result
    }
  }

  private remember(scope: 'session' | 'always', request: ApprovalRequest, by: string): GrantEntry {
    const grant: Grant = {
      id: `grant_${globalThis.crypto.randomUUID()}`,
      scope,
      subject: grantSubject(scope, request.session),
      permission: request.permission.name,
      tool: request.tool,
      by,
      createdAt: Date.now(),
    }
    if (request.permission.target !== undefined) grant.target = request.permission.target
    const entry = this.track(grant)
    if (scope === 'always') this.persist()
    return entry
  }

  private track(grant: Grant): GrantEntry {
    const frozen = Object.freeze({ ...grant, subject: Object.freeze({ ...grant.subject }) })
    const path = grantPath(frozen.subject, frozen.permission, frozen.target)
    const source: DecisionSource = Object.freeze({ kind: 'grant', grant: frozen })
    const entry: GrantEntry = {
      grant: frozen,
      path,
      result: Object.freeze({ decision: 'allow', reason: `a remembered "${frozen.scope}" approval by ${frozen.by} allows it (${frozen.id})`, rule: source }),
    }
    const table = frozen.scope === 'session' ? this.sessionGrants : this.alwaysGrants
    const replaced = table.get(...path)
    if (replaced) this.grantsById.delete(replaced.grant.id)
    table.set(path, entry)
    this.grantsById.set(frozen.id, entry)
    return entry
  }

  private drop(entry: GrantEntry) {
    const table = entry.grant.scope === 'session' ? this.sessionGrants : this.alwaysGrants
    if (table.get(...entry.path) === entry) table.delete(entry.path)
    this.grantsById.delete(entry.grant.id)
  }

  private async load(): Promise<void> {
    try {
      const { grants, problem } = await this.store.load()
      if (problem) {
        this.storeProblem = problem
        this.logger.warn('%s', problem.message)
      }
      for (const grant of grants) {
        // A grant made while loading is newer than the stored one for the same key.
        if (grant.scope === 'always' && !this.alwaysGrants.get(...grantPath(grant.subject, grant.permission, grant.target))) this.track(grant)
      }
    } catch (error) {
      this.storeProblem = { message: `could not load grants: ${messageOf(error)}` }
      this.logger.warn('%s', this.storeProblem.message)
    }
    this.loaded = true
  }

  private persist() {
    const save = async () => {
      try {
        await this.store.save(this.alwaysGrants.values().map((entry) => entry.grant))
      } catch (error) {
        this.logger.warn('could not save permission grants: %s', error)
      }
    }
    // Once loaded, save now rather than a tick later: the store queues writes per file,
    // and an engine started right after (a reload) must find this one in that queue.
    this.saving = this.loaded ? Promise.all([this.saving, save()]).then(() => {}) : this.saving.then(save)
  }

  private early(request: ApprovalRequest, decision: Decision, reason: string | undefined, source: DecisionSource): Promise<ApprovalOutcome> {
    const final = decision === 'allow' ? 'allow' : 'deny'
    this.report('approve', request, { decision: final, reason, rule: source })
    return Promise.resolve(reason === undefined ? { decision: final } : { decision: final, reason })
  }

  private report(phase: DecisionEvent['phase'], request: DecisionEvent['request'], result: AuthorizeResult, requestId?: string) {
    if (!this.onDecision) return
    const event: DecisionEvent = { phase, decision: result.decision, reason: result.reason, source: result.rule as DecisionSource, request, at: Date.now() }
    if (requestId) event.requestId = requestId
    try {
      this.onDecision(event)
    } catch (error) {
      this.logger.warn('a permissions/decision listener threw: %s', error)
    }
  }
}

function checkMode(mode: unknown): asserts mode is PermissionMode {
  if (!isPermissionMode(mode)) throw new PermissionError('INVALID_MODE', `mode must be one of ${Object.keys(PERMISSION_MODES).join(', ')}, got ${JSON.stringify(mode)}`)
}

const MALFORMED: AuthorizeResult = Object.freeze({
  decision: 'deny',
  reason: 'the call named no valid permission (a permission name string, an optional target string, and a session with an id are required)',
  rule: Object.freeze({ kind: 'default', effect: 'exec' }),
})

const DEFAULT_RESULTS = Object.fromEntries(Object.entries(EFFECT_DEFAULTS).map(([effect, decision]) => [effect, Object.freeze({
  decision,
  reason: decision === 'allow' ? `no rule matches; ${effect} tools are allowed by default` : `no rule matches; ${effect} tools need approval by default`,
  rule: Object.freeze({ kind: 'default', effect }),
})])) as Record<Effect, Readonly<AuthorizeResult>>

const MODE_RESULTS = Object.fromEntries(Object.entries(PERMISSION_MODES).map(([mode, table]) => [mode, Object.fromEntries(
  Object.entries(table).map(([effect, decision]) => [effect, Object.freeze({
    decision,
    reason: `the session is in ${mode} mode, which ${decision === 'deny' ? 'denies' : 'allows'} ${effect} tools`,
    rule: Object.freeze({ kind: 'mode', mode }),
  })]),
)])) as Record<PermissionMode, Partial<Record<Effect, Readonly<AuthorizeResult>>>>
