import type { AskScope } from '@dogu/core'

/** A chat reply read as an answer to a permission question. */
export interface ParsedAnswer {
  decision: 'allow' | 'deny'
  /** `once` for a denial. */
  scope: AskScope
  /** The question's number, when the reply names one: `y 2`. */
  number?: number
}

type Meaning = Omit<ParsedAnswer, 'number'>

const ONCE: Meaning = Object.freeze({ decision: 'allow', scope: 'once' })
const SESSION: Meaning = Object.freeze({ decision: 'allow', scope: 'session' })
const ALWAYS: Meaning = Object.freeze({ decision: 'allow', scope: 'always' })
const DENY: Meaning = Object.freeze({ decision: 'deny', scope: 'once' })

/**
 * Every word of every language the plugin speaks: a reply need not be in the question's
 * language. Only these words, alone or with a number, are answers; anything longer is
 * conversation and goes on to the rest of the bot.
 */
export const ANSWER_WORDS: ReadonlyMap<string, Meaning> = new Map([
  ['y', ONCE], ['yes', ONCE], ['允许', ONCE],
  ['s', SESSION], ['session', SESSION], ['本会话', SESSION],
  ['a', ALWAYS], ['always', ALWAYS], ['总是', ALWAYS],
  ['n', DENY], ['no', DENY], ['拒绝', DENY],
])

/** The words that ask for a question's whole preview (`d 2`), in every language. */
export const DETAILS_WORDS: ReadonlySet<string> = new Set(['d', 'details', '详情'])

