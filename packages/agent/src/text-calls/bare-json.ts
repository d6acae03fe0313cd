import { envelope, skipSpace } from '../call-envelope'
import { cutOff, type Found, type FoundCall, type ToolSchemas } from './markup-reader'

// A whole message that is a call and nothing else, `{"name": …, "arguments"|"parameters": {…}}`,
// as Qwen2.5-Coder and Llama send through Ollama; Llama separates several with `;`. There is
// no marker, so only the shape and the toolset make it a call: every name must be a tool of
// this turn, the keys only the envelope's, and the message hold nothing else. Prose around the
// object, or a name the toolset lacks, leaves it an answer.

const KEYS: ReadonlySet<string> = new Set(['name', 'arguments', 'parameters', 'args', 'type'])
const ARGUMENT_KEYS: ReadonlySet<string> = new Set(['arguments', 'parameters', 'args'])

/** The calls the whole text is, or undefined when it is not exactly that. */
export function readBareJson(text: string, tools: ToolSchemas): Found | undefined {
  if (!tools?.size) return undefined
  let cursor = skipSpace(text, 0)
  if (text[cursor] !== '{') return undefined
  const calls: FoundCall[] = []
  while (true) {
    const item = envelope(text, cursor)
    if (!item || !tools.has(item.call.name) || item.keys.some((key) => !KEYS.has(key))) return undefined
    if (item.keys.filter((key) => ARGUMENT_KEYS.has(key)).length !== 1) return undefined
    if (item.ending === 'cut-off') return cutOff('the text ends inside the call', item.call.name)
    if (item.ending !== 'closed' || !item.call.arguments.startsWith('{') || !typeIsFunction(text.slice(cursor, item.end), item.keys)) return undefined
    calls.push(item.call)
    cursor = skipSpace(text, item.end)
    if (cursor >= text.length) return { end: text.length, calls }
    // Llama's separator, or a line break before the next call.
    if (text[cursor] === ';') cursor = skipSpace(text, cursor + 1)
    else if (!/\n/.test(text.slice(item.end, cursor))) return undefined
    if (cursor >= text.length) return { end: text.length, calls }
  }
}

/** A `type` key, when there is one, says `function` (Llama's template writes it so). */
function typeIsFunction(object: string, keys: readonly string[]): boolean {
  if (!keys.includes('type')) return true
  try {
    return (JSON.parse(object) as { type?: unknown }).type === 'function'
  } catch {
    return false
  }
}
