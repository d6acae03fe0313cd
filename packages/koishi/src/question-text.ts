import { askedMessage, type FormField, formFields, messageTerms, type PermissionRequest, type RepairStep, typedValue } from '@dogu/core'
import { type Context, h } from 'koishi'
import type { ApprovalButton } from './approval-buttons'
import { durationIn, durationLeftIn } from './format-duration'
import { catalogueLocale } from './person-locale'
import { previewMessages, shownPreview } from './preview-text'
import { type SummarizedCall, summaryIn } from './summary-text'
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

  /** The catalogue's locale beside the approvals' messages in `locales`. */
  const localeIn = (locales: readonly string[]) => catalogueLocale(ctx, locales, 'dogu.approvals')
  /** A call's summary in the question's language (its folds: `[已折叠 312 个字符]`). */
  const summary = (locales: readonly string[], call: Readonly<SummarizedCall>) => summaryIn(call, localeIn(locales))

  /** What the repair of the model's arguments did, in the question's language (`去掉了多余的逗号`). */
  const repairSteps = (locales: readonly string[], steps: readonly RepairStep[]) => {
    const words = messageTerms(localeIn(locales)).repairStep
    return steps.map((step) => words[step] ?? step).join(plain(locales, 'list-separator'))
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

  /** `username（文本，必填）：The account name`: a form's field, what it takes, and what the tool says of it. */
  const fieldLine = (locales: readonly string[], field: FormField): h[] => {
    const facts = [plain(locales, `form-facts.${field.type}`)]
    if (field.required) facts.push(plain(locales, 'form-facts.required'))
    if (field.choices) {
      const choices = field.choices.map(({ value, title }) => title ? plain(locales, 'form-facts.choice-titled', { value, title }) : value)
      facts.push(plain(locales, 'form-facts.choices', { choices: choices.join(' / ') }))
    }
    if (field.format) facts.push(plain(locales, 'form-facts.format', { format: field.format }))
    if (field.default !== undefined) facts.push(plain(locales, 'form-facts.default', { value: typedValue(field.default) }))
    const about = [field.title, field.description].filter(Boolean).join(' — ')
    const params = { key: field.key, facts: facts.join(plain(locales, 'form-facts.separator')), about }
    return [h.text('\n'), ...text(locales, about ? 'form-field-about' : 'form-field', params)]
  }

  /** A tool's form (`call.elicit`): the tool, its message and fields, how to fill, decline or dismiss it. */
  const form = (question: Question, buttons: readonly ApprovalButton[]): h[] => {
    const { request, number, locales } = question
    const input = request.input!
    const fields = formFields(input)
    const { unit, count } = durationIn(request.expiresAt - request.createdAt)
    const { pairs, json } = formExample(fields, input.initial)
    return [
      ...text(locales, 'form-question', { number, tool: request.tool, message: input.message ?? request.reason }),
      ...fields.flatMap((field) => fieldLine(locales, field)),
      h.text('\n'),
      ...text(locales, 'form-answer', {
        example: pairs,
        json,
        number,
        // `y` sends the form as it starts (its defaults), offered when those would be accepted.
        defaults: input.check(input.initial ?? {}) === undefined ? text(locales, 'form-defaults') : '',
        timeout: text(locales, `duration.${unit}`, [count]),
      }),
      ...buttons.map(({ id, action }) => h('button', { type: 'action', id }, text(locales, `button.${buttonName(action, true)}`))),
    ]
  }

  return {
    text,
    summary,
    localeIn,

    /**
     * The question: who asks and why, the preview, how to answer, then its buttons (if any).
     * A tool's form is worded as one. One asked again after a restart says so, and the time
     * it has left; one whose record could not be kept says it will not survive a restart.
     */
    question(question: Question, buttons: readonly ApprovalButton[] = []): h[] {
      if (question.request.kind === 'elicitation' && question.request.input) return form(question, buttons)
      const { request, number, locales } = question
      // A restored question has what is left of its first ask's time (as dogu.pending shows it).
      const { unit, count } = request.restored
        ? durationLeftIn(request.expiresAt - Date.now())
        : durationIn(request.expiresAt - request.createdAt)
      return [
        ...text(locales, 'question', { number, tool: request.tool, summary: summary(locales, request), reason: reasonText(locales, request) }),
        ...(request.restored ? [h.text('\n'), ...text(locales, buttons.length ? 'restored-buttons' : 'restored')] : []),
        ...(request.durable === false ? [h.text('\n'), ...text(locales, 'not-durable')] : []),
        ...(request.repaired ? [h.text('\n'), ...text(locales, 'repaired', { steps: repairSteps(locales, request.repaired.steps) })] : []),
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
        ...text(locales, 'details', { number, summary: summary(locales, request), index: index + 1, total: bodies.length }),
        h.text(`\n${body}`),
      ]))
    },

    /** A heading, then one line per question. */
    list(locales: readonly string[], head: h[], questions: readonly Question[]): h[] {
      return [
        ...head,
        ...questions.flatMap(({ request, number }) => [h.text('\n'), ...(request.kind === 'elicitation'
          ? text(locales, 'form-item', { number, tool: request.tool, message: request.input?.message ?? request.reason })
          : text(locales, 'item', { number, tool: request.tool, summary: summary(locales, request) }))]),
      ]
    },
  }
}

export type QuestionTexts = ReturnType<typeof questionTexts>

/** `{"limit": 5}`: the call's first field with its value, as the example of an edit. */
export function editExample(initial: Record<string, unknown>): string {
  const [key] = Object.keys(initial)
  if (key === undefined) return '{}'
  const value = JSON.stringify(initial[key])
  return `{${JSON.stringify(key)}: ${value && value.length <= 40 ? value : '…'}}`
}

/**
 * How to fill a form in a reply, from its first two fields: `username=bob age=3` and the
 * same as JSON. A field's value is its default, its first choice, or a stand-in of its type.
 */
export function formExample(fields: readonly FormField[], initial: unknown): { pairs: string; json: string } {
  const start = initial && typeof initial === 'object' ? initial as Record<string, unknown> : {}
  const shown = [...fields].sort((a, b) => Number(b.required) - Number(a.required)).slice(0, 2)
  if (!shown.length) return { pairs: 'key=value', json: '{"key": "value"}' }
  const sample = (field: FormField): unknown => {
    if (start[field.key] !== undefined) return start[field.key]
    if (field.choices?.length) return field.type === 'array' ? [field.choices[0].value] : field.choices[0].value
    return SAMPLES[field.format ?? ''] ?? SAMPLES[field.type]
  }
  const values = shown.map((field) => [field.key, sample(field)] as const)
  return {
    pairs: values.map(([key, value]) => `${key}=${typedValue(value)}`).join(' '),
    json: `{${values.map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`).join(', ')}}`,
  }
}

const SAMPLES: Record<string, unknown> = {
  string: '…',
  number: 1,
  integer: 1,
  boolean: true,
  array: [],
  email: 'name@example.com',
  uri: 'https://example.com',
  date: '2026-01-31',
  'date-time': '2026-01-31T09:00:00Z',
}

/** The locale key of a button's label; on a form, `deny` is declining to fill it. */
function buttonName(action: ApprovalButton['action'], form = false): string {
  if (action.decision === 'details' || action.decision === 'cancel') return action.decision
  if (action.decision === 'deny') return form ? 'decline' : 'deny'
  return action.scope
}
