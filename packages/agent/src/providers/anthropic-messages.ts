import type { ModelToolCall, ToolResult } from '@dogu/core'
import { argumentsText, imageNote, isErrorResult, resultText } from './result-text'

/** A content block of an Anthropic Messages reply; only `text` and `tool_use` matter here. */
export interface AnthropicContentBlock {
  type: string
  text?: string
  id?: string
  name?: string
  input?: unknown
}

/** A streamed Messages event. */
export interface AnthropicStreamEvent {
  type: string
  index?: number
  content_block?: AnthropicContentBlock
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null }
  message?: { usage?: AnthropicUsage }
  usage?: AnthropicUsage
}

export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
}

/** Media types Anthropic takes in image blocks; others become a note. */
export const ANTHROPIC_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

type ToolResultContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string } }

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

interface Partial {
  id: string
  name: string
  json: string
  input: unknown
}

/**
 * Collects a streamed Messages reply: `text_delta`s, and `tool_use` blocks whose input
 * arrives as `input_json_delta` pieces split anywhere, keyed by block index.
 */
export class AnthropicStreamAccumulator {
  text = ''
  stopReason: string | undefined
  usage: AnthropicUsage = {}
  private blocks = new Map<number, Partial>()

  /** Adds one event. Returns the text it added (empty if none). */
  push(event: AnthropicStreamEvent): string {
    switch (event.type) {
      case 'message_start':
        Object.assign(this.usage, event.message?.usage)
        return ''
      case 'content_block_start': {
        const block = event.content_block
        if (block?.type === 'tool_use') this.blocks.set(event.index ?? this.blocks.size, { id: block.id ?? '', name: block.name ?? '', json: '', input: block.input })
        if (block?.type === 'text' && block.text) {
          this.text += block.text
          return block.text
        }
        return ''
      }
      case 'content_block_delta': {
        const delta = event.delta
        if (delta?.type === 'text_delta' && delta.text) {
          this.text += delta.text
          return delta.text
        }
        if (delta?.type === 'input_json_delta') {
          const block = this.blocks.get(event.index ?? -1)
          if (block) block.json += delta.partial_json ?? ''
        }
        return ''
      }
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason
        Object.assign(this.usage, event.usage)
        return ''
      default:
        return ''
    }
  }

  /** The calls so far, in block order. Pieces are joined as sent: malformed JSON is the model's to fix. */
  toolCalls(): ModelToolCall[] {
    return [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, block], index) => {
      const start = block.input && typeof block.input === 'object' && Object.keys(block.input).length ? JSON.stringify(block.input) : ''
      return { id: block.id || `toolu_${index}`, name: block.name, arguments: argumentsText(block.json || start) }
    })
  }
}

/**
 * The user message answering one turn's calls: a `tool_result` per result, in order, with
 * `is_error: true` for failed calls and image blocks for images Anthropic takes.
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
      // Anthropic refuses an empty text block: a result with nothing to say sends no content.
      if (text || note) content.push({ type: 'text', text: [text, note].filter(Boolean).join('\n') })
      for (const image of taken) {
        content.push({ type: 'image', source: { type: 'base64', media_type: image.mimeType as 'image/png', data: image.data } })
      }
      const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: result.id }
      if (content.length) block.content = content
      if (isErrorResult(result)) block.is_error = true
      return block
    }),
  }
}
