import { envelope, skipSpace, valueEnd } from '../call-envelope'
import type { Found, FoundCall, MarkupReader } from './markup-reader'

export const MISTRAL_MARKER = '[TOOL_CALLS]'

export const mistral: MarkupReader = {
  starts: (text, at) => text.startsWith(MISTRAL_MARKER, at),
  read: readMistral,
}

/** `[TOOL_CALLS][{…}, …]`, or `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}` repeated. */
function readMistral(text: string, at: number): Found | undefined {
  let cursor = skipSpace(text, at + MISTRAL_MARKER.length)
  if (text[cursor] === '[') {
    const calls: FoundCall[] = []
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
