import type { Logger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, ElicitQuestion, RevisedCall } from '../permission-gate'
import type { Approver, ApproverPolicy, AskAnswer, Asker, AskScope, PermissionRequest, RespondStatus } from './asker'
import { describeApprovers, mayAnswer } from './may-answer'
import type { DecisionSource } from './permission-decision'
import { messageOf } from '../error-message'
import { info } from '../logger'

const DECISIONS = new Set(['allow', 'deny'])
const SCOPES = new Set<AskScope>(['once', 'session', 'always'])

/** The engine's side of a pending approval. */
export interface ApprovalHost {
  readonly logger: Logger
  /** Called once when the approval ends, whatever ended it. */
  settled(pending: PendingApproval, outcome: ApprovalOutcome, source: DecisionSource): void
  /** Checks an approver's edited arguments and decides the edited call (see `PermissionEngine.reviseFor`). */
  reviseFor(pending: PendingApproval, value: unknown, by: Approver): EditVerdict
}

/**
 * What the engine made of an approver's edit: refused (the request keeps waiting), or the
 * edited call allowed (`once`: the answer cannot be remembered) or denied by the rules.
 */
export type EditVerdict =
  | { refused: 'invalid' | 'not-allowed'; why: string }
  | { revised: RevisedCall; decision: 'allow'; once: boolean }
  | { revised: RevisedCall; decision: 'deny'; reason: string }

/**
 * One permission request waiting for a person: it shows the request to every asker,
 * accepts the first answer from someone allowed to give it, and otherwise ends as a
 * denial on timeout, on the call's abort, when every asker failed or went away, or when
 * the engine stops. Whatever ends it aborts the askers' signal and clears the timer.
 */
export class PendingApproval {
  private readonly controller = new AbortController()
  readonly promise: Promise<ApprovalOutcome>
  private resolve!: (outcome: ApprovalOutcome) => void
  private timer: ReturnType<typeof setTimeout>
  private live: Set<Asker>
  private done = false
  /** Why the askers that cannot reach anyone for this request said so (`CANNOT_ASK`). */
  private unreachable: string[] = []
  /** The last asker failure that was not `CANNOT_ASK`. */
  private failure: { error: unknown } | undefined
  private onAbort = () => this.end({ decision: 'deny', reason: 'the call was cancelled while waiting for approval' }, { kind: 'cancelled' })

  constructor(
    private host: ApprovalHost,
    readonly request: Readonly<PermissionRequest>,
    /** What the pipeline passed in; re-evaluated when a new grant could cover it. */
    readonly input: ApprovalRequest,
    askers: readonly Asker[],
    private signal: AbortSignal | undefined,
    timeout: number,
  ) {
    this.promise = new Promise((resolve) => { this.resolve = resolve })
    this.live = new Set(askers)
    this.timer = setTimeout(() => this.end(
      { decision: 'deny', reason: `timed out waiting for approval (no answer within ${duration(timeout)})` },
      { kind: 'timeout', timeout },
    ), timeout)
    signal?.addEventListener('abort', this.onAbort, { once: true })
    const context = { signal: this.controller.signal, respond: (answer: AskAnswer) => this.respond(answer) }
    for (const asker of askers) {
      let returned: ReturnType<Asker>
      try {
        returned = asker(request, context)
      } catch (error) {
        this.failed(asker, error)
        continue
      }
      if (returned && typeof (returned as Promise<unknown>).then === 'function') {
        ;(returned as Promise<AskAnswer | void>).then(
          (answer) => { if (answer && !this.done) this.respond(answer) },
          (error) => this.failed(asker, error),
        )
      } else if (returned) {
        this.respond(returned as AskAnswer)
      }
    }
  }

  get ended(): boolean {
    return this.done
  }

  /**
   * Checks an answer and ends the request with it when its author may answer. Anything
   * else is ignored (and logged): a spoofed or malformed answer never ends a request.
   */
  respond(answer: AskAnswer): RespondStatus {
    if (this.done) return 'closed'
    const by = approverOf(answer?.by)
    if (!answer || typeof answer !== 'object' || !DECISIONS.has(answer.decision) || !by
      || (answer.scope !== undefined && !SCOPES.has(answer.scope))
      || (answer.reason !== undefined && typeof answer.reason !== 'string')
      || (answer.via !== undefined && typeof answer.via !== 'string')) {
      this.host.logger.warn('ignored a malformed answer to permission request %s (%s): %o', this.request.id, this.request.summary, answer)
      return 'invalid'
    }
    if (!mayAnswer(this.request.approvers, by)) {
      this.host.logger.warn('ignored an answer from %s to permission request %s (%s): only %s may answer', label(by), this.request.id, this.request.summary, describePolicy(this.request.approvers))
      return 'not-allowed'
    }
    if (this.input.elicit) return this.answered(answer, by, this.input.elicit)
    let scope: AskScope = answer.decision === 'allow' ? answer.scope ?? 'once' : 'once'
    // A tool that demands a fresh answer every time cannot be remembered.
    if (this.request.confirm === 'always') scope = 'once'
    if (answer.decision === 'allow' && answer.value !== undefined) return this.edited(answer, by, scope)
    const reason = answer.decision === 'allow'
      ? `approved by ${label(by)} (${scope})`
      : `${label(by)} declined it${answer.reason ? `: ${answer.reason}` : ''}`
    this.end({ decision: answer.decision, reason }, answer.via ? { kind: 'answer', by, scope, via: answer.via } : { kind: 'answer', by, scope })
    return 'accepted'
  }

