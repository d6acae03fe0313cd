// Replays of streams recorded from the real APIs by other projects' test suites: the files
// under recorded-streams/ and where each came from are listed in recorded-streams/README.md.
import { describe, expect, it } from 'vitest'
import {
  AnthropicStreamAccumulator,
  type AnthropicStreamEvent,
  ChatCompletionAccumulator,
  type ChatCompletionChunk,
  GeminiStreamAccumulator,
  type GeminiResponse,
  ResponsesStreamAccumulator,
  type ResponsesStreamEvent,
} from '../src'
import { recordedEvents, recordedText } from './fixtures'

describe('OpenAI Chat Completions, recorded (openai-python: two parallel calls)', () => {
  it('keeps the two calls apart, whatever byte boundaries the stream arrives in', async () => {
    for (const chunk of [1, 7, 64, 100_000]) {
      const collected = new ChatCompletionAccumulator()
      for (const event of await recordedEvents<ChatCompletionChunk>('openai-chat/parallel-tool-calls.sse', chunk)) collected.push(event)
      // What openai-python's own stream helper read from this stream (its test's snapshot).
      expect(collected.toolCalls()).toEqual([
        { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' },
        { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
      ])
      expect(collected.finishReason).toBe('tool_calls')
      expect(collected.usage).toMatchObject({ prompt_tokens: 149, completion_tokens: 60, total_tokens: 209 })
      // The history keeps the model's own argument bytes, with content "" beside the calls.
      expect(collected.message()).toEqual({
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_JMW1whyEaYG438VE1OIflxA2', type: 'function', function: { name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' } },
          { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', type: 'function', function: { name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' } },
        ],
      })
    }
  })
})

