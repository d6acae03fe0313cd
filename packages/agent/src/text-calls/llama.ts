import { envelope, skipSpace, valueEnd } from '../call-envelope'
import { cutOff, type Found, type FoundCall, type MarkupReader } from './markup-reader'
import { endsInsideToken } from './partial-token'
import { pythonCalls } from './python-calls'

// Llama 3.1 to 3.3: `<|python_tag|>{"name": …, "parameters": {…}}`, several calls separated by
// `;`. Llama 4: `<|python_start|>…<|python_end|>` around the same JSON, or around calls
// written as Python (`[get_weather(city='LA')]`).
export const PYTHON_TAG = '<|python_tag|>'
export const PYTHON_START = '<|python_start|>'
const PYTHON_END = '<|python_end|>'
/** The tokens that end a Llama turn, left after the calls by servers that do not strip them. */
const TURN_END = /<\|(?:eom_id|eot_id|eom|eot)\|>/y

export const llama: MarkupReader = {
  starts: (text, at) => text.startsWith(PYTHON_TAG, at) || text.startsWith(PYTHON_START, at),
  read: readLlama,
}

function readLlama(text: string, at: number): Found | undefined {
  const started = text.startsWith(PYTHON_START, at)
  const start = skipSpace(text, at + (started ? PYTHON_START : PYTHON_TAG).length)
  let found: Found | undefined
  if (text[start] === '{') found = jsonCalls(text, start)
  else if (started) {
    const calls = pythonCalls(text, start)
    found = calls === 'cut-off' ? cutOff('the text ends inside the calls') : calls && { end: calls.end, calls: calls.value }
  }
  if (!found || 'cutOff' in found) return found
  let end = skipSpace(text, found.end)
  if (started) {
    if (text.startsWith(PYTHON_END, end)) end += PYTHON_END.length
    else if (endsInsideToken(text, end, [PYTHON_END]) || end >= text.length) end = text.length
    else return undefined
  }
  TURN_END.lastIndex = skipSpace(text, end)
  if (TURN_END.test(text)) end = TURN_END.lastIndex
  return { end: end > found.end ? end : found.end, calls: found.calls }
}

/** One JSON call or several, separated by `;`, each closed. */
function jsonCalls(text: string, at: number): Found | undefined {
  const calls: FoundCall[] = []
  let cursor = at
  while (true) {
    const item = envelope(text, cursor)
    if (!item) {
      // Cut off before the name was whole: `{"name": "sea`.
      return text[cursor] === '{' && valueEnd(text, cursor) >= text.length && !text.slice(cursor).trimEnd().endsWith('}') ? cutOff('the text ends inside the call') : undefined
    }
    if (item.ending === 'cut-off') return cutOff('the text ends inside the call', item.call.name)
    if (item.ending === 'malformed') return undefined
    calls.push(item.call)
    const after = skipSpace(text, item.end)
    if (text[after] !== ';') return { end: item.end, calls }
    cursor = skipSpace(text, after + 1)
    if (text[cursor] !== '{') return { end: after + 1, calls }
  }
}
