import { NAME, skipSpace } from '../call-envelope'
import { HERMES_OPEN } from './hermes'
import { cutOff, type Found, type FoundCall, type MarkupReader, type TextToolSchema, type ToolSchemas } from './markup-reader'
import { endsInsideToken } from './partial-token'
import { typedArguments } from './typed-arguments'

// Qwen3-Coder (and Qwen3.5): XML, one block per call.
//   <tool_call>
//   <function=NAME>
//   <parameter=KEY>
//   VALUE
//   </parameter>
//   </function>
//   </tool_call>
// Small models sometimes leave out the opening `<tool_call>`, so `<function=` is a marker too.
export const QWEN3_CODER_FUNCTION = '<function='
const FUNCTION_END = '</function>'
const PARAMETER = '<parameter='
const PARAMETER_END = '</parameter>'
const CLOSE = '</tool_call>'
/** A parameter's name: anything a schema key could be, but markup, quotes and spaces. */
const KEY = /^[^\s<>="'`]{1,128}$/u

export const qwen3Coder: MarkupReader = {
  starts: (text, at) => text.startsWith(HERMES_OPEN, at) || (text.startsWith(QWEN3_CODER_FUNCTION, at) && atLineStart(text, at)),
  read: readQwen3Coder,
}

/** Without its `<tool_call>`, a call starts a line: `writes <function=NAME> tags` in a sentence is prose. */
function atLineStart(text: string, at: number): boolean {
  return /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', at - 1) + 1, at))
}

function readQwen3Coder(text: string, at: number, tools: ToolSchemas): Found | undefined {
  const wrapped = text.startsWith(HERMES_OPEN, at)
  const start = wrapped ? skipSpace(text, at + HERMES_OPEN.length) : at
  if (!text.startsWith(QWEN3_CODER_FUNCTION, start)) {
    return wrapped && endsInsideToken(text, start, [QWEN3_CODER_FUNCTION]) ? cutOff('the text ends inside <function=…>') : undefined
  }
  const read = readFunction(text, start, tools, wrapped)
  if (!read || !('call' in read)) return read
  // The block's closing tag, when it came (a server that stops on it leaves it out).
  const after = skipSpace(text, read.end)
  const end = text.startsWith(CLOSE, after) ? after + CLOSE.length : read.end
  return { end, calls: [read.call] }
}

/** `<function=NAME>`, its parameters, and `</function>` (or the block's `</tool_call>` in its place). */
function readFunction(text: string, at: number, tools: ToolSchemas, wrapped: boolean): { call: FoundCall; end: number } | Found | undefined {
  const nameStart = at + QWEN3_CODER_FUNCTION.length
  const nameEnd = tagEnd(text, nameStart)
  if (nameEnd < 0) return nameStart + TAG_WINDOW >= text.length && /^[\w.:-]*$/.test(text.slice(nameStart)) ? cutOff('the text ends inside <function=…>') : undefined
  const name = text.slice(nameStart, nameEnd)
  if (!NAME.test(name)) return undefined
  const parameters = tools?.get(name)
  const known = knownKeys(parameters)
  const pairs: [string, string][] = []
  let cursor = nameEnd + 1
  while (true) {
    cursor = skipSpace(text, cursor)
    if (cursor >= text.length) return cutOff('the text ends before </function>', name)
    if (text.startsWith(FUNCTION_END, cursor)) return { call: { name, arguments: typedArguments(pairs, parameters) }, end: cursor + FUNCTION_END.length }
    if (wrapped && text.startsWith(CLOSE, cursor)) return { call: { name, arguments: typedArguments(pairs, parameters) }, end: cursor }
    if (!text.startsWith(PARAMETER, cursor)) {
      return endsInsideToken(text, cursor, [FUNCTION_END, PARAMETER, CLOSE]) ? cutOff('the text ends before </function>', name) : undefined
    }
    const keyStart = cursor + PARAMETER.length
    const keyEnd = tagEnd(text, keyStart)
    if (keyEnd < 0) return keyStart + TAG_WINDOW >= text.length && /^[^\s<>]*$/.test(text.slice(keyStart)) ? cutOff('the text ends inside <parameter=…>', name) : undefined
    const key = text.slice(keyStart, keyEnd)
    if (!KEY.test(key)) return undefined
    const value = valueEnd(text, keyEnd + 1, known && new Set([...known].filter((other) => other !== key && !pairs.some(([given]) => given === other))))
    if (value === 'cut-off') return cutOff(`the value of "${key}" never closed`, name)
    if (value === undefined) return undefined
    pairs.push([key, text.slice(keyEnd + 1, value.end)])
    cursor = value.next
  }
}

/** Names and keys are at most 128 characters: the `>` that ends their tag comes within this many. */
const TAG_WINDOW = 130

/** Where the tag whose name starts at `at` closes (its `>`), or -1 when no `>` comes within a name's length. */
function tagEnd(text: string, at: number): number {
  const end = text.slice(at, at + TAG_WINDOW).indexOf('>')
  return end < 0 ? -1 : at + end
}

/**
 * Where a parameter's value ends: at the first `</parameter>` that markup follows
 * (`<parameter=`, `</function>`, `</tool_call>`, or the end of the text), so a value may hold
 * the tag as text. A model that left out `</parameter>` is read as vLLM reads it only when the
 * next line opens a parameter the tool's schema has and the call has not given yet
 * (`unseen`); without a schema that would be a guess, and the call is not read.
 */
function valueEnd(text: string, start: number, unseen: ReadonlySet<string> | undefined): { end: number; next: number } | 'cut-off' | undefined {
  let close = -1
  let literal = false
  for (let at = text.indexOf(PARAMETER_END, start); at >= 0; at = text.indexOf(PARAMETER_END, at + 1)) {
    const after = skipSpace(text, at + PARAMETER_END.length)
    if (after >= text.length || [PARAMETER, FUNCTION_END, CLOSE].some((token) => text.startsWith(token, after)) || endsInsideToken(text, after, [PARAMETER, FUNCTION_END, CLOSE])) {
      close = at
      break
    }
    literal = true
  }
  if (unseen?.size) {
    const opens = /\n<parameter=([^>\n]{1,128})>/g
    opens.lastIndex = start
    for (let open = opens.exec(text); open && (close < 0 || open.index < close); open = opens.exec(text)) {
      if (unseen.has(open[1])) return { end: open.index, next: open.index + 1 }
    }
  }
  if (close >= 0) {
    // A line that opens a parameter inside the value, with no `</parameter>` of its own: a
    // close left out before it, or text? Without the schema to say, it is not read.
    const value = text.slice(start, close)
    const opens = value.match(/\n<parameter=[^>\n]{1,128}>/g)?.length ?? 0
    if (opens > value.split(PARAMETER_END).length - 1) return undefined
    return { end: close, next: close + PARAMETER_END.length }
  }
  // A `</parameter>` that markup does not follow is not the end of a cut-off value: broken markup.
  return literal ? undefined : 'cut-off'
}

function knownKeys(parameters: TextToolSchema['parameters']): ReadonlySet<string> | undefined {
  const properties = parameters?.properties
  return properties && typeof properties === 'object' && !Array.isArray(properties) ? new Set(Object.keys(properties)) : undefined
}
