import { TOOL_STATUSES, type ToolResult } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import {
  AgentError,
  AnthropicStreamAccumulator,
  ChatCompletionAccumulator,
  chatAssistantMessage,
  ERROR_STATUSES,
  type GeminiPart,
  type GeminiPartialArg,
  GeminiStreamAccumulator,
  parseAnthropicToolCalls,
  parseChatToolCalls,
  parseGeminiToolCalls,
  parseResponsesToolCalls,
  ResponsesStreamAccumulator,
  toAnthropicToolResults,
  toChatToolMessages,
  toGeminiFunctionResponses,
  toResponsesToolOutputs,
} from '../src'
import { PNG, RATE_LIMITED, results, splitAt } from './fixtures'

const ARGS = '{"q":"巴黎 \\"Paris\\"","limit":3}'

/** The error `run` throws. */
function captured(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('it did not throw')
}

describe('OpenAI Chat Completions', () => {
  it('reads the calls of a whole reply', () => {
    const calls = parseChatToolCalls({
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: ARGS } },
        { id: 'call_b', type: 'function', function: { name: 'notes', arguments: '' } },
      ],
    })
    expect(calls).toEqual([
      { id: 'call_a', name: 'lookup', arguments: ARGS },
      { id: 'call_b', name: 'notes', arguments: '{}' },
    ])
  })

  it('joins argument deltas split at every position, inside escapes and multi-byte text', () => {
    for (let cut = 1; cut < ARGS.length; cut++) {
      const collected = new ChatCompletionAccumulator()
      collected.push({ choices: [{ delta: { content: 'Look' } }] })
      collected.push({ choices: [{ delta: { content: 'ing.', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } }] } }] })
      for (const piece of splitAt(ARGS, cut, Math.min(cut + 2, ARGS.length))) {
        collected.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }] })
      }
      collected.push({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] })
      expect(collected.toolCalls()).toEqual([{ id: 'call_a', name: 'lookup', arguments: ARGS }])
      expect(collected.text).toBe('Looking.')
      expect(collected.finishReason).toBe('tool_calls')
    }
  })

  it('keeps parallel calls apart by index, even interleaved, and reads usage from the last chunk', () => {
    const collected = new ChatCompletionAccumulator()
    collected.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'a', function: { name: 'lookup', arguments: '{"q":' } }] } }] })
    collected.push({ choices: [{ delta: { tool_calls: [{ index: 1, id: 'b', function: { name: 'lookup', arguments: '{"q":"JP"' } }] } }] })
    collected.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '"FR"}' } }, { index: 1, function: { arguments: '}' } }] } }] })
    collected.push({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } })
    expect(collected.toolCalls()).toEqual([
      { id: 'a', name: 'lookup', arguments: '{"q":"FR"}' },
      { id: 'b', name: 'lookup', arguments: '{"q":"JP"}' },
    ])
    expect(collected.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
  })

  it('follows servers that leave out the index (by id, then the last call)', () => {
    const collected = new ChatCompletionAccumulator()
    collected.push({ choices: [{ delta: { tool_calls: [{ id: 'x', function: { name: 'a', arguments: '{"n"' } }] } }] })
    collected.push({ choices: [{ delta: { tool_calls: [{ function: { arguments: ':1}' } }] } }] })
    collected.push({ choices: [{ delta: { tool_calls: [{ id: 'y', function: { name: 'b', arguments: '{}' } }] } }] })
    expect(collected.toolCalls()).toEqual([{ id: 'x', name: 'a', arguments: '{"n":1}' }, { id: 'y', name: 'b', arguments: '{}' }])
  })

  it('echoes calls with content "" (never null) and replaces arguments that are not a JSON object', () => {
    expect(chatAssistantMessage('', [
      { id: 'a', name: 'lookup', arguments: '{"q":' },
      { id: 'b', name: 'lookup', arguments: '[1]' },
      { id: 'c', name: 'lookup', arguments: { q: 'FR' } },
    ])).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'lookup', arguments: '{}' } },
        { id: 'b', type: 'function', function: { name: 'lookup', arguments: '{}' } },
        { id: 'c', type: 'function', function: { name: 'lookup', arguments: '{"q":"FR"}' } },
      ],
    })
    expect(chatAssistantMessage('Paris.', [])).toEqual({ role: 'assistant', content: 'Paris.' })
  })

  it('turns results into tool messages: errors labelled, the task id named, images as a note', () => {
    expect(toChatToolMessages(results)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'France: capital Paris' },
      { role: 'tool', tool_call_id: 'c2', content: 'Denied: Permission denied: the user said no' },
      { role: 'tool', tool_call_id: 'c3', content: 'Error: Unknown tool "lokup". Did you mean "lookup"?' },
      { role: 'tool', tool_call_id: 'c4', content: 'The call is still running and continues in the background as task task_7.' },
      { role: 'tool', tool_call_id: 'c5', content: 'Timed out: Timed out after 1000 ms.' },
      { role: 'tool', tool_call_id: 'c6', content: 'screenshot taken\n[2 images (image/png, image/tiff) not shown: this provider takes no images in tool results]' },
      { role: 'tool', tool_call_id: 'c7', content: 'Cancelled: the batch was cancelled.' },
      { role: 'tool', tool_call_id: 'c8', content: RATE_LIMITED },
    ])
    const [background] = toChatToolMessages([{ ...results[3], content: 'moved on' }])
    expect(background.content).toBe('moved on (background task task_7)')
    // A refusal from a server whose text has no label still reads as one, retry time kept.
    const [bare] = toChatToolMessages([{ ...results[7], content: 'quota used; try again in 3 s.' }])
    expect(bare.content).toBe('Rate limited: quota used; try again in 3 s.')
  })

  it('sends a status it does not know as an error, never as output', () => {
    const unknown = { ...results[0], status: 'throttled' } as unknown as ToolResult
    expect(toChatToolMessages([unknown])[0].content).toBe('Error: France: capital Paris')
    expect(toAnthropicToolResults([unknown]).content[0].is_error).toBe(true)
    expect(toGeminiFunctionResponses([unknown]).parts[0].functionResponse.response).toEqual({ error: 'France: capital Paris' })
  })

  it('has an error form for every status but ok and background', () => {
    expect(TOOL_STATUSES.filter((status) => !ERROR_STATUSES.has(status))).toEqual(['ok', 'background'])
    expect([...ERROR_STATUSES]).toContain('rate_limited')
  })
})

