import type { ModelToolCall, ToolResource, ToolResult } from '@dogu/core'
import { isBlobResource, joinLines, mediaLines, resourceLabel } from './result-media'
import { argumentsText, resultText } from './result-text'

/**
 * An output item of an OpenAI Responses reply. Calls are read from `function_call` items;
 * every item, `reasoning` items with their `encrypted_content` included, goes back in the next
 * request's `input` as it came.
 */
export interface ResponsesOutputItem {
  type: string
  id?: string | null
  call_id?: string | null
  name?: string | null
  arguments?: unknown
  /** A `reasoning` item's encrypted reasoning, sent when the request has `include: ['reasoning.encrypted_content']`. */
  encrypted_content?: string | null
  summary?: unknown
  content?: unknown
  role?: string
  status?: string | null
}

/** A streamed Responses event; the ones carrying text, items, calls and usage are read. */
export interface ResponsesStreamEvent {
  type: string
  item?: ResponsesOutputItem
  item_id?: string | null
  output_index?: number
  delta?: unknown
  arguments?: unknown
  response?: { usage?: unknown; output?: readonly ResponsesOutputItem[] }
}

/** A part of a `function_call_output`: text, an image, or a file (a PDF) as a `data:` URL. */
export type ResponsesOutputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }
  | { type: 'input_file'; filename: string; file_data: string }

/** A `function_call_output` input item, with parts when there are images or attached files. */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  output: string | ResponsesOutputPart[]
}

/** Image types an `input_image` part takes, for images that arrive as resources. */
const RESPONSES_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif'])

/** Binary resources Responses takes as parts: images, and PDFs as `input_file`. */
function attachable(resource: ToolResource): resource is ToolResource & { blob: string; mimeType: string } {
  return isBlobResource(resource) && !!resource.mimeType && (resource.mimeType === 'application/pdf' || RESPONSES_IMAGE_TYPES.has(resource.mimeType))
}

/** The function calls of a reply's `output`, for `toolset.execute`. */
export function parseResponsesToolCalls(output: readonly ResponsesOutputItem[]): ModelToolCall[] {
  return output
    .filter((item) => item.type === 'function_call' && item.name)
    .map((item, index) => ({ id: item.call_id || item.id || `call_${index}`, name: item.name!, arguments: argumentsText(stringOf(item.arguments)) }))
}

interface Partial {
  itemId?: string
  callId: string
  name: string
  arguments: string
  done: boolean
}

/**
 * Collects a streamed Responses reply: `response.output_text.delta`, function calls opened
 * by `response.output_item.added` and grown by `response.function_call_arguments.delta`
 * (split anywhere), and closed by `…arguments.done` / `output_item.done`, whose whole text
 * wins; and every output item, for `output()`.
 *
 * With `store: false` nothing of the reply is kept on OpenAI's side: a reasoning model's
 * `function_call` must come back with the `reasoning` item before it, its `encrypted_content`
 * unchanged, or the next request is refused. `output()` keeps them.
 */
export class ResponsesStreamAccumulator {
  text = ''
  usage: unknown
  private calls = new Map<number, Partial>()
  private byItem = new Map<string, Partial>()
  /** Output items by index: the `output_item.done` item once it came, the `added` one before. */
  private items = new Map<number, { item: ResponsesOutputItem; done: boolean }>()

  /** Adds one event. Returns the text it added (empty if none). */
  push(event: ResponsesStreamEvent): string {
    switch (event.type) {
      case 'response.output_text.delta': {
        const delta = stringOf(event.delta)
        this.text += delta
        return delta
      }
      case 'response.output_item.added':
      case 'response.output_item.done': {
        const item = event.item
        if (item) this.keepItem(event.output_index, item, event.type === 'response.output_item.done')
        if (item?.type !== 'function_call') return ''
        const call = this.callOf(event)
        if (item.id) {
          call.itemId = item.id
          this.byItem.set(item.id, call)
        }
        if (item.call_id) call.callId = item.call_id
        if (item.name) call.name = item.name
        if (event.type === 'response.output_item.done') this.finish(call, item.arguments)
        return ''
      }
      case 'response.function_call_arguments.delta': {
        const call = this.callOf(event)
        if (!call.done) call.arguments += stringOf(event.delta)
        return ''
      }
      case 'response.function_call_arguments.done':
        this.finish(this.callOf(event), event.arguments)
        return ''
      case 'response.completed':
        this.usage = event.response?.usage
        // The whole output, for items whose `done` event did not come.
        for (const [index, item] of (event.response?.output ?? []).entries()) {
          if (!this.items.get(index)?.done) this.items.set(index, { item, done: true })
        }
        return ''
      default:
        return ''
    }
  }

