import { skipSpace, valueEnd } from '../call-envelope'
import { cutOff, type Found, type FoundCall, type MarkupReader } from './markup-reader'
import { endsInsideToken } from './partial-token'

// Kimi K2: a section of calls, each with the model's own id `functions.NAME:INDEX`.
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>
// The section tokens are also seen singular (`<|tool_call_section_begin|>`), and spaces
// between the tokens are common once a server detokenizes them.
const SECTION_BEGIN = /<\|tool_calls?_section_begin\|>/y
const SECTION_END = /<\|tool_calls?_section_end\|>/y
const CALL_BEGIN = '<|tool_call_begin|>'
const ARGUMENT_BEGIN = '<|tool_call_argument_begin|>'
const CALL_END = '<|tool_call_end|>'
/** The id: an optional `functions.` namespace, the name, a colon and the call's index. */
const ID = /^(?:[\w-]+\.)*([\w-]{1,128}):\d+$/
/** The marker, for the scan of the whole text. */
export const KIMI_MARKER = /<\|tool_calls?_section_begin\|>/

export const kimi: MarkupReader = {
  starts: (text, at) => sticky(SECTION_BEGIN, text, at) !== undefined,
  read: readKimi,
}

function readKimi(text: string, at: number): Found | undefined {
  let cursor = sticky(SECTION_BEGIN, text, at)!
  const calls: FoundCall[] = []
  while (true) {
    cursor = skipSpace(text, cursor)
    const sectionEnd = sticky(SECTION_END, text, cursor)
    if (sectionEnd !== undefined) return calls.length ? { end: sectionEnd, calls } : undefined
    if (!text.startsWith(CALL_BEGIN, cursor)) {
      const cut = cursor >= text.length || endsInsideToken(text, cursor, [CALL_BEGIN, '<|tool_calls_section_end|>', '<|tool_call_section_end|>'])
      // Calls that closed are whole, whatever came after them.
      if (calls.length) return { end: cut ? text.length : cursor, calls }
      return cut ? cutOff('the text ends inside the tool-call section') : undefined
    }
    const idStart = skipSpace(text, cursor + CALL_BEGIN.length)
    const argumentAt = text.indexOf(ARGUMENT_BEGIN, idStart)
    const nextCall = text.indexOf(CALL_BEGIN, idStart)
    if (argumentAt < 0 || (nextCall >= 0 && nextCall < argumentAt)) {
      return argumentAt < 0 && nextCall < 0 && /^[\w.:-]*$/.test(text.slice(idStart).trim()) ? cutOff('the text ends before the call\'s arguments') : undefined
    }
    const id = text.slice(idStart, argumentAt).trim()
    // A bare index names no tool: which one was meant would be a guess.
    const match = ID.exec(id)
    if (!match) return undefined
    const name = match[1]
    const start = skipSpace(text, argumentAt + ARGUMENT_BEGIN.length)
    // The JSON to its end first, so the end token inside a string does not end it.
    let end = -1
    let next = -1
    if (text[start] === '{') {
      const close = valueEnd(text, start)
      const after = skipSpace(text, close)
      if (text.startsWith(CALL_END, after)) [end, next] = [close, after + CALL_END.length]
    }
    if (end < 0) {
      end = text.indexOf(CALL_END, start)
      if (end < 0) return cutOff('the text ends before <|tool_call_end|>', name)
      next = end + CALL_END.length
    }
    calls.push({ name, arguments: text.slice(start, end).trim() || '{}', id })
    cursor = next
  }
}

/** Where a sticky pattern that matches at `at` ends, or undefined. */
function sticky(pattern: RegExp, text: string, at: number): number | undefined {
  pattern.lastIndex = at
  return pattern.test(text) ? pattern.lastIndex : undefined
}