describe('OpenAI Responses', () => {
  // Recorded shape: a reply's `output` with a message and two function calls.
  const output = [
    { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: ARGS, status: 'completed' },
    { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'notes', arguments: '' },
  ]

  it('reads function calls from a whole reply by call_id', () => {
    expect(parseResponsesToolCalls(output)).toEqual([
      { id: 'call_1', name: 'lookup', arguments: ARGS },
      { id: 'call_2', name: 'notes', arguments: '{}' },
    ])
  })

  it('joins streamed argument deltas split anywhere; the done event\'s whole text wins', () => {
    for (let cut = 1; cut < ARGS.length; cut++) {
      const collected = new ResponsesStreamAccumulator()
      collected.push({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, delta: 'Check' })
      collected.push({ type: 'response.output_item.added', output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '' } })
      for (const piece of splitAt(ARGS, cut)) collected.push({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: piece })
      expect(collected.toolCalls()).toEqual([{ id: 'call_1', name: 'lookup', arguments: ARGS }])
      collected.push({ type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 1, arguments: ARGS })
      collected.push({ type: 'response.output_item.done', output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: ARGS } })
      collected.push({ type: 'response.completed', response: { usage: { input_tokens: 9, output_tokens: 4 } } })
      expect(collected.toolCalls()).toEqual([{ id: 'call_1', name: 'lookup', arguments: ARGS }])
      expect(collected.text).toBe('Check')
      expect(collected.usage).toEqual({ input_tokens: 9, output_tokens: 4 })
    }
  })

  it('keeps every output item in output order for the next input; the done item wins over the added one', () => {
    const collected = new ResponsesStreamAccumulator()
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look it up.' }], encrypted_content: 'gAAAAABenc==' }
    collected.push({ type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } })
    collected.push({ type: 'response.output_item.added', output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '' } })
    collected.push({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{"q":"FR"}' })
    collected.push({ type: 'response.output_item.done', output_index: 0, item: reasoning })
    expect(collected.output()).toEqual([reasoning, { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{"q":"FR"}' }])
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{"q":"FR"}', status: 'completed' }
    const message = { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] }
    // An item whose done event never came is read from response.completed.
    collected.push({ type: 'response.output_item.done', output_index: 1, item: call })
    collected.push({ type: 'response.completed', response: { output: [{ ...reasoning, encrypted_content: 'other' }, call, message] } })
    expect(collected.output()).toEqual([reasoning, call, message])
  })

  it('turns results into function_call_output items, images as input_image parts', () => {
    const outputs = toResponsesToolOutputs(results)
    expect(outputs[1]).toEqual({ type: 'function_call_output', call_id: 'c2', output: 'Denied: Permission denied: the user said no' })
    expect(outputs[3]).toEqual({ type: 'function_call_output', call_id: 'c4', output: 'The call is still running and continues in the background as task task_7.' })
    expect(outputs[7]).toEqual({ type: 'function_call_output', call_id: 'c8', output: RATE_LIMITED })
    expect(outputs[5]).toEqual({
      type: 'function_call_output',
      call_id: 'c6',
      output: [
        { type: 'input_text', text: 'screenshot taken' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG.data}`, detail: 'auto' },
        { type: 'input_image', image_url: 'data:image/tiff;base64,SUkqAA==', detail: 'auto' },
      ],
    })
  })
})

describe('Anthropic Messages', () => {
  // Recorded shape of a Messages reply (docs: "Tool use with Claude").
  const reply = {
    id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use',
    content: [
      { type: 'text', text: 'I will look it up.' },
      { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { q: 'Paris', limit: 3 } },
      { type: 'tool_use', id: 'toolu_02', name: 'notes', input: {} },
    ],
    usage: { input_tokens: 20, output_tokens: 10 },
  }

  it('reads tool_use blocks of a whole reply, input as an object', () => {
    expect(parseAnthropicToolCalls(reply.content)).toEqual([
      { id: 'toolu_01', name: 'lookup', arguments: { q: 'Paris', limit: 3 } },
      { id: 'toolu_02', name: 'notes', arguments: {} },
    ])
  })

  it('joins input_json_delta pieces split anywhere, per block index', () => {
    for (let cut = 1; cut < ARGS.length; cut++) {
      const collected = new AnthropicStreamAccumulator()
      const events = [
        { type: 'message_start', message: { usage: { input_tokens: 20, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'I will ' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'look.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: {} } },
        ...splitAt(ARGS, cut).map((partial_json) => ({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } })),
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_02', name: 'notes', input: {} } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
        { type: 'content_block_stop', index: 2 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
        { type: 'message_stop' },
      ]
      for (const event of events) collected.push(event)
      expect(collected.toolCalls()).toEqual([
        { id: 'toolu_01', name: 'lookup', arguments: ARGS },
        { id: 'toolu_02', name: 'notes', arguments: '{}' },
      ])
      expect(collected.text).toBe('I will look.')
      expect(collected.stopReason).toBe('tool_use')
      expect(collected.usage).toEqual({ input_tokens: 20, output_tokens: 30 })
    }
  })

  it('keeps thinking, its signature and redacted thinking in the assistant turn, split anywhere', () => {
    const THINKING = 'The user wants 巴黎. I should call lookup with "q".'
    const SIGNATURE = 'EqQBCkgIAhABGAIiQL+sig/+=='
    for (let cut = 1; cut < THINKING.length; cut += 5) {
      const collected = new AnthropicStreamAccumulator()
      const events = [
        { type: 'message_start', message: { usage: { input_tokens: 20, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
        ...splitAt(THINKING, cut).map((thinking) => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking } })),
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
        { type: 'content_block_stop', index: 2 },
        { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: {} } },
        ...splitAt(ARGS, cut % ARGS.length || 1).map((partial_json) => ({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json } })),
        { type: 'content_block_stop', index: 3 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
      ]
      for (const event of events) collected.push(event)
      expect(collected.message()).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
          // The empty text block is left out: the API refuses it.
          { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: JSON.parse(ARGS) },
        ],
      })
      expect(collected.text).toBe('')
      expect(collected.toolCalls()).toEqual([{ id: 'toolu_01', name: 'lookup', arguments: ARGS }])
    }
  })

  it('sends back streamed input that is not an object as the pipeline ran it: repaired, or {}', () => {
    const turn = (partial_json: string) => {
      const collected = new AnthropicStreamAccumulator()
      collected.push({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'lookup', input: {} } })
      collected.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } })
      return collected.message().content[0].input
    }
    expect(turn('{"q":"FR",}')).toEqual({ q: 'FR' })
    expect(turn('[1, 2]')).toEqual({})
    expect(turn('{"q":')).toEqual({})
  })

  it('keeps a text block\'s streamed citations', () => {
    const collected = new AnthropicStreamAccumulator()
    const citation = { type: 'char_location', cited_text: 'Paris', document_index: 0, start_char_index: 0, end_char_index: 5 }
    collected.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } })
    collected.push({ type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation } })
    collected.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paris.' } })
    expect(collected.message().content).toEqual([{ type: 'text', text: 'Paris.', citations: [citation] }])
  })

  it('answers with one user message of tool_result blocks: is_error on failures, image blocks where taken', () => {
    const message = toAnthropicToolResults(results)
    expect(message.role).toBe('user')
    expect(message.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'France: capital Paris' }] },
      { type: 'tool_result', tool_use_id: 'c2', content: [{ type: 'text', text: 'Permission denied: the user said no' }], is_error: true },
      { type: 'tool_result', tool_use_id: 'c3', content: [{ type: 'text', text: 'Unknown tool "lokup". Did you mean "lookup"?' }], is_error: true },
      { type: 'tool_result', tool_use_id: 'c4', content: [{ type: 'text', text: 'The call is still running and continues in the background as task task_7.' }] },
      { type: 'tool_result', tool_use_id: 'c5', content: [{ type: 'text', text: 'Timed out after 1000 ms.' }], is_error: true },
      {
        type: 'tool_result',
        tool_use_id: 'c6',
        content: [
          { type: 'text', text: 'screenshot taken\n[1 image (image/tiff) not shown: this provider takes no images in tool results]' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.data } },
        ],
      },
      { type: 'tool_result', tool_use_id: 'c7', content: [{ type: 'text', text: 'Cancelled: the batch was cancelled.' }], is_error: true },
      { type: 'tool_result', tool_use_id: 'c8', content: [{ type: 'text', text: RATE_LIMITED }], is_error: true },
    ])
    // Anthropic refuses an empty text block: an empty result sends no content at all.
    expect(toAnthropicToolResults([{ ...results[0], content: '' }]).content).toEqual([{ type: 'tool_result', tool_use_id: 'c1' }])
  })
})

describe('Gemini', () => {
  // Recorded shape of a generateContent reply with a thought signature on the first call.
  const reply = {
    candidates: [{
      content: {
        role: 'model',
        parts: [
          { text: 'Let me check.' },
          { functionCall: { id: 'fc-1', name: 'lookup', args: { q: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
          { functionCall: { name: 'notes', args: {} } },
        ],
      },
      finishReason: 'STOP',
    }],
    usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 38 },
  }

  it('reads functionCall parts; a call without id gets a local one that is not sent back', () => {
    const calls = parseGeminiToolCalls(reply)
    expect(calls).toEqual([
      { id: 'fc-1', name: 'lookup', arguments: { q: 'Paris' } },
      { id: 'dogu-gemini-1', name: 'notes', arguments: {} },
    ])
    const content = toGeminiFunctionResponses([
      { id: 'fc-1', name: 'lookup', status: 'ok', content: 'Paris is the capital of France', durationMs: 1 },
      { id: 'dogu-gemini-1', name: 'notes', status: 'ok', content: 'no notes', durationMs: 1 },
    ])
    expect(content).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'fc-1', name: 'lookup', response: { output: 'Paris is the capital of France' } } },
        { functionResponse: { name: 'notes', response: { output: 'no notes' } } },
      ],
    })
  })

  it('collects streamed chunks, keeping parts (and thought signatures) as they came', () => {
    const collected = new GeminiStreamAccumulator()
    collected.push({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me ' }] } }] })
    collected.push({ candidates: [{ content: { role: 'model', parts: [{ text: 'think', thought: true }, { text: 'check.' }] } }] })
    collected.push({ candidates: [{ content: { role: 'model', parts: reply.candidates[0].content.parts.slice(1) }, finishReason: 'STOP' }], usageMetadata: reply.usageMetadata })
    expect(collected.text).toBe('Let me check.')
    expect(collected.toolCalls().map((call) => call.name)).toEqual(['lookup', 'notes'])
    expect(collected.parts[3]).toEqual({ functionCall: { id: 'fc-1', name: 'lookup', args: { q: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' })
    expect(collected.usage).toEqual({ promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 38 })
    expect(collected.finishReason).toBe('STOP')
  })

  const piece = (partialArgs: GeminiPartialArg[], willContinue = true) => ({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { partialArgs, willContinue } }] } }] })
  const start = (name: string, extra: Partial<GeminiPart> = {}) => ({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name, willContinue: true }, ...extra }] } }] })
  const end = { candidates: [{ content: { role: 'model', parts: [{ functionCall: {} }] } }] }

  it('assembles streamed arguments: strings in pieces, typed values, bracketed names, a list of objects', () => {
    const collected = new GeminiStreamAccumulator()
    collected.push(start('book', { thoughtSignature: 'c2ln' }))
    collected.push(piece([{ jsonPath: '$.city', stringValue: '巴', willContinue: true }]))
    collected.push(piece([{ jsonPath: '$.city', stringValue: '黎 "center"', willContinue: true }]))
    collected.push(piece([{ jsonPath: '$.city', stringValue: '' }]))
    collected.push(piece([{ jsonPath: '$.nights', numberValue: 3 }, { jsonPath: '$.breakfast', boolValue: false }, { jsonPath: '$.note', nullValue: 'NULL_VALUE' }]))
    collected.push(piece([{ jsonPath: "$['check-in']", stringValue: '2026-05-01' }, { jsonPath: '$["it\'s"]', stringValue: 'ok' }]))
    collected.push(piece([{ jsonPath: '$.guests[0].name', stringValue: 'Ana' }, { jsonPath: '$.guests[1].name', stringValue: 'Bo' }, { jsonPath: '$.guests[1].age', numberValue: 7 }]))
    collected.push(end)
    const args = { city: '巴黎 "center"', nights: 3, breakfast: false, note: null, 'check-in': '2026-05-01', "it's": 'ok', guests: [{ name: 'Ana' }, { name: 'Bo', age: 7 }] }
    expect(collected.toolCalls()).toEqual([{ id: 'dogu-gemini-0', name: 'book', arguments: args }])
    expect(collected.parts).toEqual([{ functionCall: { name: 'book', args }, thoughtSignature: 'c2ln' }])
  })

  it('takes the call id and a thought signature from a later piece, and ends a call when a whole one follows', () => {
    const collected = new GeminiStreamAccumulator()
    collected.push(start('lookup'))
    collected.push({ candidates: [{ content: { parts: [{ functionCall: { id: 'fc-9', partialArgs: [{ jsonPath: '$.q', stringValue: 'FR' }], willContinue: true }, thoughtSignature: 'bGF0ZQ==' }] } }] })
    collected.push({ candidates: [{ content: { parts: [{ functionCall: { name: 'notes', args: {} } }] } }] })
    expect(collected.parts).toEqual([
      { functionCall: { id: 'fc-9', name: 'lookup', args: { q: 'FR' } }, thoughtSignature: 'bGF0ZQ==' },
      { functionCall: { name: 'notes', args: {} } },
    ])
    expect(collected.toolCalls().map((call) => call.arguments)).toEqual([{ q: 'FR' }, {}])
    // A whole call that says it is the last part is still a whole call, its args kept.
    collected.push({ candidates: [{ content: { parts: [{ functionCall: { name: 'lookup', args: { q: 'JP' }, willContinue: false } }] } }] })
    expect(collected.toolCalls().at(-1)!.arguments).toEqual({ q: 'JP' })
  })

  it('keeps a __proto__ argument as data, never as the object\'s prototype', () => {
    const collected = new GeminiStreamAccumulator()
    collected.push(start('lookup'))
    collected.push(piece([{ jsonPath: '$.__proto__.polluted', stringValue: 'yes' }], false))
    const [call] = collected.toolCalls()
    expect(JSON.stringify(call.arguments)).toBe('{"__proto__":{"polluted":"yes"}}')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(call.arguments)).toBe(Object.prototype)
  })

  it('refuses streamed arguments it cannot assemble without a guess, naming the path', () => {
    const fails = (pieces: ReturnType<typeof piece>[], message: RegExp) => {
      const collected = new GeminiStreamAccumulator()
      collected.push(start('lookup'))
      expect(() => pieces.forEach((chunk) => collected.push(chunk))).toThrowError(message)
    }
    fails([piece([{ jsonPath: 'q', stringValue: 'x' }])], /"q", a JSON path Dogu cannot read: it does not start with \$ \(streamed arguments of lookup\)/)
    fails([piece([{ jsonPath: '$', stringValue: 'x' }])], /names the arguments themselves/)
    fails([piece([{ jsonPath: '$.a[x]', stringValue: 'x' }])], /an unreadable bracket at offset 3/)
    fails([piece([{ jsonPath: '$.q', stringValue: 'a' }]), piece([{ jsonPath: '$.q', stringValue: 'b' }])], /sent a second value for \$\.q after that path had ended/)
    fails([piece([{ jsonPath: '$.list[1]', stringValue: 'b' }])], /sent \$\.list\[1\] before \$\.list\[0\]/)
    fails([piece([{ jsonPath: '$.a', numberValue: 1 }, { jsonPath: '$.a.b', numberValue: 2 }])], /sent \$\.a\.b inside \$\.a, which already holds a value/)
    fails([piece([{ jsonPath: '$.a[0]', numberValue: 1 }, { jsonPath: '$.a.b', numberValue: 2 }])], /sent the key "b" into \$\.a, which is a list/)
    const stray = new GeminiStreamAccumulator()
    expect(() => stray.push(piece([{ jsonPath: '$.q', stringValue: 'FR' }]))).toThrowError(/Gemini streamed function call arguments \(\$\.q\) with no call open/)
    expect(AgentError.is(captured(() => stray.push(piece([{ jsonPath: '$.q', stringValue: 'FR' }]))), 'BAD_RESPONSE')).toBe(true)
  })

  it('gives a call cut off mid-stream as the JSON text that came, open where it stopped', () => {
    const collected = new GeminiStreamAccumulator()
    collected.push(start('lookup'))
    expect(collected.toolCalls()[0].arguments).toBe('{')
    collected.push(piece([{ jsonPath: '$.q', stringValue: 'Par', willContinue: true }]))
    expect(collected.toolCalls()[0].arguments).toBe('{"q":"Par')
    collected.push(piece([{ jsonPath: '$.q', stringValue: 'is' }]))
    expect(collected.toolCalls()[0].arguments).toBe('{"q":"Paris"')
    collected.push(piece([{ jsonPath: '$.tags[0]', stringValue: 'a' }]))
    expect(collected.toolCalls()[0].arguments).toBe('{"q":"Paris","tags":["a"')
    collected.push(end)
    expect(collected.toolCalls()[0].arguments).toEqual({ q: 'Paris', tags: ['a'] })
  })

  it('answers failures with response.error and images as inline data parts where taken', () => {
    const { parts } = toGeminiFunctionResponses(results)
    expect(parts.map((part) => part.functionResponse.response)).toEqual([
      { output: 'France: capital Paris' },
      { error: 'Permission denied: the user said no' },
      { error: 'Unknown tool "lokup". Did you mean "lookup"?' },
      { output: 'The call is still running and continues in the background as task task_7.' },
      { error: 'Timed out after 1000 ms.' },
      { output: 'screenshot taken\n[1 image (image/tiff) not shown: this provider takes no images in tool results]' },
      { error: 'Cancelled: the batch was cancelled.' },
      { error: RATE_LIMITED },
    ])
    expect(parts[5].functionResponse.parts).toEqual([{ inlineData: { mimeType: 'image/png', data: PNG.data } }])
    expect(parts[0].functionResponse).toEqual({ id: 'c1', name: 'lookup', response: { output: 'France: capital Paris' } })
  })
})
