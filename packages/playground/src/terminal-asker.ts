import { type Approver, type AskAnswer, type Asker, mayAnswer, type PermissionRequest, type RespondStatus, type ToolPreview } from '@dogu/core'
import { formLines, parseFormLine } from './terminal-form'

/** What an `AskLine` resolves with when the person pressed Ctrl-C at the question: a denial. */
export const INTERRUPTED: unique symbol = Symbol('interrupted')

/**
 * Writes `question` and resolves with the next line typed, `undefined` at the end of the
 * input, or `INTERRUPTED` on Ctrl-C. Rejects when `signal` aborts (the request ended
 * without this answer). `ctrlC` is the answer Ctrl-C stands for, to echo after the
 * question: `n` (a denial) at a permission question, `c` (dismissed) at a tool's form.
 */
export type AskLine = (question: string, signal: AbortSignal, ctrlC?: 'n' | 'c') => Promise<string | undefined | typeof INTERRUPTED>

export interface TerminalAskerOptions {
  ask: AskLine
  /** Prints a whole line (hints, retries). */
  print(text: string): void
  /** The person at the terminal: reported as `by`; the engine checks they may answer. */
  approver: Approver
  /** Answers that are not y/s/a/n accepted before denying. @default 3 */
  tries?: number
}

type Choice = Pick<AskAnswer, 'decision' | 'scope'>

const CHOICES = new Map<string, Choice>(Object.entries({
  y: { decision: 'allow', scope: 'once' },
  yes: { decision: 'allow', scope: 'once' },
  once: { decision: 'allow', scope: 'once' },
  s: { decision: 'allow', scope: 'session' },
  session: { decision: 'allow', scope: 'session' },
  a: { decision: 'allow', scope: 'always' },
  always: { decision: 'allow', scope: 'always' },
  n: { decision: 'deny' },
  no: { decision: 'deny' },
} satisfies Record<string, Choice>))

/** What a typed answer means: `y`/`yes`/`once`, `s`/`session`, `a`/`always`, `n`/`no`, any case. */
export function parseAnswer(text: string): Choice | undefined {
  return CHOICES.get(text.trim().toLowerCase())
}

/** The question for a request: `Allow deploy(env=prod)? [y] once  [s] session  [a] always  [n] no  [e] edit `. */
export function question(request: PermissionRequest): string {
  // Remembered answers do not apply to these tools: session/always would count as once.
  const options = request.confirm === 'always' ? '[y] once  [n] no' : '[y] once  [s] session  [a] always  [n] no'
  // Offered when something of the preview was left out under the question.
  const details = request.preview && previewLines(request.preview).folded ? '  [d] details' : ''
  const edit = request.input ? '  [e] edit' : ''
  return `Allow ${request.summary}? ${options}${details}${edit} `
}

/**
 * A typed edit: `e {"limit": 5}` (or `edit …`), the fields to change merged over the call's
 * arguments; a bare `e` asks for the arguments to be shown. `undefined` when the line is not
 * an edit; a string saying what is wrong with one that cannot be read.
 */
