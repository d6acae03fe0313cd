import { envelope, skipSpace, stringEnd, valueEnd } from '../call-envelope'
import type { Found, FoundCall, MarkupReader } from './markup-reader'
import { unfenced } from './unfenced'

// Hermes and Qwen (2.5, 3): `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one block per call.
export const HERMES_OPEN = '<tool_call>'
const CLOSE = '</tool_call>'

export const hermes: MarkupReader = {
  starts: (text, at) => text.startsWith(HERMES_OPEN, at),
  read: readHermes,
}

/**
 * `<tool_call>{…}</tool_call>`, one call per tag (or several objects in one). An unclosed tag
 * (servers often stop on `</tool_call>`) holds the object that follows it, to its end.
 */
function readHermes(text: string, at: number): Found | undefined {
  const start = at + HERMES_OPEN.length
  // An object or a fence, or it is not Hermes's (prose, or another format's XML): no need to look further.
  if (!/[{`~]/.test(text[skipSpace(text, start)] ?? '')) return undefined
  const close = text.indexOf(CLOSE, start)
  // Read as JSON first, so a `</tool_call>` inside an argument's string does not close the tag.
  const found = envelopes(text, start) ?? doubleBraced(text, start)
  if (found) {
    const after = skipSpace(text, found.end)
    if (text.startsWith(CLOSE, after)) return { end: after + CLOSE.length, calls: found.calls }
    if (close < 0) return found
  }
  // Then what the tags hold: arguments in a fence, or cut off before the closing tag.
  if (close < 0) return undefined
  const body = unfenced(text.slice(start, close))
  const inner = envelopes(body, 0)
  return inner && inner.end === body.length ? { end: close + CLOSE.length, calls: inner.calls } : undefined
}

/** The envelopes from `at` on, one after another (whitespace or commas between). */
export function envelopes(text: string, at: number): { end: number; calls: FoundCall[] } | undefined {
  const calls: FoundCall[] = []
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

/**
 * `{{"name": …, "arguments": {…}}}`: the braces doubled, as a prompt template that escapes
 * them (`{{` in a format string) teaches some models. When every brace outside strings comes
 * doubled they are all halved; otherwise only the outer pair is, and the rest must read as one
 * envelope, closed, or it is not a call.
 */
function doubleBraced(text: string, at: number): { end: number; calls: FoundCall[] } | undefined {
  const start = skipSpace(text, at)
  if (!text.startsWith('{{', start)) return undefined
  const end = valueEnd(text, start)
  const span = text.slice(start, end)
  if (!span.endsWith('}}')) return undefined
  const single = halvedBraces(span) ?? span.slice(1, -1)
  const item = envelope(single, 0)
  if (!item || item.ending !== 'closed' || skipSpace(single, item.end) !== single.length) return undefined
  return { end, calls: [item.call] }
}

/** The text with every run of braces outside strings halved, or undefined when one run is odd. */
function halvedBraces(span: string): string | undefined {
  let out = ''
  for (let i = 0; i < span.length; i++) {
    const char = span[i]
    if (char === '"') {
      const end = stringEnd(span, i)
      out += span.slice(i, end)
      i = end - 1
    } else if (char === '{' || char === '}') {
      let run = i
      while (span[run] === char) run++
      if ((run - i) % 2) return undefined
      out += char.repeat((run - i) / 2)
      i = run - 1
    } else {
      out += char
    }
  }
  return out
}
