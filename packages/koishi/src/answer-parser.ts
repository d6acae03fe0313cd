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
