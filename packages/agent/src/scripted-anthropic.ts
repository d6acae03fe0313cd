import type { ScriptedProblem, ScriptedReply, SseEvent } from './scripted-server'

/** The documentation link the real API's thinking errors end with. */
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking'

interface Block {
  type: string
  [key: string]: unknown
}

interface Message {
  role?: unknown
  content?: unknown
}

/**
 * The Anthropic Messages side of the scripted server (`POST …/v1/messages`). It signs the
 * thinking it sends and, like the real API, refuses a turn whose thinking came back changed:
 * a `thinking` block whose signature is not the one issued for its text, a
 * `redacted_thinking` block whose data it never sent, or (with `thinking` enabled) a final
 * assistant turn of tool calls that no longer starts with its thinking.
 */
export class ScriptedAnthropic {
  /** Signature → the thinking text it was issued for. */
  private signatures = new Map<string, string>()
  private redacted = new Set<string>()

  /** What the real API would refuse in this request body, with its status and words. */
  refusals(body: Record<string, unknown>, model?: string): ScriptedProblem[] {
    const problems: ScriptedProblem[] = []
    const fail = (message: string) => problems.push({ status: 400, message })
    if (typeof body.model !== 'string' || !body.model) fail('model: Field required')
    else if (model && body.model !== model) problems.push({ status: 404, message: `model: ${body.model}` })
    if (typeof body.max_tokens !== 'number') fail('max_tokens: Field required')
    const messages = body.messages
    if (!Array.isArray(messages) || !messages.length) {
      fail('messages: at least one message is required')
      return problems
    }
    const thinkingOn = isThinkingOn(body.thinking)
    for (const [i, message] of (messages as Message[]).entries()) {
      const blocks = Array.isArray(message.content) ? message.content as Block[] : []
      if (typeof message.content === 'string' && !message.content) fail(`messages.${i}: text content blocks must be non-empty`)
      for (const [j, block] of blocks.entries()) {
        if (block?.type === 'text' && !block.text) fail('messages: text content blocks must be non-empty')
        if (block?.type === 'thinking') {
          if (message.role !== 'assistant') fail(`messages.${i}.content.${j}: thinking blocks are only allowed in assistant messages`)
          else if (typeof block.signature !== 'string') fail(`messages.${i}.content.${j}.thinking.signature: Field required`)
          else if (this.signatures.get(block.signature) !== block.thinking) fail(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`)
        }
        if (block?.type === 'redacted_thinking' && !(typeof block.data === 'string' && this.redacted.has(block.data))) {
          fail(`messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`)
        }
      }
      if (message.role !== 'assistant') continue
      const uses = blocks.filter((block) => block?.type === 'tool_use').map((block) => String(block.id))
      if (!uses.length) continue
      const next = (messages as Message[])[i + 1]
      const answered = new Set((Array.isArray(next?.content) ? next.content as Block[] : []).filter((block) => block?.type === 'tool_result').map((block) => String(block.tool_use_id)))
      const missing = uses.filter((id) => !answered.has(id))
      if (next?.role !== 'user' || missing.length) {
        fail(`messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${(missing.length ? missing : uses).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`)
      }
      // The lastmost set of tool_use and tool_result blocks: the turn being continued.
      if (thinkingOn && i === messages.length - 2 && !['thinking', 'redacted_thinking'].includes(blocks[0]?.type)) {
        fail(`messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${blocks[0]?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`)
      }
    }
    for (const [i, message] of (messages as Message[]).entries()) {
      if (message.role !== 'user' || !Array.isArray(message.content)) continue
      const previous = (messages as Message[])[i - 1]
      const uses = new Set((previous?.role === 'assistant' && Array.isArray(previous.content) ? previous.content as Block[] : []).filter((block) => block?.type === 'tool_use').map((block) => String(block.id)))
      for (const [j, block] of (message.content as Block[]).entries()) {
        if (block?.type === 'tool_result' && !uses.has(String(block.tool_use_id))) {
          fail(`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`)
        }
      }
    }
    return problems
  }

  /** The content blocks of a reply, signing its thinking. Throws on arguments that are not a JSON object. */
  private blocks(reply: ScriptedReply, turn: number): Block[] {
    const blocks: Block[] = []
    if (reply.thinking !== undefined) {
      const signature = btoa(`dogu-scripted-thinking:${turn}:${this.signatures.size}`)
      this.signatures.set(signature, reply.thinking)
      blocks.push({ type: 'thinking', thinking: reply.thinking, signature })
    }
    if (reply.redactedThinking) {
      const data = btoa(`dogu-scripted-redacted:${turn}:${this.redacted.size}`)
      this.redacted.add(data)
      blocks.push({ type: 'redacted_thinking', data })
    }
    if (reply.text) blocks.push({ type: 'text', text: reply.text })
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      blocks.push({ type: 'tool_use', id: call.id ?? `toolu_scripted_${turn}_${i}`, name: call.name, input: call.arguments })
    }
    return blocks
  }

  /** A whole `message` reply. */
  whole(reply: ScriptedReply, body: Record<string, unknown>, turn: number) {
    const content = this.blocks(reply, turn).map((block) => (block.type === 'tool_use' ? { ...block, input: objectInput(block) } : block))
    return { id: `msg_scripted_${turn}`, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason(reply), stop_sequence: null, usage: usageOf(reply) }
  }

  /** The events of a streamed reply: thinking and text in `pieces`, arguments split as given. */
  events(reply: ScriptedReply, body: Record<string, unknown>, turn: number, pieces: (text: string) => string[]): SseEvent[] {
    const usage = usageOf(reply)
    const events: SseEvent[] = [{ event: 'message_start', data: { type: 'message_start', message: { id: `msg_scripted_${turn}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } } }]
    const delta = (index: number, value: Record<string, unknown>) => events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: value } })
    for (const [index, block] of this.blocks(reply, turn).entries()) {
      const start = block.type === 'thinking' ? { type: 'thinking', thinking: '', signature: '' }
        : block.type === 'text' ? { type: 'text', text: '' }
        : block.type === 'tool_use' ? { ...block, input: {} }
        : block
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } })
      if (block.type === 'thinking') {
        for (const piece of pieces(block.thinking as string)) delta(index, { type: 'thinking_delta', thinking: piece })
        delta(index, { type: 'signature_delta', signature: block.signature })
      }
      if (block.type === 'text') for (const piece of pieces(block.text as string)) delta(index, { type: 'text_delta', text: piece })
      if (block.type === 'tool_use') for (const piece of pieces(block.input as string)) delta(index, { type: 'input_json_delta', partial_json: piece })
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    }
    events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: { output_tokens: usage.output_tokens } } })
    events.push({ event: 'message_stop', data: { type: 'message_stop' } })
    return events
  }

  /** An error body in Anthropic's shape. */
  static errorBody(status: number, message: string): string {
    const type = status === 404 ? 'not_found_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error'
    return JSON.stringify({ type: 'error', error: { type, message } })
  }
}

function isThinkingOn(thinking: unknown): boolean {
  const type = thinking && typeof thinking === 'object' ? (thinking as { type?: unknown }).type : undefined
  return type === 'enabled' || type === 'adaptive'
}

function stopReason(reply: ScriptedReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn')
}

function usageOf(reply: ScriptedReply) {
  const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 }
  return { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens }
}

function objectInput(block: Block): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(block.input as string)
    if (input && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>
  } catch {}
  throw new Error(`the script's arguments for ${String(block.name)} are not a JSON object, and a whole Messages reply carries input as one: ${String(block.input)}`)
}
