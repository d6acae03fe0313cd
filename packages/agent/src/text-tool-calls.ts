import { envelope, NAME, skipSpace, valueEnd } from './call-envelope'

/**
 * The markup a model writes its calls in when the server has no parser for it:
 * - `hermes`, `qwen`: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one block per
 *   call; Qwen writes `"parameters"` as often as `"arguments"`. Both read the same markup.
 * - `deepseek`: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` then the
 *   arguments in a ```json fence (V3, R1), or `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}` (V3.1),
 *   each call closed by `<｜tool▁call▁end｜>`.
 * - `mistral`: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` (before tokenizer v11), or
 *   `[TOOL_CALLS]NAME[ARGS]{…}` once per call, with `[CALL_ID]…` before `[ARGS]` in v13.
 * - `auto`: the format of the first marker found.
 */
export type TextToolCallFormat = 'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral'

/** A call read from a model's text: `arguments` is the JSON text as the model wrote it, malformed or not. */
export interface TextToolCall {
  id: string
  name: string
  arguments: string
}

export interface ExtractedTextToolCalls {
  calls: TextToolCall[]
  /** The text without the calls' markup, trimmed; the input as it was when no call was found. */
  text: string
}

type Markup = 'hermes' | 'deepseek' | 'mistral'

interface Found {
  /** Where the markup ends in the text. */
  end: number
  calls: { name: string; arguments: string }[]
}

/** Reads the markup that starts at `at` (a marker matched there), or undefined when it is not a call after all. */
type Reader = (text: string, at: number) => Found | undefined

const HERMES_OPEN = '<tool_call>'
const HERMES_CLOSE = '</tool_call>'
const MISTRAL = '[TOOL_CALLS]'
// DeepSeek's tokens are `<｜tool▁calls▁begin｜>` (U+FF5C, U+2581); servers that detokenize
// loosely, and models that copy them from text, write `|` and `_` instead.
const DEEPSEEK_BEGIN = /<[|｜]tool[▁_]calls?[▁_]begin[|｜]>/y
const DEEPSEEK_CALL_BEGIN = /<[|｜]tool[▁_]call[▁_]begin[|｜]>/g
const DEEPSEEK_CALL_END = /<[|｜]tool[▁_]call[▁_]end[|｜]>/g
const DEEPSEEK_CALLS_END = /<[|｜]tool[▁_]calls[▁_]end[|｜]>/g
const DEEPSEEK_SEP = /<[|｜]tool[▁_]sep[|｜]>/
/** Where code or a marker of any format may start. */
const NEXT = /[`~]|<tool_call>|\[TOOL_CALLS\]|<[|｜]tool[▁_]calls?[▁_]begin[|｜]>/g

const READERS: Readonly<Record<Markup, { starts(text: string, at: number): boolean; read: Reader }>> = Object.freeze({
  hermes: { starts: (text, at) => text.startsWith(HERMES_OPEN, at), read: readHermes },
  deepseek: {
    starts: (text, at) => {
      DEEPSEEK_BEGIN.lastIndex = at
      return DEEPSEEK_BEGIN.test(text)
    },
    read: readDeepSeek,
  },
  mistral: { starts: (text, at) => text.startsWith(MISTRAL, at), read: readMistral },
})

/** Every `TextToolCallFormat`. */
export const TEXT_TOOL_CALL_FORMATS: readonly TextToolCallFormat[] = Object.freeze(['auto', 'hermes', 'qwen', 'deepseek', 'mistral'])

const MARKUPS: Readonly<Record<TextToolCallFormat, readonly Markup[]>> = Object.freeze({
  auto: ['hermes', 'deepseek', 'mistral'],
  hermes: ['hermes'],
  qwen: ['hermes'],
  deepseek: ['deepseek'],
  mistral: ['mistral'],
})

/**
 * Reads the tool calls a model wrote into its text (see {@link TextToolCallFormat}), for
 * servers that have no parser for the model's format. Markup inside Markdown code (a fenced
 * block or an inline span) is an example, never a call; so is a marker followed by prose.
 * Each call gets the id `text_call_<n>` (from 0, in order), and its arguments stay the text
 * the model wrote: the pipeline repairs or refuses them, as it does structured calls.
 *
 * @example
 * extractTextToolCalls('Checking.\n<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>', 'auto')
 * // { calls: [{ id: 'text_call_0', name: 'lookup', arguments: '{"q": "FR"}' }], text: 'Checking.' }
 */
export function extractTextToolCalls(text: string, format: TextToolCallFormat): ExtractedTextToolCalls {
  let markups = Object.hasOwn(MARKUPS, format) ? MARKUPS[format] : []
  const calls: TextToolCall[] = []
  const kept: string[] = []
  let from = 0
  let at = 0
  while (at < text.length) {
    // Straight to the next place anything could start: most replies hold none.
    NEXT.lastIndex = at
    const next = NEXT.exec(text)
    if (!next) break
    at = next.index
    const code = codeEnd(text, at)
    if (code !== undefined) {
      at = code
      continue
    }
    const markup = markups.find((candidate) => READERS[candidate].starts(text, at))
    const found = markup && READERS[markup].read(text, at)
    if (!found) {
      at++
      continue
    }
    // In `auto`, the first call decides the format: a second one in another format is text.
    markups = [markup]
    for (const call of found.calls) calls.push({ id: `text_call_${calls.length}`, ...call })
    kept.push(text.slice(from, at))
    at = from = found.end
  }
  if (!calls.length) return { calls, text }
  kept.push(text.slice(from))
  return { calls, text: joinKept(kept) }
}

/** The text around removed markup: each cut closes up, with a paragraph break where both sides have text. */
function joinKept(parts: string[]): string {
  let joined = ''
  for (const part of parts) {
    const piece = part.trim()
    if (!piece) continue
    joined = joined ? `${joined}\n\n${piece}` : piece
  }
  return joined
}

/**
 * Where Markdown code that starts at `at` ends: a fenced block (``` or ~~~ at the start of a
 * line, to its closing fence or the end of the text), or an inline span (a run of backticks to
 * the next run of the same length). Undefined when no code starts there.
 */
