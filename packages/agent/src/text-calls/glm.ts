import { NAME, skipSpace } from '../call-envelope'
import { HERMES_OPEN } from './hermes'
import { cutOff, type Found, type MarkupReader, type ToolSchemas } from './markup-reader'
import { endsInsideToken } from './partial-token'
import { typedArguments } from './typed-arguments'

// GLM-4.5 to 4.7: the name, then key and value pairs, on one line or several.
//   <tool_call>NAME
//   <arg_key>KEY</arg_key>
//   <arg_value>VALUE</arg_value>
//   </tool_call>
// A tool without arguments is `<tool_call>NAME</tool_call>`.
const CLOSE = '</tool_call>'
const KEY_OPEN = '<arg_key>'
const KEY_CLOSE = '</arg_key>'
const VALUE_OPEN = '<arg_value>'
const VALUE_CLOSE = '</arg_value>'
const KEY = /^[^\s<>="'`]{1,128}$/u
/** A name is at most 128 characters: past that (and its spacing), what follows the tag is not one. */
const NAME_WINDOW = 160

export const glm: MarkupReader = {
  starts: (text, at) => text.startsWith(HERMES_OPEN, at),
  read: readGlm,
}

function readGlm(text: string, at: number, tools: ToolSchemas): Found | undefined {
  const start = skipSpace(text, at + HERMES_OPEN.length)
  // The name runs to the end of its line, the first key, or the closing tag, within a name's length.
  const window = text.slice(start, start + NAME_WINDOW)
  const ends = [window.indexOf('\n'), window.indexOf(KEY_OPEN), window.indexOf(CLOSE)].filter((end) => end >= 0).map((end) => start + end)
  if (!ends.length) {
    const rest = window.trim()
    // GLM writes the name straight after the tag; `<tool_call> tags` ending a sentence is prose.
    return start + NAME_WINDOW >= text.length && start === at + HERMES_OPEN.length && NAME.test(rest) ? cutOff('the text ends before </tool_call>', rest) : undefined
  }
  const name = text.slice(start, Math.min(...ends)).trim()
  if (!NAME.test(name)) return undefined
  const parameters = tools?.get(name)
  const pairs: [string, string][] = []
  let cursor = Math.min(...ends)
  const cut = () => cutOff('the text ends before </tool_call>', name)
  while (true) {
    cursor = skipSpace(text, cursor)
    if (cursor >= text.length) return cut()
    if (text.startsWith(CLOSE, cursor)) return { end: cursor + CLOSE.length, calls: [{ name, arguments: typedArguments(pairs, parameters) }] }
    if (!text.startsWith(KEY_OPEN, cursor)) return endsInsideToken(text, cursor, [CLOSE, KEY_OPEN]) ? cut() : undefined
    const keyStart = cursor + KEY_OPEN.length
    const keyEnd = text.indexOf(KEY_CLOSE, keyStart)
    if (keyEnd < 0) return /^[^<>]*<?\/?[a-z_]*$/.test(text.slice(keyStart)) ? cut() : undefined
    const key = text.slice(keyStart, keyEnd).trim()
    if (!KEY.test(key)) return undefined
    cursor = skipSpace(text, keyEnd + KEY_CLOSE.length)
    if (cursor >= text.length || endsInsideToken(text, cursor, [VALUE_OPEN])) return cut()
    if (!text.startsWith(VALUE_OPEN, cursor)) return undefined
    const valueStart = cursor + VALUE_OPEN.length
    const valueEnd = text.indexOf(VALUE_CLOSE, valueStart)
    if (valueEnd < 0) return cutOff(`the value of "${key}" never closed`, name)
    pairs.push([key, text.slice(valueStart, valueEnd)])
    cursor = valueEnd + VALUE_CLOSE.length
  }
}
