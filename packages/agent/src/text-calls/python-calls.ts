import { skipSpace } from '../call-envelope'
import type { FoundCall } from './markup-reader'

// Calls written as Python, as Llama 3.2 and 4 write them: `[get_weather(city='LA', days=3), …]`.
// Keyword arguments only, with Python's literals (strings, numbers, True, False, None, lists,
// tuples and dicts), turned into JSON. A positional argument, an expression or a name is not a
// call: which parameter it meant, or what it evaluates to, would be a guess.

type Parsed<T> = { value: T; end: number } | 'cut-off' | undefined

const IDENTIFIER = /[A-Za-z_][\w.]*/y
const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y
const LITERALS: ReadonlyMap<string, string> = new Map([['True', 'true'], ['False', 'false'], ['None', 'null']])
const ESCAPES: ReadonlyMap<string, string> = new Map([['n', '\n'], ['t', '\t'], ['r', '\r'], ['b', '\b'], ['f', '\f'], ['0', '\0'], ['\\', '\\'], ["'", "'"], ['"', '"'], ['\n', '']])
/** How deep lists and dicts may nest: a guard for the recursion, far past what a call holds. */
const MAX_DEPTH = 64

/** The calls from `at`: a bracketed list of them, or one call alone. */
export function pythonCalls(text: string, at: number): Parsed<FoundCall[]> {
  let cursor = skipSpace(text, at)
  const bracketed = text[cursor] === '['
  if (bracketed) cursor = skipSpace(text, cursor + 1)
  const calls: FoundCall[] = []
  while (true) {
    const call = pythonCall(text, cursor)
    if (!call || call === 'cut-off') return call
    calls.push(call.value)
    cursor = skipSpace(text, call.end)
    if (cursor >= text.length) return bracketed ? 'cut-off' : { value: calls, end: cursor }
    if (text[cursor] === ',') {
      cursor = skipSpace(text, cursor + 1)
      if (cursor >= text.length) return 'cut-off'
      if (bracketed && text[cursor] === ']') return { value: calls, end: cursor + 1 }
      continue
    }
    if (bracketed) return text[cursor] === ']' ? { value: calls, end: cursor + 1 } : undefined
    return { value: calls, end: cursor }
  }
}

function pythonCall(text: string, at: number): Parsed<FoundCall> {
  IDENTIFIER.lastIndex = at
  const name = IDENTIFIER.exec(text)?.[0]
  if (!name) return at >= text.length ? 'cut-off' : undefined
  // `brave_search.call(…)` is one of Llama's built-in tools, a method call, not a function of this toolset.
  if (name.includes('.')) return undefined
  let cursor = skipSpace(text, at + name.length)
  if (cursor >= text.length) return 'cut-off'
  if (text[cursor] !== '(') return undefined
  cursor = skipSpace(text, cursor + 1)
  const members: string[] = []
  while (text[cursor] !== ')') {
    if (cursor >= text.length) return 'cut-off'
    IDENTIFIER.lastIndex = cursor
    const key = IDENTIFIER.exec(text)?.[0]
    if (!key || key.includes('.')) return undefined
    cursor = skipSpace(text, cursor + key.length)
    if (cursor >= text.length) return 'cut-off'
    if (text[cursor] !== '=') return undefined
    const value = literal(text, skipSpace(text, cursor + 1), 0)
    if (!value || value === 'cut-off') return value
    members.push(`${JSON.stringify(key)}:${value.value}`)
    cursor = skipSpace(text, value.end)
    if (text[cursor] === ',') cursor = skipSpace(text, cursor + 1)
    else if (cursor < text.length && text[cursor] !== ')') return undefined
  }
  return { value: { name, arguments: `{${members.join(',')}}` }, end: cursor + 1 }
}