  private keepItem(index: number | undefined, item: ResponsesOutputItem, done: boolean) {
    const at = index ?? this.items.size
    if (done || !this.items.get(at)?.done) this.items.set(at, { item, done })
  }

  /**
   * The reply's output items in order, as they came (`reasoning` items with their
   * `encrypted_content` and summary, messages, function calls): put them in the next request's
   * `input`, then the `function_call_output`s (see {@link toResponsesToolOutputs}). A function
   * call still streaming carries the arguments collected so far.
   */
  output(): ResponsesOutputItem[] {
    return [...this.items.entries()].sort(([a], [b]) => a - b).map(([index, { item, done }]) => {
      const call = this.calls.get(index)
      return !done && item.type === 'function_call' && call ? { ...item, arguments: call.arguments } : item
    })
  }

  private callOf(event: ResponsesStreamEvent): Partial {
    const known = (event.item_id && this.byItem.get(event.item_id)) || (event.output_index !== undefined ? this.calls.get(event.output_index) : undefined)
    if (known) return known
    const call: Partial = { callId: '', name: '', arguments: '', done: false }
    this.calls.set(event.output_index ?? this.calls.size, call)
    if (event.item_id) {
      call.itemId = event.item_id
      this.byItem.set(event.item_id, call)
    }
    return call
  }

  private finish(call: Partial, text: unknown) {
    if (typeof text === 'string') call.arguments = text
    call.done = true
  }

  /** The calls so far, in output order, for `toolset.execute`. */
  toolCalls(): ModelToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call], index) => ({ id: call.callId || call.itemId || `call_${index}`, name: call.name, arguments: argumentsText(call.arguments) }))
  }
}

/**
 * `function_call_output` items for Dogu's results, in order. Responses has no error flag:
 * a failed call reads `Error: …` / `Denied: …`. Images go out as `input_image` parts, and
 * so do image resources; a PDF resource is an `input_file`. Audio, links, text resources
 * and other files are described in the text (a text resource's text under its name).
 */
export function toResponsesToolOutputs(results: readonly ToolResult[]): ResponsesFunctionCallOutput[] {
  return results.map((result) => {
    const text = joinLines(resultText(result, true), ...mediaLines(result, { resource: attachable }))
    const files = (result.resources ?? []).filter(attachable)
    if (!result.images?.length && !files.length) return { type: 'function_call_output', call_id: result.id, output: text }
    return {
      type: 'function_call_output',
      call_id: result.id,
      output: [
        { type: 'input_text', text },
        ...(result.images ?? []).map((image) => ({ type: 'input_image' as const, image_url: `data:${image.mimeType};base64,${image.data}`, detail: 'auto' as const })),
        ...files.map((file): ResponsesOutputPart => file.mimeType === 'application/pdf'
          ? { type: 'input_file', filename: fileName(file), file_data: `data:${file.mimeType};base64,${file.blob}` }
          : { type: 'input_image', image_url: `data:${file.mimeType};base64,${file.blob}`, detail: 'auto' }),
      ],
    }
  })
}

/** The name a file part goes by: the resource's name, else the last segment of its URI. */
function fileName(resource: ToolResource): string {
  const last = resource.uri.split(/[/\\]/).filter(Boolean).pop()
  return resource.name || resourceLabel(resource) || last || 'file.pdf'
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : ''
}