export function parseEdit(text: string, initial: unknown): { value: Record<string, unknown> } | { show: true } | string | undefined {
  const match = /^\s*(?:e|edit)(?:\s+(.*)|\s*(\{.*))?$/is.exec(text)
  if (!match) return undefined
  const json = (match[1] ?? match[2])?.trim()
  if (!json) return { show: true }
  let changes: unknown
  try {
    changes = JSON.parse(json)
  } catch (error) {
    return `the changes are not JSON (${error instanceof Error ? error.message : String(error)}); type them like e {"limit": 5}`
  }
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return 'the changes must be a JSON object of fields, like e {"limit": 5}'
  return { value: { ...initial as object, ...changes } }
}

/** The words a form's line may be instead of its values, any case. */
const FORM_WORDS = {
  decline: new Set(['n', 'no', 'decline']),
  cancel: new Set(['c', 'cancel']),
  defaults: new Set(['y', 'yes']),
}

/** The most lines of a preview's diff shown under the question; `d` shows the rest. */
export const PREVIEW_DIFF_LINES = 20
/** The most lines of a preview's text shown under the question. */
export const PREVIEW_TEXT_LINES = 10
/** Characters of one preview line shown under the question; `d` shows whole lines. */
const LINE_WIDTH = 240

/** Whether a typed answer asks for the whole preview: `d`, `details`, `diff`, any case. */
export function isDetails(text: string): boolean {
  return DETAILS.has(text.trim().toLowerCase())
}

const DETAILS = new Set(['d', 'details', 'diff'])

/**
 * A preview as the terminal shows it under the question, each line indented: the command
 * (`$ …`, whole), the URL, the text and the diff. Bounded (`whole: false`): the text to
 * `PREVIEW_TEXT_LINES` lines, the diff to `PREVIEW_DIFF_LINES`, long lines cut, each with
 * `… N more lines: d shows them`. Control characters (escape sequences, carriage returns)
 * are shown as `\x1b`, never sent to the terminal: a file's content cannot redraw the question.
 */
export function previewLines(preview: Readonly<ToolPreview>, whole = false): { lines: string[]; folded: boolean } {
  const lines: string[] = []
  let folded = false
  const field = (text: string, max: number, first: string, rest: string) => {
    const rows = text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n').map(visible)
    const shown = whole ? rows : rows.slice(0, max)
    shown.forEach((row, i) => {
      const cut = !whole && row.length > LINE_WIDTH
      if (cut) folded = true
      lines.push(`${i ? rest : first}${cut ? `${row.slice(0, LINE_WIDTH)}… (${row.length - LINE_WIDTH} more characters)` : row}`)
    })
    if (shown.length < rows.length) {
      const left = rows.length - shown.length
      folded = true
      lines.push(`  … ${left} more line${left === 1 ? '' : 's'}: d shows them`)
    }
  }
  if (preview.command) field(preview.command, Infinity, '  $ ', '    ')
  if (preview.url) field(preview.url, Infinity, '  url: ', '       ')
  if (preview.text) field(preview.text, PREVIEW_TEXT_LINES, '  ', '  ')
  if (preview.diff) field(preview.diff, PREVIEW_DIFF_LINES, '  ', '  ')
  return { lines, folded }
}

/** Control characters as `\x1b`, so what a preview carries is shown, never obeyed. */
function visible(line: string): string {
  return line.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/**
 * An asker for `ctx.permissions.asker()` that asks at the terminal, one request at a
 * time. It answers as `approver`, so the engine accepts it when that is the caller (or
 * has the approver authority). The end of the input and Ctrl-C deny; an answer it cannot read is
 * asked again, up to `tries` times, then denies. When the request ends otherwise
 * (timeout, cancelled, answered elsewhere) it stops waiting and says so.
 */
export function terminalAsker({ ask, print, approver, tries = 3 }: TerminalAskerOptions): Asker {
  // Questions share one input: a second request waits until the first is answered.
  let queue: Promise<void> = Promise.resolve()
  return (request, { signal, respond }) => {
    // Not ours to answer (a call from the console, which only its operator may approve):
    // left to the askers that can, rather than a question whose answer would be ignored.
    if (!mayAnswer(request.approvers, approver)) return
    if (request.kind === 'elicitation' && request.input) {
      const turn = queue.then(() => fillForm(request, signal, respond))
      queue = turn.catch(() => {})
      return turn
    }
    const turn = queue.then(async () => {
      // An edit the engine refuses (the edited call needs someone else) is asked about again.
      while (!signal.aborted) {
        const answer = await askUntilAnswered(request, signal)
        if (!answer) return
        const status = respond({ ...answer, via: 'terminal' })
        if (status === 'not-allowed') print(answer.value === undefined
          ? `  (that answer did not count: ${approver.id} may not answer this request)`
          : `  (the edit did not apply: ${approver.id} may not approve the call as edited)`)
        if (answer.value === undefined || status === 'accepted' || status === 'closed') return
      }
    })
    queue = turn.catch(() => {})
    return turn
  }

  /**
   * A tool's form (`call.elicit`): the tool's message and fields, then one line of
   * `key=value` pairs or a JSON object. A value the form refuses is explained and asked
   * again (one of the tries); `n` declines; `c`, Ctrl-C, the end of the input or running out
   * of tries dismiss it unanswered (the tool reads `cancel`); `y` sends the defaults.
   */
  async function fillForm(request: PermissionRequest, signal: AbortSignal, respond: (answer: AskAnswer) => RespondStatus): Promise<void> {
    const input = request.input!
    const dismiss = (reason: string) => { respond({ decision: 'deny', dismissed: true, by: approver, via: 'terminal', reason }) }
    print(`  ${request.tool} asks: ${visible(input.message ?? request.reason)}`)
    for (const line of formLines(input)) print(`    ${visible(line)}`)
    const start = input.initial && typeof input.initial === 'object' ? input.initial as Record<string, unknown> : {}
    const defaults = input.check(start) === undefined ? '  [y] send the defaults' : ''
    const prompt = `Fill in the form of ${request.tool} (key=value … or {json}):${defaults}  [n] decline  [c] cancel `
    for (let i = 0; i < tries && !signal.aborted; i++) {
      const ended = () => print(`\n  (${signal.reason instanceof Error ? signal.reason.message : 'the form was closed'})`)
      signal.addEventListener('abort', ended, { once: true })
      let line: string | undefined | typeof INTERRUPTED
      try {
        line = await ask(prompt, signal, 'c')
      } catch {
        return
      } finally {
        signal.removeEventListener('abort', ended)
      }
      if (line === undefined) return dismiss('the input ended before an answer')
      if (line === INTERRUPTED) return dismiss('cancelled with Ctrl-C at the terminal')
      const word = line.trim().toLowerCase()
      if (FORM_WORDS.cancel.has(word)) return dismiss('cancelled at the terminal')
      if (FORM_WORDS.decline.has(word)) {
        respond({ decision: 'deny', by: approver, via: 'terminal' })
        return
      }
      const read = FORM_WORDS.defaults.has(word) ? { values: {} } : parseFormLine(line, input)
      if (typeof read === 'string') {
        print(`  ${visible(read)}`)
        continue
      }
      if (!read) {
        print('  Please type the fields as key=value pairs (a value with spaces in quotes) or as a JSON object, n to decline or c to cancel.')
        continue
      }
      const value = { ...start, ...read.values }
      const problem = input.check(value)
      if (problem) {
        print(`  the form was not sent: ${visible(problem)}`)
        continue
      }
      const status = respond({ decision: 'allow', value, by: approver, via: 'terminal' })
      if (status === 'accepted' || status === 'closed') return
      print(status === 'not-allowed' ? `  (that answer did not count: ${approver.id} may not answer this form)` : '  the form was not sent: the values do not fit the form')
    }
    if (!signal.aborted) dismiss(`no valid answer in ${tries} tries`)
  }

  async function askUntilAnswered(request: PermissionRequest, signal: AbortSignal): Promise<AskAnswer | undefined> {
    if (request.reason) print(`  why: ${request.reason}`)
    const preview = request.preview
    if (preview) for (const line of previewLines(preview).lines) print(line)
    // `d` shows the whole preview and asks again; it is not one of the tries.
    for (let i = 0; i < tries;) {
      // The request ended without us (timeout, cancelled, answered elsewhere): close the
      // open question at once, before the call's result is printed.
      const ended = () => print(`\n  (${signal.reason instanceof Error ? signal.reason.message : 'the permission request ended'})`)
      signal.addEventListener('abort', ended, { once: true })
      let line: string | undefined | typeof INTERRUPTED
      try {
        line = await ask(question(request), signal)
      } catch {
        return
      } finally {
        signal.removeEventListener('abort', ended)
      }
      if (line === undefined) return { decision: 'deny', by: approver, reason: 'the input ended before an answer' }
      if (line === INTERRUPTED) return { decision: 'deny', by: approver, reason: 'denied with Ctrl-C at the terminal' }
      if (preview && isDetails(line)) {
        for (const row of previewLines(preview, true).lines) print(row)
        continue
      }
      const input = request.input
      const edit = input ? parseEdit(line, input.initial) : undefined
      if (edit && typeof edit === 'object' && 'show' in edit) {
        print(`  arguments: ${visible(JSON.stringify(input!.initial))}`)
        print('  type the fields to change as JSON, like e {"limit": 5}')
        continue
      }
      if (edit && typeof edit === 'object') {
        const problem = input!.check(edit.value)
        if (!problem) {
          // The call as it runs (the schema's defaults filled in, secrets masked), shown before it runs.
          const resolved = input!.resolve?.(edit.value)
          if (resolved && 'args' in resolved) print(`  runs with: ${visible(JSON.stringify(resolved.args))}`)
          return { decision: 'allow', scope: 'once', by: approver, value: edit.value }
        }
        print(`  the edit did not apply: ${visible(problem)}`)
        i++
        continue
      }
      if (typeof edit === 'string') {
        print(`  ${edit}`)
        i++
        continue
      }
      const choice = parseAnswer(line)
      if (choice) return { ...choice, by: approver }
      print(`  Please answer y (once), s (session), a (always) or n (no)${preview ? ', or d for the whole preview' : ''}${input ? ', or e {json} to edit' : ''}.`)
      i++
    }
    return { decision: 'deny', by: approver, reason: `no valid answer in ${tries} tries` }
  }
}
