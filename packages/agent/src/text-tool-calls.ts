import { readBareJson } from './text-calls/bare-json'
import { DEEPSEEK_MARKER, deepseek } from './text-calls/deepseek'
import { glm } from './text-calls/glm'
import { HERMES_OPEN, hermes } from './text-calls/hermes'
import { KIMI_MARKER, kimi } from './text-calls/kimi'
import { llama, PYTHON_START, PYTHON_TAG } from './text-calls/llama'
import type { Found, MarkupReader, TextToolSchema, ToolSchemas } from './text-calls/markup-reader'
import { codeEnd } from './text-calls/markdown-code'
import { MISTRAL_MARKER, mistral } from './text-calls/mistral'
import { QWEN3_CODER_FUNCTION, qwen3Coder } from './text-calls/qwen3-coder'

export type { TextToolSchema } from './text-calls/markup-reader'

/**
 * The markup a model writes its calls in when the server has no parser for it (see
 * docs/text-tool-calls.md for an example of each):
 * - `hermes`, `qwen`: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one block per
 *   call; Qwen writes `"parameters"` as often as `"arguments"`, some models `"args"` or doubled
 *   braces `{{…}}`. Both read the same markup; `qwen` also reads a bare JSON call (Qwen2.5-Coder).
 * - `qwen3-coder`: `<tool_call><function=NAME><parameter=KEY>VALUE</parameter>…</function></tool_call>`,
 *   the opening `<tool_call>` sometimes left out; values typed by the tool's schema.
 * - `glm` (GLM-4.5 to 4.7): `<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…</tool_call>`,
 *   values typed by the tool's schema; `<tool_call>NAME</tool_call>` without arguments.
 * - `deepseek`: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` then the
 *   arguments in a ```json fence (V3, R1), or `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}` (V3.1),
 *   each call closed by `<｜tool▁call▁end｜>`.
 * - `kimi` (Kimi K2): `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…`;
 *   each call keeps the model's own id.
 * - `mistral`: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` (before tokenizer v11), or
 *   `[TOOL_CALLS]NAME[ARGS]{…}` once per call, with `[CALL_ID]…` before `[ARGS]` in v13.
 * - `llama` (3.1 to 4): `<|python_tag|>{"name": …, "parameters": {…}}`, several separated by
 *   `;`; `<|python_start|>…<|python_end|>` around JSON or Python calls (`[f(x=1)]`); and a
 *   bare JSON call.
 * - `auto`: the format of the first marker found.
 *
 * A bare JSON call (a whole message that is `{"name": …, "arguments": {…}}` and nothing else)
 * is read only when the caller passes the turn's `tools` and the name is one of them.
 */
export type TextToolCallFormat = 'auto' | 'hermes' | 'qwen' | 'deepseek' | 'mistral' | 'qwen3-coder' | 'glm' | 'kimi' | 'llama'

/** A call read from a model's text: `arguments` is the JSON text as the model wrote it, malformed or not. */
export interface TextToolCall {
  id: string
  name: string
  arguments: string
}

/**
 * A call whose markup the text ends inside (an unclosed block, arguments that stop
 * mid-string): usually a reply cut at its token limit. It stays in `text` and is never run;
 * what the model meant is not there to read.
 */
export interface CutOffTextToolCall {
  /** The markup it is written in; `json` for a bare JSON call. */
  format: Exclude<TextToolCallFormat, 'auto' | 'qwen'> | 'json'
  /** The tool it names, when the text got that far. */
  name?: string
  /** Where its markup starts in the text. */
  at: number
  /** What is missing, e.g. `the text ends before </function>`. */
  reason: string
}

export interface ExtractedTextToolCalls {
  calls: TextToolCall[]
  /** The text without the calls' markup, trimmed; the input as it was when no call was found. */
  text: string
  /** Set when the text ends inside a call: that call is left in `text`, and not in `calls`. */
  cutOff?: CutOffTextToolCall
}

export interface ExtractTextToolCallsOptions {
  /**
   * The tools the model was given in this turn, by name with their parameters' JSON Schema as
   * sent (OpenAI's `tools[].function` has this shape). A bare JSON call is read only when it
   * names one of them, and `qwen3-coder` and `glm` values are typed by them; without them those
   * values stay strings.
   */
  tools?: Iterable<TextToolSchema>
}

/** One markup, read by one reader; `qwen` is Hermes's. */
type Markup = Exclude<TextToolCallFormat, 'auto' | 'qwen'>

const READERS: Readonly<Record<Markup, MarkupReader>> = Object.freeze({
  hermes,
  'qwen3-coder': qwen3Coder,
  glm,
  deepseek,
  kimi,
  mistral,
  llama,
})

/** Every `TextToolCallFormat`. */
export const TEXT_TOOL_CALL_FORMATS: readonly TextToolCallFormat[] = Object.freeze(['auto', 'hermes', 'qwen', 'deepseek', 'mistral', 'qwen3-coder', 'glm', 'kimi', 'llama'])

/**
 * The markups each format reads, in the order tried where markers coincide (`<tool_call>`
 * opens Hermes JSON, Qwen3-Coder XML and GLM alike), and whether a bare JSON call counts.
 */
