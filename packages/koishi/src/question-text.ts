import { askedMessage, type PermissionRequest } from '@dogu/core'
import { type Context, h } from 'koishi'
import type { ApprovalButton } from './approval-buttons'
import { durationIn } from './format-duration'
import { previewMessages, shownPreview } from './preview-text'
import type { Question } from './question-board'

/**
 * What the chat asker says, in a question's languages: the question with its bounded
 * preview and its buttons, the whole preview, the lists and the replies. Everything a
 * tool or a caller wrote (summary, reason, preview) is inserted as text, never markup.
 */
export function questionTexts(ctx: Context) {
  const text = (locales: readonly string[], key: string, params: object = {}): h[] =>
    ctx.i18n.render([...locales], [`dogu.approvals.${key}`], params)
  const plain = (locales: readonly string[], key: string, params: object = {}) =>
    text(locales, key, params).map((element) => element.toString(true)).join('')

  // The rule or default that asked, in the chat's language; a tool's own reason as it wrote it.
  const reasonText = (locales: readonly string[], request: Readonly<PermissionRequest>) => {
    const message = askedMessage(request)
    if (!message) return request.reason
    const { effect, ...params } = message.params
    return text(locales, `reason.${message.key}`, effect ? { ...params, effect: text(locales, `effect.${effect}`) } : params)
  }

  /** The preview as the question shows it: each field bounded, a hint when `d` has more. */
  const previewText = ({ request, number, locales }: Question): h[] => {
    const { fields, cut } = shownPreview(request.preview)
    const out: h[] = []
    for (const { field, text: shown, hidden } of fields) {
      out.push(h.text('\n'), ...text(locales, `preview.${field}`))
      // A diff or a text of several lines starts on a line of its own.
      out.push(h.text(field === 'diff' || shown.includes('\n') ? `\n${shown}` : shown))
      if (hidden && 'lines' in hidden) out.push(h.text('\n'), ...text(locales, 'hidden-lines', { count: hidden.lines }))
      else if (hidden) out.push(...text(locales, 'hidden-chars', { count: hidden.chars }))
    }
    if (cut) out.push(h.text('\n'), ...text(locales, 'details-hint', { number }))
    return out
  }

  /** How to edit the call before approving it, with one of its fields as the example. */
  const editHint = ({ request, locales }: Question): h[] => {
    const input = request.input
    if (!input || !input.initial || typeof input.initial !== 'object') return []
    return [h.text('\n'), ...text(locales, 'edit-hint', { example: editExample(input.initial as Record<string, unknown>) })]
  }

  return {
    text,

    /** The question: who asks and why, the preview, how to answer, then its buttons (if any). */
    question(question: Question, buttons: readonly ApprovalButton[] = []): h[] {
      const { request, number, locales } = question
      const { unit, count } = durationIn(request.expiresAt - request.createdAt)
      return [
        ...text(locales, 'question', { number, tool: request.tool, summary: request.summary, reason: reasonText(locales, request) }),
        ...(request.repaired ? [h.text('\n'), ...text(locales, 'repaired', { steps: request.repaired.steps.join(', ') })] : []),
        ...previewText(question),
        ...editHint(question),
        h.text('\n'),
        ...text(locales, 'answer', {
          choices: text(locales, request.confirm === 'always' ? 'choices-confirm' : 'choices', { number }),
          timeout: text(locales, `duration.${unit}`, [count]),
        }),
        ...buttons.map(({ id, action }) => h('button', { type: 'action', id }, text(locales, `button.${buttonName(action)}`))),
      ]
    },

    /** The whole preview, as messages of a sane size, each saying which part it is. */
    details({ request, number, locales }: Question): h[] {
      if (!request.preview) return text(locales, 'no-preview', { number })
      const bodies = previewMessages(request.preview, (field) => plain(locales, `preview.${field}`))
      return bodies.map((body, index) => h('message', [
        ...text(locales, 'details', { number, summary: request.summary, index: index + 1, total: bodies.length }),
        h.text(`\n${body}`),
      ]))
    },

    /** A heading, then one line per question. */
    list(locales: readonly string[], head: h[], questions: readonly Question[]): h[] {
      return [
        ...head,
        ...questions.flatMap(({ request, number }) => [h.text('\n'), ...text(locales, 'item', { number, tool: request.tool, summary: request.summary })]),
      ]
    },
  }
}

export type QuestionTexts = ReturnType<typeof questionTexts>

/** `{"limit": 5}`: the call's first field with its value, as the example of an edit. */
function editExample(initial: Record<string, unknown>): string {
  const [key] = Object.keys(initial)
  if (key === undefined) return '{}'
  const value = JSON.stringify(initial[key])
  return `{${JSON.stringify(key)}: ${value && value.length <= 40 ? value : '…'}}`
}

function buttonName(action: ApprovalButton['action']): string {
  if (action.decision === 'details') return 'details'
  if (action.decision === 'deny') return 'deny'
  return action.scope
}
