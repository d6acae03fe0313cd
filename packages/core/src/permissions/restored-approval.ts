import { messageOf } from '../error-message'
import { info, type Logger } from '../logger'
import { answerAuthor, label } from './answer-check'
import type { AnswerResult, Approver, AskAnswer, Asker, AskerContext, PermissionRequest, RespondStatus } from './asker'
import { describeApprovers, mayAnswer } from './may-answer'
import type { PendingRecord } from './pending-record'
import { showRequest } from './show-request'
import { elsewhereOf, type TakenElsewhere, takenResult } from './taken-elsewhere'

const MAX_TIMEOUT = 2 ** 31 - 1

/** What the engine made of an answer to a restored request that passed the checks of form and approver. */
export type RestoredVerdict =
  /**
   * Refused at once: `respond`'s status, and why. `open`: the request waits on. `refusal`,
   * `denial`, `approvers`: the reason's structured form (`AnswerResult`'s).
   */
  | { status: Exclude<RespondStatus, 'accepted'>; reason: string; open: boolean } & Pick<AnswerResult, 'refusal' | 'denial' | 'approvers'>
  /** Being carried out (a claim in the store, then the call): `result` says how it ended. */
  | { status: 'accepted'; result: Promise<AnswerResult> }

/** The engine's side of a restored request. */
export interface RestoredHost {
  readonly logger: Logger
  /** An answer from someone who may give it: refused, or carried out (`DurableRequests.answer`). */
  answered(restored: RestoredApproval, answer: AskAnswer, by: Approver): RestoredVerdict
  /** The request's expiry came. */
  expired(restored: RestoredApproval): void
}

/**
 * A request read from the pending store and asked again (`PermissionRequest.restored`): no
 * call of this process waits for it. It is shown to every asker, those registered later too;
 * an answer from someone who may give it goes to the engine, which claims it in the store,
 * authorizes the call again and hands it to the tools host to run once. It ends when that is
 * done, when the store says another instance answered or closed it, at its expiry, or when
 * the engine stops; whatever ends it aborts the askers' signal and clears the timer.
 */
export class RestoredApproval {
  private readonly controller = new AbortController()
  private readonly context: AskerContext
  private timer?: ReturnType<typeof setTimeout>
  private done = false
  /** Set while an accepted answer is carried out: who gave it, and what came of it. */
  private answering?: { by: string; result: Promise<AnswerResult> }
  /** Set when another instance's answer ended it: what a later answer here hears. */
  private takenElsewhere?: TakenElsewhere

  constructor(
    private readonly host: RestoredHost,
    readonly record: Readonly<PendingRecord>,
    /** What askers are shown; replaced (same id) when a tools host arrives with the edit form. */
    public request: Readonly<PermissionRequest>,
    /** When the request expires here: the record's expiry, later for another instance's (it closes its own first). */
    closesAt: number,
  ) {
    this.context = {
      signal: this.controller.signal,
      respond: (answer: AskAnswer) => this.respond(answer),
      answer: (answer: AskAnswer) => this.answer(answer),
      elsewhere: () => elsewhereOf(this.takenElsewhere),
      kept: Promise.resolve(true),
    }
    this.arm(closesAt)
  }

  get ended(): boolean {
    return this.done
  }

  /** True while an accepted answer is being carried out (its claim, its call). */
  get busy(): boolean {
    return this.answering !== undefined && !this.done
  }

  show(asker: Asker): void {
    if (this.done) return
    showRequest(asker, this.request, this.context, (answer) => { if (!this.done) this.respond(answer) }, (error) => {
      // Not this asker's to show (`CANNOT_ASK`: another session's channel) is expected; the others still show it.
      if ((error as { code?: unknown } | undefined)?.code === 'CANNOT_ASK') info(this.host.logger, 'restored permission request %s (%s) cannot be shown by one of its askers: %s', this.request.id, this.request.summary, messageOf(error))
      else this.host.logger.warn('an asker failed on restored permission request %s (%s): %s', this.request.id, this.request.summary, error)
    })
  }

  /**
   * Checks an answer (its form, who gave it) and hands it to the engine. Anything else is
   * ignored and logged, as for a live request: a spoofed or malformed answer never counts.
   */
  respond(answer: AskAnswer): RespondStatus {
    return this.take(answer).status
  }

  /** `respond`, then what came of the answer once it was carried out. Never rejects. */
  answer(answer: AskAnswer): Promise<AnswerResult> {
    // Answered on another instance while this answer was read: it hears whose answer counted.
    if (this.takenElsewhere) return Promise.resolve(takenResult(this.takenElsewhere))
    if (this.answering) return Promise.resolve(this.done ? { status: 'closed', open: false } : { status: 'taken', by: this.answering.by, open: false })
    const { result, ...taken } = this.take(answer)
    return result ?? Promise.resolve(taken)
  }

  private take(answer: AskAnswer): AnswerResult & { status: RespondStatus; result?: Promise<AnswerResult> } {
    if (this.done || this.answering) return { status: 'closed', open: false }
    const by = answerAuthor(answer)
    if (!by) {
      this.host.logger.warn('ignored a malformed answer to restored permission request %s (%s): %o', this.request.id, this.request.summary, answer)
      return { status: 'invalid', open: true }
    }
    if (!mayAnswer(this.request.approvers, by)) {
      this.host.logger.warn('ignored an answer from %s to restored permission request %s (%s): only %s may answer', label(by), this.request.id, this.request.summary, describeApprovers(this.request.approvers))
      return { status: 'not-allowed', open: true }
    }
    const verdict = this.host.answered(this, answer, by)
    if (verdict.status !== 'accepted') return verdict
    this.answering = { by: label(by), result: verdict.result }
    return { status: 'accepted', open: false, result: verdict.result }
  }

  /** The carrying out failed before the request was claimed (the store could not be reached): it waits for another answer. */
  reopen(): void {
    this.answering = undefined
  }

  /**
   * Ends the request once, without a decision of its own (the engine reports those); later
   * calls do nothing. `taken`: another instance's answer ended it (who gave it, and where).
   */
  end(reason: string, taken?: { by: string; instance?: string }): void {
    if (this.done) return
    this.done = true
    if (taken) this.takenElsewhere = { ...taken, reason }
    clearTimeout(this.timer)
    this.controller.abort(new Error(`permission request ended: ${reason}`))
  }

  private arm(closesAt: number) {
    const left = closesAt - Date.now()
    // Longer than a timer holds: armed again when it fires.
    this.timer = setTimeout(() => {
      if (Date.now() >= closesAt) this.host.expired(this)
      else this.arm(closesAt)
    }, Math.max(0, Math.min(left, MAX_TIMEOUT)))
  }
}