/** A Python literal at `at`, as JSON text. */
function literal(text: string, at: number, depth: number): Parsed<string> {
  if (at >= text.length) return 'cut-off'
  if (depth > MAX_DEPTH) return undefined
  const char = text[at]
  if (char === '"' || char === "'") return pythonString(text, at)
  if (char === '[' || char === '(') return sequence(text, at, char === '[' ? ']' : ')', depth)
  if (char === '{') return dict(text, at, depth)
  NUMBER.lastIndex = at
  const number = NUMBER.exec(text)?.[0]
  if (number) {
    const end = at + number.length
    if (end >= text.length) return 'cut-off'
    // `1_000`, `0x1F`, `3j`: Python's other numbers are not JSON's.
    if (/[\w.]/.test(text[end])) return undefined
    const value = Number(number)
    return Number.isFinite(value) ? { value: /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(number) ? number : String(value), end } : undefined
  }
  IDENTIFIER.lastIndex = at
  const word = IDENTIFIER.exec(text)?.[0]
  if (word && LITERALS.has(word)) return { value: LITERALS.get(word)!, end: at + word.length }
  if (word && at + word.length >= text.length && [...LITERALS.keys()].some((name) => name.startsWith(word))) return 'cut-off'
  return undefined
}

/** A single- or double-quoted string, its escapes as Python reads them. */
function pythonString(text: string, at: number): Parsed<string> {
  const quote = text[at]
  let value = ''
  for (let i = at + 1; i < text.length; i++) {
    const char = text[i]
    if (char === quote) return { value: JSON.stringify(value), end: i + 1 }
    if (char === '\n') return undefined
    if (char !== '\\') {
      value += char
      continue
    }
    const next = text[++i]
    if (next === undefined) return 'cut-off'
    const escape = ESCAPES.get(next)
    if (escape !== undefined) {
      value += escape
    } else if (next === 'x' || next === 'u') {
      const digits = next === 'x' ? 2 : 4
      const hex = text.slice(i + 1, i + 1 + digits)
      if (hex.length < digits && i + 1 + hex.length >= text.length) return 'cut-off'
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length < digits) return undefined
      value += String.fromCharCode(parseInt(hex, 16))
      i += digits
    } else {
      // Python keeps an unknown escape as it is, backslash and all.
      value += `\\${next}`
    }
  }
  return 'cut-off'
}

function sequence(text: string, at: number, close: string, depth: number): Parsed<string> {
  const items: string[] = []
  let cursor = skipSpace(text, at + 1)
  while (text[cursor] !== close) {
    const item = literal(text, cursor, depth + 1)
    if (!item || item === 'cut-off') return item
    items.push(item.value)
    cursor = skipSpace(text, item.end)
    if (text[cursor] === ',') cursor = skipSpace(text, cursor + 1)
    else if (cursor >= text.length) return 'cut-off'
    else if (text[cursor] !== close) return undefined
  }
  return { value: `[${items.join(',')}]`, end: cursor + 1 }
}

function dict(text: string, at: number, depth: number): Parsed<string> {
  const members: string[] = []
  let cursor = skipSpace(text, at + 1)
  while (text[cursor] !== '}') {
    const key = literal(text, cursor, depth + 1)
    if (!key || key === 'cut-off') return key
    // JSON's keys are strings; Python's numbers as keys become their text, as json.dumps writes them.
    const name = key.value.startsWith('"') ? key.value : /^-?[\d.]/.test(key.value) ? JSON.stringify(key.value) : undefined
    if (!name) return undefined
    cursor = skipSpace(text, key.end)
    if (cursor >= text.length) return 'cut-off'
    if (text[cursor] !== ':') return undefined
    const value = literal(text, skipSpace(text, cursor + 1), depth + 1)
    if (!value || value === 'cut-off') return value
    members.push(`${name}:${value.value}`)
    cursor = skipSpace(text, value.end)
    if (text[cursor] === ',') cursor = skipSpace(text, cursor + 1)
    else if (cursor >= text.length) return 'cut-off'
    else if (text[cursor] !== '}') return undefined
  }
  return { value: `{${members.join(',')}}`, end: cursor + 1 }
}