// A word, then optionally a number (`y 2`, `y2`, `允许 #2`), then optionally a full stop.
const SHAPE = /^(\S+?)\s*(?:#?\s*(\d{1,6}))?\s*[.。!！]?$/u

/** A reply as one word and an optional positive number, or `undefined` when it is neither. */
function readReply(text: string): { word: string; number?: number } | undefined {
  if (typeof text !== 'string' || text.length > 32) return undefined
  const match = SHAPE.exec(text.normalize('NFKC').trim().toLowerCase())
  if (!match) return undefined
  if (match[2] === undefined) return { word: match[1] }
  const number = Number(match[2])
  return number > 0 ? { word: match[1], number } : undefined
}

/**
 * Reads a reply as an answer, or returns `undefined` when it is not one. Case, width
 * (`Ｙ`, `２`) and surrounding space do not matter.
 *
 * @example
 * parseAnswer('y')      // { decision: 'allow', scope: 'once' }
 * parseAnswer('本会话 2') // { decision: 'allow', scope: 'session', number: 2 }
 * parseAnswer('yes please') // undefined
 */
export function parseAnswer(text: string): ParsedAnswer | undefined {
  const reply = readReply(text)
  const meaning = reply && ANSWER_WORDS.get(reply.word)
  if (!meaning) return undefined
  return reply.number === undefined ? { ...meaning } : { ...meaning, number: reply.number }
}

/**
 * Reads a reply as a request for a question's whole preview (`d`, `详情 2`), or returns
 * `undefined` when it is not one; read like `parseAnswer`.
 *
 * @example
 * parseDetails('d')     // {}
 * parseDetails('详情 2') // { number: 2 }
 */
export function parseDetails(text: string): { number?: number } | undefined {
  const reply = readReply(text)
  if (!reply || !DETAILS_WORDS.has(reply.word)) return undefined
  return reply.number === undefined ? {} : { number: reply.number }
}

/** The words that dismiss a tool's form without answering it (`c 2`), in every language: MCP's `cancel`, not a no. */
export const CANCEL_WORDS: ReadonlySet<string> = new Set(['c', 'cancel', '取消'])

/**
 * Reads a reply as dismissing a form (`c`, `取消 2`), or returns `undefined` when it is not
 * one; read like `parseAnswer`. Only a form (`call.elicit`) can be dismissed: an approval
 * is answered or left to time out.
 *
 * @example
 * parseCancel('取消')  // {}
 * parseCancel('c 2') // { number: 2 }
 */
export function parseCancel(text: string): { number?: number } | undefined {
  const reply = readReply(text)
  if (!reply || !CANCEL_WORDS.has(reply.word)) return undefined
  return reply.number === undefined ? {} : { number: reply.number }
}

/** A chat reply that edits a call's arguments before approving it: `e {"limit": 5}`. */
export interface ParsedEdit {
  /** The question's number, when the reply names one: `e 2 {…}`. */
  number?: number
  /** `once` unless the reply says `s` / `a` (本会话 / 总是) before the JSON. */
  scope: AskScope
  /** The fields to change, merged over the call's arguments key by key. */
  changes: Record<string, unknown>
}

/**
 * Why a reply that starts like an edit cannot be read, for a reply under
 * `dogu.approvals.edit-problem`:
 * - `too-long`: over `max` characters (the console takes longer edits).
 * - `shape`: no fields after the edit word (a bare `e`, `e 2`), or words between it and the JSON that are neither a number nor a scope.
 * - `scope`: `word` stands where a scope goes (`s`, `a`) and is none.
 * - `json`: the JSON did not parse; `at` says where when the parser did.
 * - `object`: the JSON parsed, but into `got`, not an object of fields (`e ["x"]`).
 * `number` is the question's number, when the reply named one.
 */
export type EditProblem = { number?: number } & (
  | { problem: 'too-long'; max: number }
  | { problem: 'shape' }
  | { problem: 'scope'; word: string }
  | { problem: 'json'; at?: JsonPlace }
  | { problem: 'object'; got: 'array' | 'string' | 'number' | 'boolean' | 'null' }
)

/**
 * Where a JSON text broke: its line and column (1-based), and the text just before and after
 * that place; `end` when the text ended before it was complete (`{"a":`).
 */
export interface JsonPlace {
  line: number
  column: number
  before: string
  after: string
  end: boolean
}

/** The words that start an edit, in every language the plugin speaks. */
export const EDIT_WORDS: ReadonlySet<string> = new Set(['e', 'edit', '改', '修改'])

/** Longest edit reply read: arguments beyond it belong in the console. */
export const MAX_EDIT_LENGTH = 16_384

// After the edit word: an optional number, an optional scope word, then the JSON (an object,
// or anything else a person typed where it goes: `[`), which may span lines.
const EDIT_HEAD = /^\s*(?:#?\s*(\d{1,6}))?\s*(\S+)?\s*$/u

/**
 * Reads a reply as an edit: `e {json}` / `改 {json}`, optionally with the question's number
 * and a scope (`e 2 a {"path": "src"}`). `undefined` when the reply is not an edit at all
 * (no edit word, or words after it that are conversation: `e la la`); an `EditProblem` when
 * it is one but cannot be taken, so the person hears why instead of the bot taking it as
 * conversation: a bare `e` (what an edit looks like), JSON that does not parse (where), JSON
 * that is not an object (`e ["x"]`).
 *
 * @example
 * parseEdit('e {"limit": 5}') // { scope: 'once', changes: { limit: 5 } }
 * parseEdit('改 2 总是 {"path": "docs"}') // { number: 2, scope: 'always', changes: { path: 'docs' } }
 * parseEdit('e {"a":') // { problem: 'json', at: { line: 1, column: 6, before: '{"a":', after: '', end: true } }
 */
export function parseEdit(text: string): ParsedEdit | EditProblem | undefined {
  if (typeof text !== 'string') return undefined
  const trimmed = text.trim()
  // Only the word is normalized: the JSON is kept exactly as typed.
  const first = /^\S+/u.exec(trimmed)?.[0] ?? ''
  const word = first.normalize('NFKC').toLowerCase().replace(/[{[].*$/su, '').replace(/#?\d+$/u, '')
  if (!word || !EDIT_WORDS.has(word)) return undefined
  // The edit word's own length as typed: `e2{`, `改 {`.
  const wordEnd = first.normalize('NFKC').toLowerCase().indexOf(word) + word.length
  const rest = trimmed.slice(wordEnd)
  const body = rest.search(/[{[]/u)
  const head = EDIT_HEAD.exec(body < 0 ? rest : rest.slice(0, body))
  // Words that are no number or scope, and no JSON: conversation (`e la la`).
  if (body < 0 && (!head || (head[2] !== undefined && !isScopeWord(head[2])))) return undefined
  if (trimmed.length > MAX_EDIT_LENGTH) return { problem: 'too-long', max: MAX_EDIT_LENGTH }
  if (!head || (head[1] !== undefined && Number(head[1]) === 0)) return { problem: 'shape' }
  const number = head[1] === undefined ? {} : { number: Number(head[1]) }
  // `e`, `e 2`, `e 2 a`: an edit with no fields.
  if (body < 0) return { problem: 'shape', ...number }
  let scope: AskScope = 'once'
  if (head[2] !== undefined) {
    const meaning = ANSWER_WORDS.get(head[2].normalize('NFKC').toLowerCase())
    if (!meaning || meaning.decision !== 'allow') return { problem: 'scope', word: head[2], ...number }
    scope = meaning.scope
  }
  const json = rest.slice(body).trim()
  let changes: unknown
  try {
    changes = JSON.parse(json)
  } catch (error) {
    const at = jsonPlace(json, error instanceof Error ? error.message : String(error))
    return at ? { problem: 'json', at, ...number } : { problem: 'json', ...number }
  }
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) {
    return { problem: 'object', got: changes === null ? 'null' : Array.isArray(changes) ? 'array' : typeof changes as 'string', ...number }
  }
  const edit: ParsedEdit = { scope, changes: changes as Record<string, unknown> }
  if (head[1] !== undefined) edit.number = Number(head[1])
  return edit
}

function isScopeWord(word: string): boolean {
  return ANSWER_WORDS.get(word.normalize('NFKC').toLowerCase())?.decision === 'allow'
}

/** Characters of the text shown on each side of where JSON broke. */
const PLACE_SIDE = 12

/** Where `JSON.parse` broke in `json`, from its message (V8 says `at position N`, or that the text ended). */
function jsonPlace(json: string, message: string): JsonPlace | undefined {
  const at = /at position (\d+)/.exec(message)
  const position = at ? Number(at[1]) : /Unexpected end of JSON input/.test(message) ? json.length : undefined
  if (position === undefined || position > json.length) return undefined
  const end = position === json.length
  const before = json.slice(0, position)
  const line = before.split('\n').length
  const column = position - before.lastIndexOf('\n')
  const squeezed = (part: string) => Array.from(part.replace(/\s+/gu, ' '))
  return {
    line,
    column,
    before: squeezed(before).slice(-PLACE_SIDE).join(''),
    after: squeezed(json.slice(position)).slice(0, PLACE_SIDE).join(''),
    end,
  }
}
