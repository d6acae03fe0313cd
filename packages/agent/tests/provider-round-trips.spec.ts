// Host loops over the providers' own SDKs and the scripted server, which refuses (as the real
// APIs do) a turn whose thinking or reasoning came back changed or left out.
import Anthropic from '@anthropic-ai/sdk'
import { defineTool, ToolRegistry } from '@dogu/core'
import OpenAI from 'openai'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import {
  AnthropicStreamAccumulator,
  parseAnthropicToolCalls,
  type ResponsesOutputItem,
  ResponsesStreamAccumulator,
  type Script,
  type ScriptedServer,
  startScriptedServer,
  toAnthropicToolResults,
  toResponsesToolOutputs,
} from '../src'

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

function lookupToolset() {
  const registry = new ToolRegistry()
  const asked: string[] = []
  registry.define(defineTool({
    name: 'lookup',
    description: 'Capital of a country',
    args: Schema.object({ q: Schema.string().required() }),
    traits: { effect: 'read' },
    run: ({ q }) => {
      asked.push(q)
      return q === '法国' ? '巴黎 (Paris)' : 'unknown'
    },
  }))
  return { toolset: registry.toolset({ session: { id: 'round-trip' } }), asked }
}

async function serve(script: Script) {
  server = await startScriptedServer({ script, model: 'scripted' })
  return server
}

const THINKING = 'The user asks for the capital of 法国. I should call lookup with q = "法国".'

describe('Anthropic Messages with extended thinking, through @anthropic-ai/sdk', () => {
  const thinkingTurn = { thinking: THINKING, redactedThinking: true, text: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"法国"}' }], pieceSize: 3 }
  const request = { model: 'scripted', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } } as const

  async function firstTurn() {
    const endpoint = await serve([thinkingTurn, { text: 'The capital of 法国 is 巴黎.' }])
    const { toolset, asked } = lookupToolset()
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: endpoint.origin, maxRetries: 0 })
    const tools = [...toolset.definitions('anthropic')]
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Capital of 法国?' }]
    const collected = new AnthropicStreamAccumulator()
    for await (const event of await client.messages.create({ ...request, tools, messages, stream: true })) collected.push(event)
    const results = toAnthropicToolResults(await toolset.execute(collected.toolCalls()))
    return { endpoint, client, tools, messages, collected, results, asked }
  }

  it('round-trips a turn of thinking and tool use: the signed blocks go back unchanged, and the run ends', async () => {
    const { endpoint, client, tools, messages, collected, results, asked } = await firstTurn()
    const turn = collected.message()
    expect(turn.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'text', 'tool_use'])
    expect(turn.content[0]).toMatchObject({ thinking: THINKING, signature: expect.any(String) })
    messages.push(turn as Anthropic.MessageParam, results)
    const answer = new AnthropicStreamAccumulator()
    for await (const event of await client.messages.create({ ...request, tools, messages, stream: true })) answer.push(event)
    expect(answer.text).toBe('The capital of 法国 is 巴黎.')
    expect(answer.toolCalls()).toEqual([])
    expect(asked).toEqual(['法国'])
    expect(endpoint.requests.map((sent) => sent.problems)).toEqual([[], []])
    // What went back: the first turn's blocks as they were streamed, then the result.
    const sent = JSON.parse(endpoint.requests[1].raw) as { messages: { content: unknown[] }[] }
    expect(sent.messages[1].content).toEqual(turn.content)
    expect(sent.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '巴黎 (Paris)' }] }])
  })

  it('is refused with a 400, as by the real API, when the thinking was dropped or changed', async () => {
    const { client, tools, messages, collected, results } = await firstTurn()
    const turn = collected.message()
    const continueWith = (content: unknown[]) => client.messages.create({ ...request, tools, messages: [...messages, { role: 'assistant', content } as Anthropic.MessageParam, results] })
    // The turn as the accumulator built it before: the text and the call, no thinking.
    const dropped = turn.content.filter((block) => block.type === 'text' || block.type === 'tool_use')
    await expect(continueWith(dropped)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block') })
    const edited = turn.content.map((block) => (block.type === 'thinking' ? { ...block, thinking: `${block.thinking} ` } : block))
    await expect(continueWith(edited)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('messages.1.content.0: Invalid `signature` in `thinking` block') })
    const unsigned = turn.content.map((block) => (block.type === 'thinking' ? { type: 'thinking', thinking: block.thinking } : block))
    await expect(continueWith(unsigned)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('messages.1.content.0.thinking.signature: Field required') })
    const redacted = turn.content.map((block) => (block.type === 'redacted_thinking' ? { ...block, data: `${block.data}AA` } : block))
    await expect(continueWith(redacted)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('messages.1.content.1: Invalid `data` in `redacted_thinking` block') })
  })

  it('takes a whole (unstreamed) reply\'s content back as it came', async () => {
    const endpoint = await serve([{ ...thinkingTurn, pieceSize: undefined }, { text: 'Paris.' }])
    const { toolset } = lookupToolset()
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: endpoint.origin, maxRetries: 0 })
    const tools = [...toolset.definitions('anthropic')]
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Capital of 法国?' }]
    const reply = await client.messages.create({ ...request, tools, messages })
    expect(reply.content[0]).toMatchObject({ type: 'thinking', thinking: THINKING })
    messages.push({ role: 'assistant', content: reply.content }, toAnthropicToolResults(await toolset.execute(parseAnthropicToolCalls(reply.content))))
    const answer = await client.messages.create({ ...request, tools, messages })
    expect(answer.content).toEqual([{ type: 'text', text: 'Paris.' }])
    expect(endpoint.requests.map((sent) => sent.problems)).toEqual([[], []])
  })
})

