import type { ModelToolCall, ToolResource, ToolResult } from '@dogu/core'
import { isBlobResource, isTextResource, joinLines, mediaLines, resourceLabel } from './result-media'
import { argumentsText, imageNote, isErrorResult, jsonObjectOf, resultText } from './result-text'

/**
 * A content block of an Anthropic Messages reply. Calls are read from `tool_use` blocks;
 * every block, `thinking` and `redacted_thinking` with their signatures included, goes back
 * in the assistant turn as it came.
 */
export interface AnthropicContentBlock {
  type: string
  text?: string
  id?: string
  name?: string
  input?: unknown
  /** A `thinking` block's text. */
  thinking?: string
  /** A `thinking` block's signature, which the API checks when the turn comes back. */
  signature?: string
  /** A `redacted_thinking` block's encrypted content. */
  data?: string
  citations?: unknown[] | null
}

/** A streamed Messages event. */
export interface AnthropicStreamEvent {
  type: string
  index?: number
  content_block?: AnthropicContentBlock
  delta?: {
    type?: string
    text?: string
    partial_json?: string
    thinking?: string
    signature?: string
    citation?: unknown
    stop_reason?: string | null
  }
  message?: { usage?: AnthropicUsage }
  usage?: AnthropicUsage
}

/** The assistant turn of a streamed reply, to send back before the turn's `tool_result`s. */
export interface AnthropicAssistantMessage {
  role: 'assistant'
  content: AnthropicContentBlock[]
}

export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
}

/** Media types Anthropic takes in image blocks; others become a note. */
export const ANTHROPIC_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'

type ToolResultContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageType; data: string } }
  | {
    type: 'document'
    source: { type: 'text'; media_type: 'text/plain'; data: string } | { type: 'base64'; media_type: 'application/pdf'; data: string }
    title?: string
    context?: string
  }

/**
 * Resources a `tool_result` takes as blocks: a text resource as a plain-text document, a
 * PDF as a PDF document, an image Anthropic takes as an image block.
 */
function attachable(resource: ToolResource): boolean {
  if (isTextResource(resource)) return resource.text.length > 0
  return isBlobResource(resource) && !!resource.mimeType && (resource.mimeType === 'application/pdf' || ANTHROPIC_IMAGE_TYPES.has(resource.mimeType))
}

function resourceBlock(resource: ToolResource): ToolResultContent {
  const named = { title: resourceLabel(resource) ?? resource.uri, context: resource.uri }
  if (isTextResource(resource)) return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: resource.text }, ...named }
  if (resource.mimeType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: resource.blob! }, ...named }
  return { type: 'image', source: { type: 'base64', media_type: resource.mimeType as AnthropicImageType, data: resource.blob! } }
}

/** A `tool_result` block; failed calls carry `is_error: true`. */
export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content?: ToolResultContent[]
  is_error?: boolean
}

/** The user message that answers one assistant turn's `tool_use` blocks. */
export interface AnthropicToolResultMessage {
  role: 'user'
  content: AnthropicToolResultBlock[]
}

/** The `tool_use` blocks of a reply's `content`, for `toolset.execute`. */
export function parseAnthropicToolCalls(content: readonly AnthropicContentBlock[]): ModelToolCall[] {
  return content
    .filter((block) => block.type === 'tool_use' && block.name)
    .map((block, index) => ({
      id: block.id || `toolu_${index}`,
      name: block.name!,
      arguments: block.input && typeof block.input === 'object' ? block.input as Record<string, unknown> : '{}',
    }))
}

interface OpenBlock {
  block: AnthropicContentBlock
  /** `input_json_delta` pieces, joined as sent. */
  json: string
}

/**
 * Collects a streamed Messages reply: every content block, by index, with its deltas applied
 * (`text_delta`, `thinking_delta`, `signature_delta`, `citations_delta`, and the
 * `input_json_delta` pieces of a `tool_use` block, split anywhere). `toolCalls()` gives the
 * calls, `message()` the assistant turn to send back.
 *
 * With extended thinking the turn that holds a `tool_use` must go back with its `thinking`
 * and `redacted_thinking` blocks unchanged (the API checks their signatures), so `message()`
 * keeps them, byte for byte.
 */
export class AnthropicStreamAccumulator {
  text = ''
  stopReason: string | undefined
  usage: AnthropicUsage = {}
  private blocks = new Map<number, OpenBlock>()