  /** An answer to a tool's form: its values must fit the form; a no declines, a dismissal cancels. */
  private answered(answer: AskAnswer, by: Approver, question: ElicitQuestion): RespondStatus {
    const source: Extract<DecisionSource, { kind: 'answer' }> = { kind: 'answer', by, scope: 'once' }
    if (answer.via) source.via = answer.via
    if (answer.decision === 'deny') {
      const dismissed = answer.dismissed === true
      const reason = answer.reason ?? `${label(by)} ${dismissed ? 'dismissed' : 'declined'} the form`
      this.end({ decision: 'deny', reason, by, ...(dismissed ? { dismissed } : {}) }, source)
      return 'accepted'
    }
    const checked = question.validate(answer.value)
    if (!checked.ok) {
      this.host.logger.debug('refused an answer from %s to the form of %s: %s', label(by), this.request.tool, checked.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; '))
      return 'invalid'
    }
    this.end({ decision: 'allow', reason: `filled in by ${label(by)}`, value: checked.value, by }, source)
    return 'accepted'
  }

  /** An approval with edited arguments: accepted only when the edited call passes the engine. */
  private edited(answer: AskAnswer, by: Approver, scope: AskScope): RespondStatus {
    const verdict = this.host.reviseFor(this, answer.value, by)
    if ('refused' in verdict) {
      // A person's typo, not an attack: their asker tells them (`input.check`); the log need not shout.
      this.host.logger.debug('refused an edit from %s to permission request %s (%s): %s', label(by), this.request.id, this.request.summary, verdict.why)
      return verdict.refused
    }
    // Sent back unchanged: a plain approval of the call as the model made it.
    if (!verdict.revised.changes.length) return this.respond({ ...answer, value: undefined })
    const source: Extract<DecisionSource, { kind: 'answer' }> = { kind: 'answer', by, scope: 'once', edited: true }
    if (answer.via) source.via = answer.via
    if (verdict.decision === 'deny') {
      this.end({ decision: 'deny', reason: `${label(by)} edited the arguments, and the edited call is denied: ${verdict.reason}`, edited: verdict.revised }, source)
      return 'accepted'
    }
    if (!verdict.once) source.scope = scope
    this.end({ decision: 'allow', reason: `approved by ${label(by)} (${source.scope}) with edited arguments`, edited: verdict.revised }, source)
    return 'accepted'
  }

  /** An asker was removed; with none left, nobody can answer. */
  askerGone(asker: Asker): void {
    if (!this.live.delete(asker) || this.live.size || this.done) return
    this.end({ decision: 'deny', reason: 'every asker showing the permission request was unloaded before anyone answered' }, { kind: 'askers-failed' })
  }

  /** Ends the request once; later calls do nothing. */
  end(outcome: ApprovalOutcome, source: DecisionSource): void {
    if (this.done) return
    this.done = true
    clearTimeout(this.timer)
    this.signal?.removeEventListener('abort', this.onAbort)
    this.controller.abort(new Error(`permission request ended: ${outcome.reason ?? outcome.decision}`))
    this.host.settled(this, outcome, source)
    this.resolve({ ...outcome, rule: source })
  }

  /**
   * An asker threw. One that says it cannot reach anyone for this request (`CANNOT_ASK`: an
   * MCP client without elicitation, a session that is not its own) is expected, an info
   * line; anything else is a failure, a warning with its error. With no asker left, the
   * request is denied: "nobody could be asked" when none could, else the last failure.
   */
  private failed(asker: Asker, error: unknown) {
    if (this.done) return
    if (cannotAsk(error)) {
      info(this.host.logger, 'permission request %s (%s) of session %s cannot be shown by one of its askers: %s', this.request.id, this.request.summary, this.request.session.id, messageOf(error))
      this.unreachable.push(messageOf(error))
    } else {
      this.host.logger.warn('an asker failed on permission request %s (%s): %s', this.request.id, this.request.summary, error)
      this.failure = { error }
    }
    if (!this.live.delete(asker) || this.live.size) return
    if (this.failure) {
      this.end({ decision: 'deny', reason: `every asker failed to show the permission request (last error: ${messageOf(this.failure.error)})` }, { kind: 'askers-failed' })
      return
    }
    const what = this.request.kind === 'elicitation' ? `answer the question of ${this.request.tool}` : `approve ${this.request.tool}`
    this.end({ decision: 'deny', reason: `nobody could be asked to ${what} (${[...new Set(this.unreachable)].join('; ')})` }, { kind: 'no-asker' })
  }
}

/** An asker's "not mine to show" (any coded error with `code: 'CANNOT_ASK'`), as opposed to a failure. */
function cannotAsk(error: unknown): boolean {
  return !!error && typeof error === 'object' && (error as { code?: unknown }).code === 'CANNOT_ASK'
}

function approverOf(by: unknown): Approver | undefined {
  if (typeof by === 'string') return by ? { id: by } : undefined
  if (!by || typeof by !== 'object') return undefined
  const { id, platform, authority, permissions } = by as Approver
  if (typeof id !== 'string' || !id) return undefined
  if (platform !== undefined && typeof platform !== 'string') return undefined
  if (authority !== undefined && typeof authority !== 'number') return undefined
  if (permissions !== undefined && !(Array.isArray(permissions) && permissions.every((name) => typeof name === 'string'))) return undefined
  const approver: Approver = { id }
  if (platform !== undefined) approver.platform = platform
  if (authority !== undefined) approver.authority = authority
  if (permissions !== undefined) approver.permissions = [...permissions]
  return approver
}


function describePolicy(policy: ApproverPolicy): string {
  return describeApprovers(policy)
}

/** `discord:123`, or `123` without a platform. */
export function label(by: Approver): string {
  return by.platform ? `${by.platform}:${by.id}` : by.id
}

function duration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  if (ms % 1000 === 0) return `${ms / 1000}s`
  return `${ms} ms`
}