describe('OpenAI Responses with store: false and encrypted reasoning, through openai', () => {
  const reasoningTurn = { thinking: 'Look up 法国.', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"法国"}' }], pieceSize: 4 }

  async function firstTurn(include: boolean) {
    const endpoint = await serve([reasoningTurn, { text: '巴黎.' }])
    const { toolset, asked } = lookupToolset()
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: endpoint.baseURL, maxRetries: 0 })
    // Responses takes function tools flat: the Chat Completions definition without its wrapper.
    const tools = toolset.definitions('openai').map(({ function: tool }) => ({ type: 'function' as const, ...tool }))
    const request = { model: 'scripted', tools, store: false, ...(include ? { include: ['reasoning.encrypted_content' as const] } : {}) }
    const input: ResponseInputItem[] = [{ role: 'user', content: 'Capital of 法国?' }]
    const collected = new ResponsesStreamAccumulator()
    for await (const event of await client.responses.create({ ...request, input, stream: true })) collected.push(event)
    const outputs = toResponsesToolOutputs(await toolset.execute(collected.toolCalls()))
    return { endpoint, client, request, input, collected, outputs, asked }
  }

  it('round-trips a turn of reasoning and a call: the reasoning item goes back with its encrypted content', async () => {
    const { endpoint, client, request, input, collected, outputs, asked } = await firstTurn(true)
    const output = collected.output()
    expect(output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
    expect(output[0].encrypted_content).toEqual(expect.any(String))
    input.push(...output as ResponseInputItem[], ...outputs)
    const answer = new ResponsesStreamAccumulator()
    for await (const event of await client.responses.create({ ...request, input, stream: true })) answer.push(event)
    expect(answer.text).toBe('巴黎.')
    expect(asked).toEqual(['法国'])
    expect(endpoint.requests.map((sent) => sent.problems)).toEqual([[], []])
    const sent = JSON.parse(endpoint.requests[1].raw) as { input: unknown[] }
    expect(sent.input.slice(1)).toEqual([...output, { type: 'function_call_output', call_id: 'call_1', output: '巴黎 (Paris)' }])
  })

  it('is refused, as by the real API, when the reasoning item was dropped, changed or sent without its content', async () => {
    const { client, request, input, collected, outputs } = await firstTurn(true)
    const [reasoning, call] = collected.output()
    const continueWith = (items: ResponsesOutputItem[]) => client.responses.create({ ...request, input: [...input, ...items as ResponseInputItem[], ...outputs] })
    await expect(continueWith([call])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Item \'fc_scripted_0_0\' of type \'function_call\' was provided without its required \'reasoning\' item: \'rs_scripted_0\'.') })
    await expect(continueWith([{ ...reasoning, encrypted_content: 'gAAAAABforged==' }, call])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('The encrypted content gAAA...ed== could not be verified.') })
    const { encrypted_content: _, ...bare } = reasoning
    await expect(continueWith([bare, call])).rejects.toMatchObject({ status: 404, message: expect.stringContaining('Item with id \'rs_scripted_0\' not found. Items are not persisted when `store` is set to false.') })
  })

  it('cannot continue when the first request did not ask for the encrypted content', async () => {
    const { client, request, input, collected, outputs } = await firstTurn(false)
    expect(collected.output()[0]).not.toHaveProperty('encrypted_content')
    await expect(client.responses.create({ ...request, input: [...input, ...collected.output() as ResponseInputItem[], ...outputs] })).rejects.toMatchObject({ status: 404 })
  })
})

describe('the scripted server refuses what the real APIs refuse', () => {
  const post = async (url: string, body: unknown) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: response.status, body: await response.json() as { error: { message: string; type: string } } }
  }

  it('Messages: tool uses without results, results without uses, empty text, and the error shape', async () => {
    const endpoint = await serve([])
    const url = `${endpoint.origin}/v1/messages`
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] }
    const unanswered = await post(url, { model: 'scripted', max_tokens: 10, messages: [{ role: 'user', content: 'x' }, use, { role: 'user', content: 'go on' }] })
    expect(unanswered).toEqual({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.' } } })
    const stray = await post(url, { model: 'scripted', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }] })
    expect(stray.body.error.message).toBe('messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.')
    const empty = await post(url, { model: 'scripted', messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })
    expect(empty.body.error.message).toBe('max_tokens: Field required; messages: text content blocks must be non-empty')
    expect(endpoint.requests.map((request) => request.api)).toEqual(['anthropic', 'anthropic', 'anthropic'])
  })

  it('Responses: outputs without calls and calls without outputs; a whole reply carries the reasoning item', async () => {
    const endpoint = await serve([{ thinking: 'Think.', text: 'Hi.' }])
    const url = `${endpoint.baseURL}/responses`
    const call = { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' }
    expect((await post(url, { model: 'scripted', input: [call] })).body.error.message).toBe('No tool output found for function call call_1.')
    expect((await post(url, { model: 'scripted', input: [{ type: 'function_call_output', call_id: 'call_2', output: 'x' }] })).body.error.message).toBe('No tool call found for function call output with call_id call_2.')
    const whole = await post(url, { model: 'scripted', input: 'Hello', store: false, include: ['reasoning.encrypted_content'] })
    expect(whole.status).toBe(200)
    expect(whole.body).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'reasoning', id: 'rs_scripted_0', encrypted_content: expect.any(String) }, { type: 'message', content: [{ type: 'output_text', text: 'Hi.' }] }] })
  })
})
