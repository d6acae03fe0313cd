import { randomBytes } from 'node:crypto'
import type { ParsedAnswer } from './answer-parser'
import type { Question } from './question-board'

/** What a button does: one of the four answers, `details` (post the whole preview), or `cancel` (dismiss a form). */
export type ButtonAction = Omit<ParsedAnswer, 'number'> | { decision: 'details' } | { decision: 'cancel' }

/** A button of a question, as the table hands it out and takes it back. */
export interface ApprovalButton {
  readonly id: string
  readonly question: Question
  readonly action: ButtonAction
}

/** Every id starts so: presses of other plugins' buttons are none of the asker's business. */
export const BUTTON_PREFIX = 'dogu:'

/**
 * The ids of the buttons on open questions. An id is its table's mark and 104 random bits (`crypto`), so it
 * cannot be guessed from another; it belongs to one question and one action, and works
 * once: `take` removes it, and closing its question removes all of the question's ids.
 * Who may press it is its question's: the caller or an approver (`mayAnswer`), checked
 * by whoever takes it, before it is taken, so a bystander's press spends nothing.
 */
export class ApprovalButtons {
  /**
   * The first 3 of an id's 16 bytes: this table's mark (one per load of the chat approvals,
   * so one per process start), so that a press of a button posted before a restart can be
   * told from a used one, and the presser pointed to the question posted again. The other 13
   * bytes (104 bits) are random per id.
   */
  private readonly run = randomBytes(3)
  private readonly mark = BUTTON_PREFIX + this.run.toString('base64url')
  private buttons = new Map<string, ApprovalButton>()
  private byQuestion = new Map<Question, Set<string>>()

  /** How many ids are live. */
  get size(): number {
    return this.buttons.size
  }

  /** New ids for a question's buttons, one per action, in order. */
  issue(question: Question, actions: readonly ButtonAction[]): ApprovalButton[] {
    let ids = this.byQuestion.get(question)
    if (!ids) this.byQuestion.set(question, ids = new Set())
    return actions.map((action) => {
      const button: ApprovalButton = { id: BUTTON_PREFIX + Buffer.concat([this.run, randomBytes(13)]).toString('base64url'), question, action }
      this.buttons.set(button.id, button)
      ids.add(button.id)
      return button
    })
  }

  /** The live button with this id, left live; `undefined` for an id never issued, used or closed. */
  find(id: string): ApprovalButton | undefined {
    return this.buttons.get(id)
  }

  /** Whether an id was issued by this table (not before a restart); it may be spent or closed since. */
  issuedHere(id: string): boolean {
    return id.startsWith(this.mark)
  }

  /** Spends an id: it will not work again. */
  take(id: string): void {
    const button = this.buttons.get(id)
    if (!button) return
    this.buttons.delete(id)
    this.byQuestion.get(button.question)?.delete(id)
  }

  /** Removes every id of a question (it closed). */
  revoke(question: Question): void {
    for (const id of this.byQuestion.get(question) ?? []) this.buttons.delete(id)
    this.byQuestion.delete(question)
  }

  /** Removes every id. */
  clear(): void {
    this.buttons.clear()
    this.byQuestion.clear()
  }
}
