import type { AnswerResult, AskAnswer, PermissionRequest, RespondStatus } from '@dogu/core'

/** A permission request shown in a chat channel, waiting for a reply there. */
export interface Question {
  readonly request: Readonly<PermissionRequest>
  /** Its number in the channel, the smallest free one when it was asked: `y 2` names it. */
  readonly number: number
  /** `platform:channelId`, where it was asked and where replies count. */
  readonly channel: string
  /** The channel's id on its platform, to post in it again (the end of `channel`). */
  readonly channelId: string
  /** The bot that asked (`platform:selfId`); replies count only as that bot receives them. */
  readonly bot: string
  /** The locales it was asked in, best first; replies about it use them too. */
  readonly locales: readonly string[]
  /** Hands an answer to the permission engine. */
  readonly respond: (answer: AskAnswer) => RespondStatus
  /**
   * Hands an answer to the engine and resolves with what came of it (`AskerContext.answer`):
   * a restored request's is carried out (claimed, authorized again, started) before it says.
   */
  readonly answer?: (answer: AskAnswer) => Promise<AnswerResult>
  /** The ids of the messages that asked it, once sent: a reply quoting one names it. */
  messageIds: readonly string[]
}

export type QuestionFields = Omit<Question, 'number' | 'messageIds'>

/**
 * The questions open in each channel. A question is taken down when its request ends
 * (`signal` aborts: answered here or elsewhere, expired, cancelled, stopped), when its
 * `close` is called, or by `clear`; nothing of it stays behind, and `onClose` hears of it
 * (to take down what else belongs to it: its buttons).
 */
export class QuestionBoard {
  private channels = new Map<string, Map<number, Question>>()
  private closers = new Set<() => void>()

  constructor(private onClose?: (question: Question) => void) {}

  /** How many questions are open, in every channel. */
  get size(): number {
    return this.closers.size
  }

  /** Opens a question under the smallest number free in its channel; the returned function closes it. */
  open(fields: QuestionFields, signal: AbortSignal): { question: Question; close: () => void } {
    let questions = this.channels.get(fields.channel)
    if (!questions) this.channels.set(fields.channel, questions = new Map())
    let number = 1
    while (questions.has(number)) number++
    const question: Question = { ...fields, number, messageIds: [] }
    questions.set(number, question)
    const close = () => {
      if (!this.closers.delete(close)) return
      signal.removeEventListener('abort', close)
      questions.delete(number)
      if (!questions.size && this.channels.get(fields.channel) === questions) this.channels.delete(fields.channel)
      this.onClose?.(question)
    }
    this.closers.add(close)
    if (signal.aborted) close()
    else signal.addEventListener('abort', close, { once: true })
    return { question, close }
  }

  /** The questions a bot asked in a channel, by number. */
  in(channel: string, bot: string): Question[] {
    const questions = this.channels.get(channel)
    if (!questions) return []
    return [...questions.values()].filter((question) => question.bot === bot).sort((a, b) => a.number - b.number)
  }

  /** Closes every question. */
  clear(): void {
    for (const close of [...this.closers]) close()
  }
}
