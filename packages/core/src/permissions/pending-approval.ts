import type { Logger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, ElicitQuestion, RevisedCall } from '../permission-gate'
import { answerAuthor, label } from './answer-check'
import type { AnswerResult, Approver, ApproverPolicy, AskAnswer, Asker, AskerContext, AskScope, PermissionRequest, RespondStatus } from './asker'
import { describeApprovers, mayAnswer } from './may-answer'
import type { DecisionSource } from './permission-decision'
import { showRequest } from './show-request'
import { elsewhereOf, type TakenElsewhere, takenResult } from './taken-elsewhere'
import { messageOf } from '../error-message'
import { info } from '../logger'
import { enUS } from '../messages/en-us'
import type { RevisionRefusal } from '../result-params'
import type { Denial } from '../types/denial'

export { label } from './answer-check'

/** What the store said of an answer's claim (`ApprovalHost.claim`): won, or who had claimed it first. */
export type ClaimResult = { won: true } | { won: false; by?: string; instance?: string; closed?: string }

/** The engine's side of a pending approval. */
export interface ApprovalHost {
  readonly logger: Logger
  /** Called once when the approval ends, whatever ended it. */
  settled(pending: PendingApproval, outcome: ApprovalOutcome, source: DecisionSource): void
  /** Checks an approver's edited arguments and decides the edited call (see `PermissionEngine.reviseFor`). */
  reviseFor(pending: PendingApproval, value: unknown, by: Approver): EditVerdict
  /**
   * Optional: claims the request in a shared pending store before an answer counts (another
   * instance may answer it too). `undefined` when no claim is needed: the answer counts now.
   */
  claim?(pending: PendingApproval, by: Approver): Promise<ClaimResult> | undefined
}

/** How a pending approval is kept (`permissions.durable`). */
export interface KeptOptions {
  /** Settles once the request's record is written (`true`) or could not be (`false`); handed to askers as `kept`. */
  kept?: Promise<boolean>
  /** With no asker left it keeps waiting (for an asker added later, or its expiry) instead of ending. */
  outlivesAskers?: boolean
}

/**
 * What the engine made of an approver's edit: refused (the request keeps waiting), or the
 * edited call allowed (`once`: the answer cannot be remembered) or denied by the rules.
 */