const FORMATS: Readonly<Record<TextToolCallFormat, { markups: readonly Markup[]; bareJson: boolean }>> = Object.freeze({
  auto: { markups: ['hermes', 'qwen3-coder', 'glm', 'deepseek', 'kimi', 'mistral', 'llama'], bareJson: true },
  hermes: { markups: ['hermes'], bareJson: false },
  qwen: { markups: ['hermes'], bareJson: true },
  deepseek: { markups: ['deepseek'], bareJson: false },
  mistral: { markups: ['mistral'], bareJson: false },
  'qwen3-coder': { markups: ['qwen3-coder'], bareJson: false },
  glm: { markups: ['glm'], bareJson: false },
  kimi: { markups: ['kimi'], bareJson: false },
  llama: { markups: ['llama'], bareJson: true },
})

const escaped = (marker: string) => marker.replace(/[|[\]]/g, '\\$&')
/** Where code or a marker of any format may start. */
const NEXT = new RegExp([
  '[`~]',
  HERMES_OPEN,
  QWEN3_CODER_FUNCTION,
  escaped(MISTRAL_MARKER),
  DEEPSEEK_MARKER.source,
  KIMI_MARKER.source,
  escaped(PYTHON_TAG),
  escaped(PYTHON_START),
].join('|'), 'g')

/**
 * Reads the tool calls a model wrote into its text (see {@link TextToolCallFormat}), for
 * servers that have no parser for the model's format. Markup inside Markdown code (a fenced
 * block or an inline span) is an example, never a call; so is a marker followed by prose.
 * Each call gets the id `text_call_<n>` (from 0, in order; Kimi's calls keep their own), and
 * its arguments stay the text the model wrote: the pipeline repairs or refuses them, as it
 * does structured calls. A call the text ends inside is left in the text and reported as
 * `cutOff`, never returned.
 *
 * @example
 * extractTextToolCalls('Checking.\n<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>', 'auto')
 * // { calls: [{ id: 'text_call_0', name: 'lookup', arguments: '{"q": "FR"}' }], text: 'Checking.' }
 */
export function extractTextToolCalls(text: string, format: TextToolCallFormat, options: ExtractTextToolCallsOptions = {}): ExtractedTextToolCalls {
  const chosen = Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined
  if (!chosen) return { calls: [], text }
  const tools = toolSchemas(options.tools)
  const calls: TextToolCall[] = []
  const ids = new Set<string>()
  const add = (found: Extract<Found, { calls: unknown }>) => {
    for (const { id, ...call } of found.calls) {
      const unique = id && !ids.has(id) ? id : `text_call_${calls.length}`
      ids.add(unique)
      calls.push({ id: unique, ...call })
    }
  }
  if (chosen.bareJson) {
    const bare = readBareJson(text, tools)
    if (bare && 'cutOff' in bare) return { calls, text, cutOff: { format: 'json', at: text.length - text.trimStart().length, ...bare.cutOff } }
    if (bare) {
      add(bare)
      return { calls, text: '' }
    }
  }
  let markups = chosen.markups
  let cut: CutOffTextToolCall | undefined
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
    let markup: Markup | undefined
    let found: Found | undefined
    for (const candidate of markups) {
      if (!READERS[candidate].starts(text, at)) continue
      found = READERS[candidate].read(text, at, tools)
      if (found) {
        markup = candidate
        break
      }
    }
    if (!found || !markup) {
      at++
      continue
    }
    if ('cutOff' in found) {
      // The text ends inside this call: it stays, with everything after it.
      cut = { format: markup, at, ...found.cutOff }
      break
    }
    // In `auto`, the first call decides the format: a second one in another format is text.
    markups = [markup]
    add(found)
    kept.push(text.slice(from, at))
    at = from = found.end
  }
  if (!calls.length) return cut ? { calls, text, cutOff: cut } : { calls, text }
  kept.push(text.slice(from))
  return cut ? { calls, text: joinKept(kept), cutOff: cut } : { calls, text: joinKept(kept) }
}

function toolSchemas(tools: Iterable<TextToolSchema> | undefined): ToolSchemas {
  if (!tools) return undefined
  const map = new Map<string, TextToolSchema['parameters']>()
  for (const tool of tools) {
    if (tool && typeof tool.name === 'string') map.set(tool.name, tool.parameters)
  }
  return map
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

/** The start of every marker `extractTextToolCalls` looks for, for text shown while it streams (see `HeldText`). */
export const TEXT_TOOL_MARKERS: Readonly<Record<TextToolCallFormat, readonly string[]>> = Object.freeze({
  auto: [HERMES_OPEN, QWEN3_CODER_FUNCTION, MISTRAL_MARKER, '<｜tool', '<|tool', PYTHON_TAG, PYTHON_START],
  hermes: [HERMES_OPEN],
  qwen: [HERMES_OPEN],
  deepseek: ['<｜tool', '<|tool'],
  mistral: [MISTRAL_MARKER],
  'qwen3-coder': [HERMES_OPEN, QWEN3_CODER_FUNCTION],
  glm: [HERMES_OPEN],
  kimi: ['<|tool'],
  llama: [PYTHON_TAG, PYTHON_START],
})

/** Whether a format reads a bare JSON call, which a reply shows it is only by starting with `{`. */
export function readsBareJson(format: TextToolCallFormat): boolean {
  return FORMATS[format].bareJson
}
