import type { AnswerResult, Approver, AskAnswer, AskScope, PermissionRequest, RespondStatus } from '@dogu/core'

interface Waiting {
  request: Readonly<PermissionRequest>
  respond: (answer: AskAnswer) => RespondStatus
  /** What came of an answer once carried out (`AskerContext.answer`); the engine always gives it. */
  answer?: (answer: AskAnswer) => Promise<AnswerResult>
}

/** An answer to a tool's form from the console: its values, a no, or closed unanswered. */
export type FormAnswer = { value: unknown } | { decline: true; dismiss?: never } | { dismiss: true; decline?: never }

/**
 * The console as an asker: it holds every question shown to it until someone answers
 * on the page, or the question ends elsewhere (a chat answered first, a timeout). The
 * engine settles a question once, so the first answer wins, wherever it came from.
 */
export class ConsoleAsker {
  private waiting = new Map<string, Waiting>()

  constructor(private operator: Approver) {}

  /** The `Asker` to register with `ctx.permissions.asker()`. */
  readonly asker = (request: Readonly<PermissionRequest>, context: { signal: AbortSignal; respond: Waiting['respond']; answer?: Waiting['answer'] }): void => {
    if (context.signal.aborted) return
    this.waiting.set(request.id, { request, respond: context.respond, ...(context.answer ? { answer: context.answer } : {}) })
    context.signal.addEventListener('abort', () => this.waiting.delete(request.id), { once: true })
  }

  /** Questions waiting for an answer, oldest first. */
  list(): Readonly<PermissionRequest>[] {
    return [...this.waiting.values()].map((entry) => entry.request)
  }

  /**
   * Answers a question as the operator (or as `by`, the user a console transport logged
   * in). `closed` when it was already settled (another asker answered first, or it timed
   * out) or never shown here. `value`, with `allow` on a question that offers an edit
   * (`request.input`), is the call's edited arguments: `invalid` when they fail the tool's
   * validation, `not-allowed` when the edited call falls under approvers `by` is not among.
   */
  answer(id: string, decision: 'allow' | 'deny', scope: AskScope = 'once', reason?: string, by: Approver = this.operator, value?: unknown): RespondStatus {
    const entry = this.waiting.get(id)
    if (!entry) return 'closed'
    return entry.respond({ decision, scope, by, via: 'console', ...(reason ? { reason } : {}), ...(value !== undefined ? { value } : {}) })
  }

  /**
   * `answer`, resolving with what came of it once carried out: for a question asked again
   * after a restart (`request.restored`), whose answer counts only once the pending store
   * says so (claimed here, authorized again, its call started as a background task).
   */
  async carryOut(id: string, decision: 'allow' | 'deny', scope: AskScope = 'once', reason?: string, by: Approver = this.operator, value?: unknown): Promise<AnswerResult> {
    const entry = this.waiting.get(id)
    if (!entry) return { status: 'closed', open: false }
    const given: AskAnswer = { decision, scope, by, via: 'console', ...(reason ? { reason } : {}), ...(value !== undefined ? { value } : {}) }
    if (entry.answer) return entry.answer(given)
    const status = entry.respond(given)
    return { status, open: status === 'invalid' || status === 'not-allowed' }
  }

  /**
   * Answers a tool's form (a question of kind `elicitation`) as the operator or `by`: its
   * values (`invalid` when the form refuses them), `decline` (a no), or `dismiss` (closed
   * unanswered: the tool reads `cancel`). `closed` as for `answer`.
   */
  fill(id: string, answer: FormAnswer, by: Approver = this.operator): RespondStatus {
    const entry = this.waiting.get(id)
    if (!entry) return 'closed'
    if ('value' in answer) return entry.respond({ decision: 'allow', value: answer.value, by, via: 'console' })
    return entry.respond({ decision: 'deny', by, via: 'console', ...(answer.dismiss ? { dismissed: true } : {}) })
  }

  /** Forgets every question (the console is going away; the engine denies what only it showed). */
  clear(): void {
    this.waiting.clear()
  }
}