export type EditVerdict =
  | { refused: 'invalid' | 'not-allowed'; why: string; refusal?: RevisionRefusal }
  | { revised: RevisedCall; decision: 'allow'; once: boolean }
  | { revised: RevisedCall; decision: 'deny'; reason: string; denial: Denial }

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
  private live = new Set<Asker>()
  private done = false
  /** Set while an accepted answer waits for its claim (`ApprovalHost.claim`): who gave it, and what came of it. */
  private claiming?: { by: string; result: Promise<AnswerResult> }
  /** Why the last answer `respond` turned down was refused, or what the accepted one decided, for `answer`. */
  private said?: string
  /** The structured form of `said`, for an edit refused (`AnswerResult.refusal`). */
  private refusal?: RevisionRefusal
  /** Set when another instance's answer ended it (its claim in the store): what a later answer here hears. */
  private takenElsewhere?: TakenElsewhere
  private readonly context: AskerContext
  /** Why the askers that cannot reach anyone for this request said so (`CANNOT_ASK`). */
  private unreachable: string[] = []
  /** The last asker failure that was not `CANNOT_ASK`. */
  private failure: { error: unknown } | undefined
  private onAbort = () => this.end(denied({ cause: 'cancelled', when: 'waiting' }), { kind: 'cancelled' })

  constructor(
    private host: ApprovalHost,
    /** What askers are shown; replaced once, marked `durable: false`, when its record could not be kept. */
    public request: Readonly<PermissionRequest>,
    /** What the pipeline passed in; re-evaluated when a new grant could cover it. */
    readonly input: ApprovalRequest,
    askers: readonly Asker[],
    private signal: AbortSignal | undefined,
    timeout: number,
    private readonly keeping: KeptOptions = {},
  ) {
    this.promise = new Promise((resolve) => { this.resolve = resolve })
    this.timer = setTimeout(() => this.end(denied({ cause: 'expired', timeoutMs: timeout }), { kind: 'timeout', timeout }), timeout)
    signal?.addEventListener('abort', this.onAbort, { once: true })
    this.context = {
      signal: this.controller.signal,
      respond: (answer: AskAnswer) => this.respond(answer),
      answer: (answer: AskAnswer) => this.answer(answer),
      elsewhere: () => elsewhereOf(this.takenElsewhere),
      ...(keeping.kept ? { kept: keeping.kept } : {}),
    }
    for (const asker of askers) this.live.add(asker)
    for (const asker of askers) this.showTo(asker)
  }

  get ended(): boolean {
    return this.done
  }

  /** Shows the request to an asker registered after it was asked (a durable engine shows it to every asker). */
  show(asker: Asker): void {
    if (this.done) return
    this.live.add(asker)
    this.showTo(asker)
  }

  private showTo(asker: Asker): void {
    showRequest(asker, this.request, this.context, (answer) => { if (!this.done) this.respond(answer) }, (error) => this.failed(asker, error))
  }

  /** Its record could not be kept: the question says so to askers shown it from now on (and in `pending()`). */
  notKept(): void {
    if (this.request.durable === false) return
    this.request = Object.freeze({ ...this.request, durable: false as const })
  }

  /**
   * `respond`, then what came of the answer: at once, or once its claim settled
   * (`ApprovalHost.claim`). Never rejects.
   */
  answer(answer: AskAnswer): Promise<AnswerResult> {
    // Answered on another instance while this answer was read: it hears whose answer counted.
    if (this.takenElsewhere) return Promise.resolve(takenResult(this.takenElsewhere))
    if (this.claiming) return Promise.resolve(this.done ? { status: 'closed', open: false } : { status: 'taken', by: this.claiming.by, open: false })
    this.said = undefined
    this.refusal = undefined
    const status = this.respond(answer)
    // `respond` may have started a claim (TypeScript narrowed the field before the call).
    const claiming = this.claiming as PendingApproval['claiming']
    if (status === 'accepted' && claiming) return claiming.result
    const result: AnswerResult = { status, open: status === 'invalid' || status === 'not-allowed' }
    if (this.said !== undefined) result.reason = this.said
    if (this.refusal) result.refusal = this.refusal
    return Promise.resolve(result)
  }

  /**
   * Checks an answer and ends the request with it when its author may answer. Anything
   * else is ignored (and logged): a spoofed or malformed answer never ends a request.
   */
  respond(answer: AskAnswer): RespondStatus {
    if (this.done || this.claiming) return 'closed'
    const by = answerAuthor(answer)
    if (!by) {
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
    const outcome: ApprovalOutcome = answer.decision === 'allow'
      ? { decision: 'allow', reason: `approved by ${label(by)} (${scope})` }
      : denied(answer.reason ? { cause: 'declined', by: label(by), reason: String(answer.reason) } : { cause: 'declined', by: label(by) })
    return this.conclude(outcome, answer.via ? { kind: 'answer', by, scope, via: answer.via } : { kind: 'answer', by, scope })
  }

  /**
   * Ends the request with an accepted answer: now, or once the store says this instance
   * claimed it (a shared store); when another claimed it first, the call ends here saying
   * it runs there.
   */
  private conclude(outcome: ApprovalOutcome, source: Extract<DecisionSource, { kind: 'answer' }>): 'accepted' {
    const claim = this.host.claim?.(this, source.by)
    if (!claim) {
      this.end(outcome, source)
      this.said = outcome.reason
      return 'accepted'
    }
    const by = label(source.by)
    // The host settles claims; a claim that failed anyway counts the answer given here.
    const result = claim.catch((): ClaimResult => ({ won: true })).then((claimed): AnswerResult => {
      if (claimed.won) {
        if (this.done) return { status: 'closed', open: false }
        this.end(outcome, source)
        return { status: 'accepted', open: false, ...(outcome.reason ? { reason: outcome.reason } : {}) }
      }
      const elsewhere = denied({
        cause: 'elsewhere',
        ...(claimed.instance ? { instance: claimed.instance } : {}),
        ...(claimed.closed ? { closed: claimed.closed } : claimed.by ? { by: claimed.by } : {}),
      })
      const reason = elsewhere.reason!
      this.end(elsewhere, { kind: 'elsewhere', ...(claimed.instance ? { instance: claimed.instance } : {}), ...(claimed.by ? { by: claimed.by } : {}) })
      if (claimed.closed) return { status: 'closed', reason, open: false }
      return { status: 'taken', reason, open: false, ...(claimed.by ? { by: claimed.by } : {}) }
    })
    this.claiming = { by, result }
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
      this.said = verdict.why
      this.refusal = verdict.refusal
      return verdict.refused
    }
    // Sent back unchanged: a plain approval of the call as the model made it.
    if (!verdict.revised.changes.length) return this.respond({ ...answer, value: undefined })
    const source: Extract<DecisionSource, { kind: 'answer' }> = { kind: 'answer', by, scope: 'once', edited: true }
    if (answer.via) source.via = answer.via
    if (verdict.decision === 'deny') {
      return this.conclude({ ...denied({ cause: 'edit_denied', by: label(by), denial: verdict.denial }), edited: verdict.revised }, source)
    }
    if (!verdict.once) source.scope = scope
    return this.conclude({ decision: 'allow', reason: `approved by ${label(by)} (${source.scope}) with edited arguments`, edited: verdict.revised }, source)
  }

  /**
   * An asker was removed; with none left, nobody can answer, and the request ends. A kept
   * request waits on: an asker added later is shown it (a host restarting its chat).
   */
  askerGone(asker: Asker): void {
    if (!this.live.delete(asker) || this.live.size || this.done || this.keeping.outlivesAskers) return
    this.end(denied({ cause: 'askers_unloaded' }), { kind: 'askers-failed' })
  }

  /** Ends the request once; later calls do nothing. */
  end(outcome: ApprovalOutcome, source: DecisionSource): void {
    if (this.done) return
    this.done = true
    if (source.kind === 'elsewhere' && source.by) {
      this.takenElsewhere = { by: source.by, ...(source.instance ? { instance: source.instance } : {}), ...(outcome.reason ? { reason: outcome.reason } : {}) }
    }
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
      this.end(denied({ cause: 'askers_failed', error: messageOf(this.failure.error) }), { kind: 'askers-failed' })
      return
    }
    const why = [...new Set(this.unreachable)]
    this.end(denied(this.request.kind === 'elicitation' ? { cause: 'unreachable', tool: this.request.tool, elicitation: true, why } : { cause: 'unreachable', tool: this.request.tool, why }), { kind: 'no-asker' })
  }
}

/** An asker's "not mine to show" (any coded error with `code: 'CANNOT_ASK'`), as opposed to a failure. */
function cannotAsk(error: unknown): boolean {
  return !!error && typeof error === 'object' && (error as { code?: unknown }).code === 'CANNOT_ASK'
}

function describePolicy(policy: ApproverPolicy): string {
  return describeApprovers(policy)
}

/** A deny with its reason in the model's English and its structured form. */
export function denied(denial: Denial): ApprovalOutcome & { reason: string } {
  return { decision: 'deny', reason: enUS.denial(denial), denial }
}
