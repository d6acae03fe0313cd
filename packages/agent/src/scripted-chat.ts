import type { ScriptedProblem, ScriptedReply, ScriptedRequest, SseEvent } from './scripted-server'

const CREATED = 1_700_000_000

/** The OpenAI Chat Completions side of the scripted server (`POST …/chat/completions`). */
export class ScriptedChat {
  /** What a strict endpoint would refuse in this request body (see {@link refusals}). */
  refusals(body: ScriptedRequest['body'], model?: string): ScriptedProblem[] {
    return refusals(body, model).map((message) => ({ status: 400, message }))
  }

  /** A whole `chat.completion` reply. */
  whole(reply: ScriptedReply, body: ScriptedRequest['body']) {
    const calls = reply.toolCalls ?? []
    return {
      id: 'chatcmpl-scripted',
      object: 'chat.completion',
      created: CREATED,
      model: body.model,
      choices: [{
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? (calls.length ? null : ''),
          ...(calls.length ? { tool_calls: calls.map((call, i) => ({ id: call.id ?? `call_${i}`, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
        },
        finish_reason: reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop'),
      }],
      usage: usageOf(reply),
    }
  }

  /** The events of a streamed reply, ending in `[DONE]`; text and arguments in `pieces`. */
  events(reply: ScriptedReply, body: ScriptedRequest['body'], _turn: number, pieces: (text: string) => string[]): SseEvent[] {
    const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: CREATED, model: body.model }
    const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }]
    for (const piece of reply.text ? pieces(reply.text) : []) {
      events.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
    }
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: call.id ?? `call_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }] })
      for (const piece of pieces(call.arguments)) {
        if (piece) events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] }, finish_reason: null }] })
      }
    }
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop') }] })
    const options = body.stream_options as { include_usage?: boolean } | undefined
    if (options?.include_usage) events.push({ ...base, choices: [], usage: usageOf(reply) })
    return [...events.map((data) => ({ data })), { data: '[DONE]' }]
  }

  /** An error body in OpenAI's shape. */
  static errorBody(_status: number, message: string): string {
    return JSON.stringify({ error: { message, type: 'invalid_request_error' } })
  }
}

function usageOf(reply: ScriptedReply) {
  const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 }
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
}

/** What a strict OpenAI-compatible endpoint would refuse in this request body. */
export function refusals(body: ScriptedRequest['body'], model?: string): string[] {
  const problems: string[] = []
  if (!body || typeof body !== 'object') return ['the body is not a JSON object']
  if (typeof body.model !== 'string' || !body.model) problems.push('you must provide a model parameter')
  else if (model && body.model !== model) problems.push(`The model \`${body.model}\` does not exist`)
  if (body.stream_options !== undefined && body.stream !== true) problems.push('The \'stream_options\' parameter is only allowed when \'stream\' is enabled.')
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools) || !body.tools.length) problems.push('[] is too short - \'tools\'')
    else {
      const names = body.tools.map((tool) => tool?.function?.name)
      const duplicate = names.find((name, i) => names.indexOf(name) !== i)
      if (duplicate) problems.push(`tools: duplicate function name ${JSON.stringify(duplicate)}`)
    }
  }
  const messages = body.messages
  if (!Array.isArray(messages) || !messages.length) return [...problems, '[] is too short - \'messages\'']
  let waiting: Set<string> | undefined
  for (const [i, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!waiting?.has(message.tool_call_id)) problems.push(`messages[${i}]: a 'tool' message must answer a tool_call_id of the preceding assistant message ('${message.tool_call_id}' does not)`)
      else waiting.delete(message.tool_call_id)
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) problems.push(`messages[${i}].content: must be a string`)
      continue
    }
    if (waiting?.size) problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...waiting].join(', ')}`)
    waiting = undefined
    if (message.role === 'assistant' && message.tool_calls?.length) {
      if (message.content === null) problems.push(`messages[${i}].content: null next to tool_calls (refused by some OpenAI-compatible servers; send "")`)
      waiting = new Set()
      for (const call of message.tool_calls) {
        waiting.add(call.id)
        try {
          const parsed = JSON.parse(call.function.arguments)
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object')
        } catch {
          problems.push(`messages[${i}].tool_calls: arguments of ${call.id} are not a JSON object`)
        }
      }
    }
  }
  if (waiting?.size) problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...waiting].join(', ')}`)
  return problems
}