describe('OpenAI Responses, recorded (AI SDK: gpt-5.1-codex-max, store: false, encrypted reasoning)', () => {
  it('reads the call, and keeps the reasoning item with its encrypted content for the next input', async () => {
    const events = await recordedEvents<ResponsesStreamEvent>('openai-responses/reasoning-function-call.jsonl')
    const collected = new ResponsesStreamAccumulator()
    for (const event of events) collected.push(event)
    expect(collected.toolCalls()).toEqual([{ id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' }])
    const done = events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item)
    const output = collected.output()
    // Byte for byte the items the stream closed: the reasoning item first, then the call.
    expect(output).toEqual(done)
    expect(output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
    expect(output[0].encrypted_content).toMatch(/^gAAAAAB/)
    expect(output[0].summary).toEqual([{ type: 'summary_text', text: expect.stringContaining('**Calculating step-by-step using calculator**') }])
    expect(output[1]).toMatchObject({ call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', arguments: '{"a":12,"b":7,"op":"add"}', status: 'completed' })
    expect(collected.usage).toMatchObject({ input_tokens: 134, output_tokens: 28 })
  })

  it('keeps the item the added event announced when the stream breaks off before it is done', async () => {
    const events = await recordedEvents<ResponsesStreamEvent>('openai-responses/reasoning-function-call.jsonl')
    const collected = new ResponsesStreamAccumulator()
    // Cut after the call's fifth argument delta: the reasoning item is done, the call is not.
    for (const event of events.slice(0, events.findIndex((event) => event.type === 'response.function_call_arguments.delta') + 5)) collected.push(event)
    const [reasoning, call] = collected.output()
    expect(reasoning.encrypted_content).toBe(events.find((event) => event.type === 'response.output_item.done')!.item!.encrypted_content)
    expect(call).toMatchObject({ type: 'function_call', status: 'in_progress', arguments: '{"a":12,"' })
    expect(collected.toolCalls()).toEqual([{ id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"' }])
  })
})

describe('Anthropic Messages, recorded (llm-anthropic: claude-haiku-4-5, thinking then tool use)', () => {
  it('keeps the thinking block and its signature as the real API took them back', async () => {
    const collected = new AnthropicStreamAccumulator()
    for (const event of await recordedEvents<AnthropicStreamEvent>('anthropic/thinking-tool-use.sse')) collected.push(event)
    expect(collected.toolCalls()).toEqual([{ id: 'toolu_01825dXWLSoJwCst1qTsiWdb', name: 'fixed_version', arguments: '{}' }])
    expect(collected.stopReason).toBe('tool_use')
    expect(collected.text).toBe('')
    // The next request of the same recording, which the API answered with 200: its
    // assistant turn is the thinking block unchanged, then the tool_use.
    const next = JSON.parse(recordedText('anthropic/thinking-tool-use.next-request.json')) as { messages: { role: string; content: unknown[] }[] }
    const accepted = next.messages[1]
    const message = collected.message()
    expect(message.role).toBe('assistant')
    expect(message.content).toHaveLength(2)
    expect(message.content[0]).toEqual(accepted.content[0])
    expect(message.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^EoQDCm0I.{100,}/) })
    expect(message.content[1]).toMatchObject(accepted.content[1] as object)
  })

  it('keeps redacted_thinking blocks byte for byte, in order before the text (pydantic-ai: claude-sonnet-4-5)', async () => {
    const events = await recordedEvents<AnthropicStreamEvent>('anthropic/redacted-thinking.sse', 5)
    const collected = new AnthropicStreamAccumulator()
    for (const event of events) collected.push(event)
    const sent = events.filter((event) => event.content_block?.type === 'redacted_thinking').map((event) => event.content_block!.data)
    expect(sent).toHaveLength(2)
    const { content } = collected.message()
    expect(content.map((block) => block.type)).toEqual(['redacted_thinking', 'redacted_thinking', 'text'])
    expect(content.slice(0, 2)).toEqual(sent.map((data) => ({ type: 'redacted_thinking', data })))
    expect(content[2]).toEqual({ type: 'text', text: collected.text })
    expect(collected.text).toMatch(/^I notice that you've sent what appears to be some kind of test string/)
  })
})

describe('Gemini, recorded (AI SDK: Gemini 3 on Vertex AI with streamFunctionCallArguments)', () => {
  async function collect(name: string) {
    const collected = new GeminiStreamAccumulator()
    for (const chunk of await recordedEvents<GeminiResponse>(`gemini/${name}.jsonl`)) collected.push(chunk)
    return collected
  }

  it('assembles each of three streamed calls, beside a no-argument call (read_screen A, B, C, not {} three times)', async () => {
    const collected = await collect('google-stream-no-args-tool-call')
    expect(collected.toolCalls()).toEqual([
      { id: 'dogu-gemini-0', name: 'read_theme', arguments: {} },
      { id: 'dogu-gemini-1', name: 'read_screen', arguments: { id: 'A' } },
      { id: 'dogu-gemini-2', name: 'read_screen', arguments: { id: 'B' } },
      { id: 'dogu-gemini-3', name: 'read_screen', arguments: { id: 'C' } },
    ])
    expect(collected.finishReason).toBe('STOP')
    expect(collected.text).toBe('')
    // The turn to send back: the thought, each call once and whole, the signature where it came.
    const calls = collected.parts.filter((part) => part.functionCall)
    expect(calls.map((part) => part.functionCall)).toEqual([
      { name: 'read_theme' },
      { name: 'read_screen', args: { id: 'A' } },
      { name: 'read_screen', args: { id: 'B' } },
      { name: 'read_screen', args: { id: 'C' } },
    ])
    expect(calls[0].thoughtSignature).toMatch(/^AY89a18a/)
    expect(collected.parts[0]).toMatchObject({ thought: true })
  })

  it('assembles parallel streamed calls and keeps the first call\'s thought signature on its assembled part', async () => {
    const collected = await collect('google-stream-tool-call-arguments')
    expect(collected.toolCalls().map(({ name, arguments: args }) => ({ name, args }))).toEqual([
      { name: 'getWeather', args: { location: 'Boston' } },
      { name: 'getWeather', args: { location: 'San Francisco' } },
    ])
    expect(collected.parts).toHaveLength(2)
    expect(collected.parts[0]).toEqual({ functionCall: { name: 'getWeather', args: { location: 'Boston' } }, thoughtSignature: expect.stringMatching(/^CiMBjz1r/) })
    expect(collected.parts[1]).toEqual({ functionCall: { name: 'getWeather', args: { location: 'San Francisco' } } })
  })

  it('ends a call at a last piece without willContinue, numbers kept as numbers', async () => {
    const collected = await collect('google-stream-tool-call-array-arguments-missing-terminal-function-call')
    expect(collected.toolCalls()).toEqual([{
      id: 'dogu-gemini-0',
      name: 'writeItems',
      arguments: {
        operations: [
          { action: 'add', description: 'Fresh red apple', itemid: 'apple_001', price: 0.5 },
          { action: 'add', description: 'Ripe yellow banana', itemid: 'banana_001', price: 0.3 },
        ],
      },
    }])
  })

  it('builds nested objects and lists, joining a string that came in several pieces', async () => {
    const collected = await collect('google-vertex-stream-tool-call-arguments-nested.1')
    const [first] = await recordedEvents<GeminiResponse>('gemini/google-vertex-stream-tool-call-arguments-nested.1.jsonl')
    expect(collected.parts).toHaveLength(1)
    expect(collected.parts[0].thoughtSignature).toBe(first.candidates![0].content!.parts![0].thoughtSignature)
    expect(collected.parts[0].thoughtSignature!.length).toBeGreaterThan(5000)
    const [call] = collected.toolCalls()
    expect(call.name).toBe('cookRecipe')
    const { recipe } = call.arguments as { recipe: { name: string; ingredients: { amount: string; name: string }[]; steps: string[] } }
    expect(recipe.name).toBe('Lasagna')
    expect(recipe.ingredients).toHaveLength(10)
    expect(recipe.ingredients[0]).toEqual({ amount: '16 oz', name: 'Lasagna noodles' })
    expect(recipe.ingredients[9]).toEqual({ amount: '1/2 tsp', name: 'Pepper' })
    expect(recipe.steps).toHaveLength(10)
    expect(recipe.steps[0]).toBe('Preheat oven to 375°F (190°C).')
    expect(recipe.steps[1]).toBe('Cook lasagna noodles according to package directions, drain and set aside.')
    expect(recipe.steps[4]).toBe('In a 9x13 baking dish, spread a thin layer of meat sauce.')
    expect(Object.keys(recipe)).toEqual(['ingredients', 'name', 'steps'])
  })

  it('gives a call the stream broke off inside as its open JSON text, never as a whole call', async () => {
    const chunks = await recordedEvents<GeminiResponse>('gemini/google-stream-tool-call-array-arguments-missing-terminal-function-call.jsonl')
    const collected = new GeminiStreamAccumulator()
    // Up to "Ripe yellow banana", whose string piece announced more.
    for (const chunk of chunks.slice(0, 11)) collected.push(chunk)
    expect(collected.toolCalls()[0].arguments).toBe('{"operations":[{"action":"add","description":"Fresh red apple","itemid":"apple_001","price":0.5},{"action":"add","description":"Ripe yellow banana')
  })
})