function codeEnd(text: string, at: number): number | undefined {
  const char = text[at]
  if (char !== '`' && char !== '~') return undefined
  let run = at
  while (text[run] === char) run++
  const length = run - at
  const lineStart = text.lastIndexOf('\n', at - 1) + 1
  if (length >= 3 && /^ {0,3}$/.test(text.slice(lineStart, at))) {
    const close = new RegExp(`\\n {0,3}${char === '`' ? '`' : '~'}{${length},}[ \\t]*(?=\\n|$)`, 'g')
    close.lastIndex = run
    const match = close.exec(text)
    return match ? match.index + match[0].length : text.length
  }
  if (char !== '`') return undefined
  const span = new RegExp(`(?<!\`)\`{${length}}(?!\`)`, 'g')
  span.lastIndex = run
  const match = span.exec(text)
  // A run of backticks with no partner is literal text.
  return match ? match.index + length : run
}

/**
 * `<tool_call>{…}</tool_call>`, one call per tag (or several objects in one). An unclosed tag
 * (servers often stop on `</tool_call>`) holds the object that follows it, to its end.
 */
function readHermes(text: string, at: number): Found | undefined {
  const start = at + HERMES_OPEN.length
  const close = text.indexOf(HERMES_CLOSE, start)
  // Read as JSON first, so a `</tool_call>` inside an argument's string does not close the tag.
  const found = envelopes(text, start)
  if (found) {
    const after = skipSpace(text, found.end)
    if (text.startsWith(HERMES_CLOSE, after)) return { end: after + HERMES_CLOSE.length, calls: found.calls }
    if (close < 0) return found
  }
  // Then what the tags hold: arguments in a fence, or cut off before the closing tag.
  if (close < 0) return undefined
  const body = unfenced(text.slice(start, close))
  const inner = envelopes(body, 0)
  return inner && inner.end === body.length ? { end: close + HERMES_CLOSE.length, calls: inner.calls } : undefined
}

/** The envelopes from `at` on, one after another (whitespace or commas between). */
function envelopes(text: string, at: number): Found | undefined {
  const calls: Found['calls'] = []
  let cursor = skipSpace(text, at)
  while (cursor < text.length) {
    const item = envelope(text, cursor)
    if (!item) break
    calls.push(item.call)
    cursor = skipSpace(text, item.end)
    if (text[cursor] === ',') cursor = skipSpace(text, cursor + 1)
  }
  return calls.length ? { end: cursor, calls } : undefined
}

