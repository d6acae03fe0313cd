import type { ModelToolCall, ToolResult } from '@dogu/core'
import { joinLines, mediaLines } from './result-media'
import { argumentsText, isJsonObject, jsonObjectOf, resultText, withImageNote } from './result-text'

/** A function call in an assistant message of OpenAI Chat Completions. */
export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** A content part of a user message: text or an image (URL or `data:` URL). */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }

/** A message of an OpenAI Chat Completions conversation, as the agent loop keeps it. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string; name?: string }
  | { role: 'user'; content: string | ChatContentPart[]; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; name?: string; refusal?: string | null }
  | { role: 'tool'; tool_call_id: string; content: string }

/** The assistant message of a whole (non-streamed) reply, `choices[0].message`. */
export interface ChatReplyMessage {
  content?: string | null
  tool_calls?: readonly { id?: string; type?: string; function?: { name?: string; arguments?: string | null } }[] | null
}

/** Token counts as Chat Completions reports them. */
export interface ChatUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
}

/** One `data:` event of a streamed reply. */
export interface ChatCompletionChunk {
  choices?: readonly {
    index?: number
    delta?: {
      content?: string | null
      tool_calls?: readonly { index?: number; id?: string | null; type?: string; function?: { name?: string | null; arguments?: string | null } }[] | null
    }
    finish_reason?: string | null
  }[]
  usage?: ChatUsage | null
}

/**
 * The tool calls of a whole reply's message, for `toolset.execute`. Calls without a
 * function are skipped; a missing id becomes `call_<index>`.
 */
export function parseChatToolCalls(message: ChatReplyMessage): ModelToolCall[] {
  const calls: ModelToolCall[] = []
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    if (call.type !== undefined && call.type !== 'function') continue
    if (!call.function?.name) continue
    calls.push({ id: call.id || `call_${index}`, name: call.function.name, arguments: argumentsText(call.function.arguments) })
  }
  return calls
}

interface Partial {
  id: string
  name: string
  arguments: string
}

/**
 * Collects a streamed reply: text deltas and tool-call deltas, whose argument text may be
 * split anywhere (inside a key, a number, an escape). Calls are keyed by `index`; servers
 * that leave it out are keyed by `id`, and a delta with neither continues the last call.
 * The collection is done by hand, not by the `openai` package's stream helper, which
 * throws on malformed arguments when tools are `strict`: bad JSON is the model's to fix.
 */
export class ChatCompletionAccumulator {
  text = ''
  finishReason: string | undefined
  usage: ChatUsage | undefined
  private calls: Partial[] = []
  private byIndex = new Map<number, Partial>()
  private byId = new Map<string, Partial>()

  /** Adds one chunk. Returns the text it added (empty if none). */
  push(chunk: ChatCompletionChunk): string {
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices?.[0]
    if (!choice) return ''
    if (choice.finish_reason) this.finishReason = choice.finish_reason
    const delta = choice.delta
    if (!delta) return ''
    for (const part of delta.tool_calls ?? []) this.addCall(part)
    const text = typeof delta.content === 'string' ? delta.content : ''
    this.text += text
    return text
  }

  private addCall(part: NonNullable<NonNullable<NonNullable<ChatCompletionChunk['choices']>[number]['delta']>['tool_calls']>[number]) {
    let call = part.index !== undefined ? this.byIndex.get(part.index) : part.id ? this.byId.get(part.id) : this.calls.at(-1)
    if (!call) {
      call = { id: '', name: '', arguments: '' }
      this.calls.push(call)
      if (part.index !== undefined) this.byIndex.set(part.index, call)
    }
    if (part.id && !call.id) {
      call.id = part.id
      this.byId.set(part.id, call)
    }
    const name = part.function?.name
    if (name && !call.name) call.name = name
    if (part.function?.arguments) call.arguments += part.function.arguments
  }

  /** The calls so far, for `toolset.execute`. A call without an id gets `call_<n>`. */
  toolCalls(): ModelToolCall[] {
    return this.calls.map((call, index) => ({ id: call.id || `call_${index}`, name: call.name, arguments: argumentsText(call.arguments) }))
  }

  /** The assistant message for the conversation (see {@link chatAssistantMessage}). */
  message(): ChatMessage {
    return chatAssistantMessage(this.text, this.toolCalls())
  }
}

/**
 * The assistant message that goes back into the conversation. With tool calls its content
 * is `""`, never `null`: some OpenAI-compatible servers refuse `null`. Malformed arguments
 * that the pipeline repairs (see `repairArguments`) are sent repaired, as the call ran; others
 * that are not a JSON object are sent as `"{}"`: servers that parse them (Ollama) refuse the
 * request otherwise, and the call's error result already tells the model what it sent wrong.
 */
export function chatAssistantMessage(text: string, calls: readonly ModelToolCall[]): ChatMessage {
  if (!calls.length) return { role: 'assistant', content: text }
  return {
    role: 'assistant',
    content: text,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: jsonObjectText(call.arguments) },
    })),
  }
}

function jsonObjectText(value: ModelToolCall['arguments']): string {
  if (value && typeof value === 'object') return JSON.stringify(value)
  const text = argumentsText(value)
  try {
    // The model's own bytes when they are an object: the history stays as it was sent.
    if (isJsonObject(JSON.parse(text))) return text
  } catch {}
  return JSON.stringify(jsonObjectOf(text))
}

/**
 * Tool messages for Dogu's results, one per result in order. Chat Completions takes only
 * text in tool messages: a failed call reads `Error: …` / `Denied: …`, a background one
 * names its task, images and audio become a short note (`[audio audio/wav, 12 KB]`), a
 * resource a line naming it (`[resource notes: file:///notes.md]`) with its text under it.
 */
export function toChatToolMessages(results: readonly ToolResult[]): ChatMessage[] {
  return results.map((result) => ({
    role: 'tool',
    tool_call_id: result.id,
    content: joinLines(withImageNote(resultText(result, true), result.images), ...mediaLines(result)),
  }))
}
