import type { ScriptedProblem, ScriptedReply, SseEvent } from './scripted-server'

interface Item {
  type?: unknown
  id?: unknown
  call_id?: unknown
  encrypted_content?: unknown
  role?: unknown
  [key: string]: unknown
}

const CREATED = 1_700_000_000

/**
 * The OpenAI Responses side of the scripted server (`POST …/v1/responses`). Its replies to a
 * `thinking` script carry a `reasoning` item, with `encrypted_content` when the request has
 * `include: ['reasoning.encrypted_content']`. Like the real API with `store: false`, it keeps
 * nothing: a reasoning item must come back whole with the content it was sent, and a
 * function call that followed reasoning must come back after its reasoning item.
 */
export class ScriptedResponses {
  /** Reasoning item id → the encrypted content issued for it. */
  private reasoning = new Map<string, string>()
  /** Function call item id → the reasoning item it followed. */
  private follows = new Map<string, string>()

  /** What the real API would refuse in this request body, with its status and words. */
  refusals(body: Record<string, unknown>, model?: string): ScriptedProblem[] {
    const problems: ScriptedProblem[] = []
    const fail = (message: string, status = 400) => problems.push({ status, message })
    if (typeof body.model !== 'string' || !body.model) fail('Missing required parameter: \'model\'.')
    else if (model && body.model !== model) fail(`The requested model '${body.model}' does not exist.`)
    const input = body.input
    if (typeof input === 'string') return problems
    if (!Array.isArray(input)) {
      fail('Missing required parameter: \'input\'.')
      return problems
    }
    const stored = body.store !== false
    const notFound = (id: unknown) => fail(stored
      ? `Item with id '${String(id)}' not found.`
      : `Item with id '${String(id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, 404)
    const seenReasoning = new Set<string>()
    const pending = new Map<string, number>()
    for (const [i, item] of (input as Item[]).entries()) {
      switch (item?.type) {
        case 'reasoning': {
          const id = typeof item.id === 'string' ? item.id : undefined
          if (typeof item.encrypted_content === 'string') {
            const issued = id ? this.reasoning.get(id) : [...this.reasoning.values()].find((content) => content === item.encrypted_content)
            if (issued !== item.encrypted_content) fail(`The encrypted content ${abbreviate(item.encrypted_content)} could not be verified.`)
          } else if (!stored || !id || !this.reasoning.has(id)) {
            notFound(id)
          }
          if (id) seenReasoning.add(id)
          break
        }
        case 'item_reference':
          if (!stored || typeof item.id !== 'string' || !this.reasoning.has(item.id)) notFound(item.id)
          else seenReasoning.add(item.id)
          break
        case 'function_call': {
          const needed = typeof item.id === 'string' ? this.follows.get(item.id) : undefined
          if (needed && !seenReasoning.has(needed)) fail(`Item '${String(item.id)}' of type 'function_call' was provided without its required 'reasoning' item: '${needed}'.`)
          if (typeof item.call_id !== 'string') fail(`Missing required parameter: 'input[${i}].call_id'.`)
          else pending.set(item.call_id, i)
          break
        }
        case 'function_call_output':
          if (!pending.has(String(item.call_id))) fail(`No tool call found for function call output with call_id ${String(item.call_id)}.`)
          pending.delete(String(item.call_id))
          break
      }
    }
    for (const callId of pending.keys()) fail(`No tool output found for function call ${callId}.`)
    return problems
  }

  /** The output items of a reply; its reasoning item's content is recorded as issued. */
  private output(reply: ScriptedReply, body: Record<string, unknown>, turn: number): Item[] {
    const items: Item[] = []
    let reasoning: string | undefined
    if (reply.thinking !== undefined) {
      reasoning = `rs_scripted_${turn}`
      const content = `gAAAAA${btoa(`dogu-scripted-reasoning:${reasoning}`)}`
      this.reasoning.set(reasoning, content)
      const include = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content')
      items.push({ id: reasoning, type: 'reasoning', summary: [{ type: 'summary_text', text: reply.thinking }], ...(include ? { encrypted_content: content } : {}) })
    }
    if (reply.text) {
      items.push({ id: `msg_scripted_${turn}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text: reply.text }] })
    }
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      const id = `fc_scripted_${turn}_${i}`
      if (reasoning) this.follows.set(id, reasoning)
      items.push({ id, type: 'function_call', status: 'completed', arguments: call.arguments, call_id: call.id ?? `call_scripted_${turn}_${i}`, name: call.name })
    }
    return items
  }

  /** A whole `response` object. */
  whole(reply: ScriptedReply, body: Record<string, unknown>, turn: number) {
    return responseOf(body, turn, 'completed', this.output(reply, body, turn), reply)
  }

  /** The events of a streamed reply, text and arguments in `pieces`. */
  events(reply: ScriptedReply, body: Record<string, unknown>, turn: number, pieces: (text: string) => string[]): SseEvent[] {
    const events: SseEvent[] = []
    const emit = (data: Record<string, unknown>) => events.push({ event: data.type as string, data: { ...data, sequence_number: events.length } })
    const output = this.output(reply, body, turn)
    emit({ type: 'response.created', response: responseOf(body, turn, 'in_progress', []) })
    for (const [output_index, item] of output.entries()) {
      const item_id = item.id
      if (item.type === 'reasoning') {
        const text = (item.summary as { text: string }[])[0].text
        emit({ type: 'response.output_item.added', output_index, item: { id: item_id, type: 'reasoning', summary: [] } })
        emit({ type: 'response.reasoning_summary_part.added', item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } })
        for (const delta of pieces(text)) emit({ type: 'response.reasoning_summary_text.delta', item_id, output_index, summary_index: 0, delta })
        emit({ type: 'response.reasoning_summary_text.done', item_id, output_index, summary_index: 0, text })
        emit({ type: 'response.reasoning_summary_part.done', item_id, output_index, summary_index: 0, part: { type: 'summary_text', text } })
      }
      if (item.type === 'message') {
        const text = (item.content as { text: string }[])[0].text
        emit({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } })
        emit({ type: 'response.content_part.added', item_id, output_index, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } })
        for (const delta of pieces(text)) emit({ type: 'response.output_text.delta', item_id, output_index, content_index: 0, delta })
        emit({ type: 'response.output_text.done', item_id, output_index, content_index: 0, text })
        emit({ type: 'response.content_part.done', item_id, output_index, content_index: 0, part: { type: 'output_text', annotations: [], text } })
      }
      if (item.type === 'function_call') {
        emit({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } })
        for (const delta of pieces(item.arguments as string)) if (delta) emit({ type: 'response.function_call_arguments.delta', item_id, output_index, delta })
        emit({ type: 'response.function_call_arguments.done', item_id, output_index, arguments: item.arguments })
      }
      emit({ type: 'response.output_item.done', output_index, item })
    }
    emit({ type: 'response.completed', response: responseOf(body, turn, 'completed', output, reply) })
    return events
  }

  /** An error body in OpenAI's shape. */
  static errorBody(status: number, message: string): string {
    const code = message.includes('could not be verified') ? 'invalid_encrypted_content' : null
    return JSON.stringify({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } })
  }
}

function responseOf(body: Record<string, unknown>, turn: number, status: string, output: Item[], reply?: ScriptedReply) {
  const usage = reply ? reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 } : undefined
  return {
    id: `resp_scripted_${turn}`,
    object: 'response',
    created_at: CREATED,
    status,
    model: body.model,
    output,
    store: body.store !== false,
    usage: usage ? { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.prompt_tokens + usage.completion_tokens } : null,
  }
}

/** How the real API names an encrypted content in its error: `gAAA...DQ==`. */
function abbreviate(content: string): string {
  return content.length > 8 ? `${content.slice(0, 4)}...${content.slice(-4)}` : content
}
