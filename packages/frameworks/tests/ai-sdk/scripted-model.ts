import { simulateReadableStream } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'

// The provider spec's types, as the mock model has them (`@ai-sdk/provider` is ai's own dependency).
type LanguageModelV3CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0]
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>
type LanguageModelV3Content = LanguageModelV3GenerateResult['content'][number]
type LanguageModelV3StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never

const USAGE = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }

/** One turn of the scripted model: text, or tool calls with their arguments as the model's JSON text. */
export type Turn = string | { calls: { id: string; name: string; input: string }[] }

/** A tool call the model makes; an object input is sent as its JSON text. */
export function call(id: string, name: string, input: string | object = {}) {
  return { id, name, input: typeof input === 'string' ? input : JSON.stringify(input) }
}

function contentOf(turn: Turn): LanguageModelV3Content[] {
  if (typeof turn === 'string') return [{ type: 'text', text: turn }]
  return turn.calls.map(({ id, name, input }) => ({ type: 'tool-call', toolCallId: id, toolName: name, input }))
}

function resultOf(turn: Turn): LanguageModelV3GenerateResult {
  return { content: contentOf(turn), finishReason: { unified: typeof turn === 'string' ? 'stop' : 'tool-calls', raw: undefined }, usage: USAGE, warnings: [] }
}

function partsOf(turn: Turn): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
  if (typeof turn === 'string') parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: turn }, { type: 'text-end', id: 't' })
  else for (const { id, name, input } of turn.calls) parts.push({ type: 'tool-call', toolCallId: id, toolName: name, input })
  parts.push({ type: 'finish', finishReason: resultOf(turn).finishReason, usage: USAGE })
  return parts
}

/**
 * `ai/test`'s MockLanguageModelV3 answering each request with the next turn, for
 * `generateText` and `streamText` alike; `prompts` are the requests it received, as a
 * provider would (what the model reads).
 */
export function scriptedModel(...turns: Turn[]) {
  let next = 0
  const take = (options: LanguageModelV3CallOptions) => {
    prompts.push(options)
    const turn = turns[next++]
    if (turn === undefined) throw new Error(`the scripted model has ${turns.length} turns; request ${next} is one too many`)
    return turn
  }
  const prompts: LanguageModelV3CallOptions[] = []
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => resultOf(take(options)),
    doStream: async (options) => ({ stream: simulateReadableStream({ chunks: partsOf(take(options)), initialDelayInMs: null, chunkDelayInMs: null }) }),
  })
  return { model, prompts }
}

/** The tool results of a request's prompt (its tool messages), by call id: what the model reads of each call. */
export function toolResultsIn(request: LanguageModelV3CallOptions | undefined): Record<string, unknown> {
  const results: Record<string, unknown> = {}
  for (const message of request?.prompt ?? []) {
    if (message.role !== 'tool') continue
    for (const part of message.content) if (part.type === 'tool-result') results[part.toolCallId] = part.output
  }
  return results
}
