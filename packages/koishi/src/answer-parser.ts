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

/** Why a reply that starts like an edit cannot be read: a locale key under `dogu.approvals.edit-problem`, and what to fill in. */
export interface EditProblem {
  problem: 'too-long' | 'shape' | 'scope' | 'json' | 'object'
  detail?: string
}

/** The words that start an edit, in every language the plugin speaks. */
export const EDIT_WORDS: ReadonlySet<string> = new Set(['e', 'edit', '改', '修改'])

/** Longest edit reply read: arguments beyond it belong in the console. */
export const MAX_EDIT_LENGTH = 16_384

// A word, an optional number, an optional scope word, then a JSON object (which may span lines).
const EDIT_SHAPE = /^(\S+?)(?:\s*#?\s*(\d{1,6}))?(?:\s+(\S+?))?\s*(\{[\s\S]*\})\s*$/u

/**
 * Reads a reply as an edit: `e {json}` / `改 {json}`, optionally with the question's number
 * and a scope (`e 2 a {"path": "src"}`). `undefined` when the reply is not an edit at all
 * (no edit word, or no `{`: conversation); an `EditProblem` when it starts like one but
 * cannot be read, so the person hears why instead of the bot taking it as conversation.
 *
 * @example
 * parseEdit('e {"limit": 5}') // { scope: 'once', changes: { limit: 5 } }
 * parseEdit('改 2 总是 {"path": "docs"}') // { number: 2, scope: 'always', changes: { path: 'docs' } }
 */
export function parseEdit(text: string): ParsedEdit | EditProblem | undefined {
  if (typeof text !== 'string') return undefined
  const trimmed = text.trim()
  // Only the word is normalized: the JSON is kept exactly as typed.
  const word = /^\S+/u.exec(trimmed)?.[0].normalize('NFKC').toLowerCase().replace(/\{.*$/su, '').replace(/#?\d+$/u, '')
  if (!word || !EDIT_WORDS.has(word) || !trimmed.includes('{')) return undefined
  if (trimmed.length > MAX_EDIT_LENGTH) return { problem: 'too-long', detail: String(MAX_EDIT_LENGTH) }
  const match = EDIT_SHAPE.exec(trimmed)
  if (!match || (match[2] !== undefined && Number(match[2]) === 0)) return { problem: 'shape' }
  let scope: AskScope = 'once'
  if (match[3] !== undefined) {
    const meaning = ANSWER_WORDS.get(match[3].normalize('NFKC').toLowerCase())
    if (!meaning || meaning.decision !== 'allow') return { problem: 'scope', detail: match[3] }
    scope = meaning.scope
  }
  let changes: unknown
  try {
    changes = JSON.parse(match[4])
  } catch (error) {
    return { problem: 'json', detail: error instanceof Error ? error.message : String(error) }
  }
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return { problem: 'object' }
  const edit: ParsedEdit = { scope, changes: changes as Record<string, unknown> }
  if (match[2] !== undefined) edit.number = Number(match[2])
  return edit
}