/** `<｜tool▁calls▁begin｜>` and its calls, to `<｜tool▁calls▁end｜>` or the end of the text. */
function readDeepSeek(text: string, at: number): Found | undefined {
  DEEPSEEK_CALLS_END.lastIndex = at
  const closing = DEEPSEEK_CALLS_END.exec(text)
  const bodyEnd = closing ? closing.index : text.length
  const end = closing ? closing.index + closing[0].length : text.length
  const body = text.slice(at, bodyEnd)
  const calls: Found['calls'] = []
  DEEPSEEK_CALL_BEGIN.lastIndex = 0
  const begins = [...body.matchAll(DEEPSEEK_CALL_BEGIN)]
  for (const [i, begin] of begins.entries()) {
    const start = begin.index + begin[0].length
    const next = begins[i + 1]?.index ?? body.length
    DEEPSEEK_CALL_END.lastIndex = start
    const close = DEEPSEEK_CALL_END.exec(body)
    const inner = body.slice(start, close && close.index < next ? close.index : next)
    const sep = DEEPSEEK_SEP.exec(inner)
    if (!sep) return undefined
    const before = inner.slice(0, sep.index).trim()
    const after = inner.slice(sep.index + sep[0].length)
    let name: string
    let args: string
    if (before === 'function') {
      // V3 and R1: the type, then the name on the separator's line, then the fenced arguments.
      const newline = after.indexOf('\n')
      name = (newline < 0 ? after : after.slice(0, newline)).trim()
      args = newline < 0 ? '' : unfenced(after.slice(newline + 1))
    } else {
      // V3.1: the name, then the arguments as they are.
      name = before
      args = after.trim()
    }
    if (!NAME.test(name)) return undefined
    calls.push({ name, arguments: args || '{}' })
  }
  return calls.length ? { end, calls } : undefined
}

/** `[TOOL_CALLS][{…}, …]`, or `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}` repeated. */
function readMistral(text: string, at: number): Found | undefined {
  let cursor = skipSpace(text, at + MISTRAL.length)
  if (text[cursor] === '[') {
    const calls: Found['calls'] = []
    cursor = skipSpace(text, cursor + 1)
    while (text[cursor] !== ']') {
      const item = envelope(text, cursor)
      if (!item) return undefined
      calls.push(item.call)
      cursor = skipSpace(text, item.end)
      if (text[cursor] === ',' || text[cursor] === '，') cursor = skipSpace(text, cursor + 1)
      else if (text[cursor] !== ']') {
        // Cut off inside the list: what was read is what the model sent.
        if (cursor >= text.length && calls.length) return { end: text.length, calls }
        return undefined
      }
    }
    return calls.length ? { end: cursor + 1, calls } : undefined
  }
  const match = /^([\w.:-]{1,128})[ \t]*(?:\[CALL_ID\][ \t]*\w+[ \t]*)?(?:\[ARGS\])?[ \t]*(?=[{[])/.exec(text.slice(cursor, cursor + 200))
  if (!match) return undefined
  const start = cursor + match[0].length
  const end = valueEnd(text, start)
  return { end, calls: [{ name: match[1], arguments: text.slice(start, end).trim() }] }
}

/** The arguments inside a Markdown fence, or the text as it is (trimmed) when there is none. */
function unfenced(text: string): string {
  const match = /^\s*(`{3,}|~{3,})[\w-]*[ \t]*\n([\s\S]*?)\n?[ \t]*\1\s*$/.exec(text)
  return (match ? match[2] : text).trim()
}

/** The start of every marker `extractTextToolCalls` looks for, for text shown while it streams (see `HeldText`). */
export const TEXT_TOOL_MARKERS: Readonly<Record<TextToolCallFormat, readonly string[]>> = Object.freeze({
  auto: [HERMES_OPEN, MISTRAL, '<｜tool', '<|tool'],
  hermes: [HERMES_OPEN],
  qwen: [HERMES_OPEN],
  deepseek: ['<｜tool', '<|tool'],
  mistral: [MISTRAL],
})