  /** Adds one event. Returns the text it added (empty if none). */
  push(event: AnthropicStreamEvent): string {
    switch (event.type) {
      case 'message_start':
        Object.assign(this.usage, event.message?.usage)
        return ''
      case 'content_block_start': {
        const block = event.content_block
        if (!block) return ''
        this.blocks.set(event.index ?? this.blocks.size, { block: { ...block }, json: '' })
        if (block.type === 'text' && block.text) {
          this.text += block.text
          return block.text
        }
        return ''
      }
      case 'content_block_delta':
        return this.applyDelta(event)
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason
        Object.assign(this.usage, event.usage)
        return ''
      default:
        return ''
    }
  }

  private applyDelta(event: AnthropicStreamEvent): string {
    const delta = event.delta
    const open = this.blocks.get(event.index ?? -1)
    switch (delta?.type) {
      case 'text_delta': {
        const text = delta.text ?? ''
        if (open) open.block.text = (open.block.text ?? '') + text
        this.text += text
        return text
      }
      case 'input_json_delta':
        if (open) open.json += delta.partial_json ?? ''
        return ''
      case 'thinking_delta':
        if (open) open.block.thinking = (open.block.thinking ?? '') + (delta.thinking ?? '')
        return ''
      case 'signature_delta':
        if (open) open.block.signature = (open.block.signature ?? '') + (delta.signature ?? '')
        return ''
      case 'citations_delta':
        if (open) open.block.citations = [...(open.block.citations ?? []), delta.citation]
        return ''
      default:
        return ''
    }
  }

  private ordered(): OpenBlock[] {
    return [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, open]) => open)
  }

  /** The calls so far, in block order. Pieces are joined as sent: malformed JSON is the model's to fix. */
  toolCalls(): ModelToolCall[] {
    return this.ordered().filter(({ block }) => block.type === 'tool_use').map(({ block, json }, index) => {
      const start = block.input && typeof block.input === 'object' && Object.keys(block.input).length ? JSON.stringify(block.input) : ''
      return { id: block.id || `toolu_${index}`, name: block.name ?? '', arguments: argumentsText(json || start) }
    })
  }

  /**
   * The assistant turn for the conversation: every block in order, as it came with its
   * deltas applied; `thinking` blocks keep their text and signature, `redacted_thinking`
   * blocks their data. A block's streamed input becomes its `input` object: malformed input
   * that the pipeline repairs (see `repairArguments`) is sent repaired, as the call ran, and
   * other input that is not a JSON object as `{}` (the call's error result tells the model what
   * it sent wrong). Text blocks that stayed empty are left out: the API refuses them.
   */
  message(): AnthropicAssistantMessage {
    const content: AnthropicContentBlock[] = []
    for (const { block, json } of this.ordered()) {
      if (block.type === 'text' && !block.text) continue
      content.push('input' in block || json ? { ...block, input: json ? jsonObjectOf(json) : inputOf(block.input) } : { ...block })
    }
    return { role: 'assistant', content }
  }
}

function inputOf(input: unknown): Record<string, unknown> {
  return input && typeof input === 'object' && !Array.isArray(input) ? input as Record<string, unknown> : {}
}

/**
 * The user message answering one turn's calls: a `tool_result` per result, in order, with
 * `is_error: true` for failed calls and image blocks for images Anthropic takes. A text or
 * PDF resource is a `document` block (titled with its name, its URI as context), an image
 * resource an image block; audio and other resources are described in the text.
 */
export function toAnthropicToolResults(results: readonly ToolResult[]): AnthropicToolResultMessage {
  return {
    role: 'user',
    content: results.map((result) => {
      const content: ToolResultContent[] = []
      const text = resultText(result, false)
      const taken = (result.images ?? []).filter((image) => ANTHROPIC_IMAGE_TYPES.has(image.mimeType))
      const left = (result.images ?? []).filter((image) => !ANTHROPIC_IMAGE_TYPES.has(image.mimeType))
      const note = left.length ? imageNote(left) : ''
      const all = joinLines(text, note, ...mediaLines(result, { resource: attachable }))
      // Anthropic refuses an empty text block: a result with nothing to say sends no content.
      if (all) content.push({ type: 'text', text: all })
      for (const image of taken) {
        content.push({ type: 'image', source: { type: 'base64', media_type: image.mimeType as AnthropicImageType, data: image.data } })
      }
      for (const resource of (result.resources ?? []).filter(attachable)) content.push(resourceBlock(resource))
      const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: result.id }
      if (content.length) block.content = content
      if (isErrorResult(result)) block.is_error = true
      return block
    }),
  }
}
