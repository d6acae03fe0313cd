import type { BackgroundTask, ModelToolCall, ToolResult, Toolset, ToolSearchData } from '@dogu/core'
import { AgentError } from './agent-error'
import type { AgentEvent } from './agent-event'
import { chatTurn } from './chat-turn'
import type { Endpoint, FetchLike, RetryOptions } from './endpoint'
import { HeldText } from './held-text'
import { type ChatMessage, chatAssistantMessage, type ChatUsage, toChatToolMessages } from './providers/openai-chat'
import { aborted, messageOf } from './send-request'
import { noticeText } from './task-notices'
import { extractTextToolCalls, readsBareJson, TEXT_TOOL_MARKERS, TEXT_TOOL_CALL_FORMATS } from './text-tool-calls'

const TOOL_SEARCH = 'tool_search'

export interface RunAgentOptions {
  endpoint: Endpoint
  /** The tools the model may call; its calls go through `toolset.execute`, one batch per turn. */
  toolset: Toolset
  /** The conversation so far (system, user, earlier turns), in Chat Completions form. Not changed. */
  messages: readonly ChatMessage[]
  /** Model turns at most. A run that reaches it with calls pending runs them, then stops. @default 10 */
  maxSteps?: number
  /** Stops the stream and this turn's calls; the run rejects with `AgentError` `ABORTED`. */
  signal?: AbortSignal
  /** Text deltas, calls, results, notices, usage and the end, as they happen. */
  onEvent?: (event: AgentEvent) => void
  /** @default globalThis.fetch */
  fetch?: FetchLike
  /** Stream replies (SSE); the loop falls back on its own when the endpoint cannot. @default true */
  stream?: boolean
  /** Milliseconds to wait for an answer's headers, and between two chunks of a stream. @default 120_000 */
  timeout?: number
  retry?: RetryOptions
  /** Settled background tasks to tell the model before each turn (see `TaskNotices`). */
  notices?: { take(): readonly BackgroundTask[] }
  /** Extra request fields (`temperature`, `max_tokens`, `tool_choice`, …), sent as they are. */
  body?: Record<string, unknown>
}

/** Tokens used, summed over the run's turns. */
export interface AgentUsage {
  promptTokens: number
  completionTokens: number
  totalTokens: number
}

export interface AgentResult {
  /** The model's text in its last turn. */
  text: string
  /** The whole conversation: the input, then every turn, its tool calls and their results. */
  messages: ChatMessage[]
  /** Model turns taken. */
  steps: number
  usage: AgentUsage
  /** `stop`: the model answered without calls; `max_steps`: the run hit `maxSteps`; otherwise the endpoint's finish reason (`length`, …). */
  finishReason: string
}

/**
 * Runs a conversation with an OpenAI-compatible chat completions endpoint: each turn sends
 * the conversation and the toolset's definitions, runs the model's calls as one batch
 * through `toolset.execute` (so traits scheduling and permissions apply), adds the results,
 * and asks again, until the model answers without calls or `maxSteps` is reached.
 *
 * Definitions are the same bytes every turn while nothing changes, so prompt caching works;
 * tools that `tool_search` returned are added after them from the next turn on.
 *
 * @example
 * const { text, messages } = await runAgent({
 *   endpoint: { baseURL: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' },
 *   toolset: ctx.tools.toolset({ session }),
 *   messages: [{ role: 'user', content: 'What is the capital of France?' }],
 * })
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const { endpoint, toolset, signal } = options
  checkOptions(options)
  const maxSteps = options.maxSteps ?? 10
  const emit = options.onEvent ?? (() => {})
  const fetch = options.fetch ?? globalThis.fetch
  const retry = { retries: 2, baseDelay: 500, maxDelay: 20_000, ...definedOnly(options.retry) }
  const url = `${endpoint.baseURL.replace(/\/+$/, '')}/chat/completions`
  const textCalls = endpoint.textToolCalls === 'off' ? undefined : endpoint.textToolCalls ?? 'auto'
  const headers: Record<string, string> = { 'content-type': 'application/json', ...endpoint.headers }
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`
  let stream = options.stream ?? true
  const messages: ChatMessage[] = [...options.messages]
  const usage: AgentUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 }
  // Tools `tool_search` returned, in the order first loaded: appended, so earlier bytes stay.
  const loaded: string[] = []
  let steps = 0

  const fail = (error: unknown): never => {
    const failure = AgentError.is(error) ? error : signal?.aborted ? aborted(signal) : new AgentError('BAD_RESPONSE', messageOf(error), { cause: error })
    failure.messages = [...messages]
    throw failure
  }

  while (true) {
    if (signal?.aborted) fail(aborted(signal))
    const settled = options.notices?.take() ?? []
    if (settled.length) {
      const text = noticeText(settled)
      messages.push({ role: 'user', content: text })
      emit({ type: 'notice', tasks: [...settled], text })
    }
    steps++
    emit({ type: 'step', step: steps })
    const definitions = toolset.definitions('openai')
    const tools = loaded.length ? [...definitions, ...toolset.definitionsOf(loaded, 'openai')] : definitions
    // An empty `tools` array is refused by OpenAI: no tools, no field.
    const body = { ...options.body, model: endpoint.model, messages, ...(tools.length ? { tools } : {}) }
    const onText = (delta: string) => emit({ type: 'text', delta })
    // Text that may turn out to be a call is held back until the turn ends.
    const held = textCalls && new HeldText(TEXT_TOOL_MARKERS[textCalls], onText, tools.length && readsBareJson(textCalls) ? ['{'] : [])
    const turn = await chatTurn({
      fetch, url, headers, body, stream, timeout: options.timeout ?? 120_000, retry, signal,
      onText: held ? (delta) => held.push(delta) : onText,
      onRetry: (info) => emit({ type: 'retry', ...info }),
    }).catch(fail)
    if (!turn.streamed) stream = false
    const turnUsage = usageOf(turn.usage)
    usage.promptTokens += turnUsage.promptTokens
    usage.completionTokens += turnUsage.completionTokens
    usage.totalTokens += turnUsage.totalTokens
    if (turn.usage) emit({ type: 'usage', step: steps, usage: turnUsage })
    let { calls, text } = turn
    if (!calls.length && textCalls) {
      // The tools as this turn sent them: a bare JSON call must name one, and XML values take their types.
      const extracted = extractTextToolCalls(text, textCalls, { tools: tools.map((definition) => definition.function) })
      ;({ calls, text } = extracted)
      if (extracted.cutOff) emit({ type: 'text-call-cut-off', step: steps, cutOff: extracted.cutOff })
    }
    held?.finish(text)
    // Calls read from the text go back as structured calls: the conversation stays one the endpoint accepts.
    messages.push(chatAssistantMessage(text, calls))
    if (!calls.length) return end({ text, messages, steps, usage, finishReason: turn.finishReason && turn.finishReason !== 'tool_calls' ? turn.finishReason : 'stop' })

    for (const call of calls) emit({ type: 'tool-call', call })
    let results: ToolResult[]
    try {
      results = await toolset.execute(calls, { signal })
    } catch (error) {
      // execute never throws for a bad call; this is a broken toolset. Keep the history valid.
      results = calls.map((call) => failedResult(call, messageOf(error)))
    }
    messages.push(...toChatToolMessages(results))
    const names: string[] = []
    for (const result of results) {
      emit({ type: 'tool-result', result })
      for (const name of searchedNames(result, toolset)) {
        if (!loaded.includes(name) && !names.includes(name)) names.push(name)
      }
    }
    if (names.length) {
      loaded.push(...names)
      emit({ type: 'tools-loaded', names })
    }
    if (signal?.aborted) fail(aborted(signal))
    if (steps >= maxSteps) return end({ text, messages, steps, usage, finishReason: 'max_steps' })
  }

  function end(result: AgentResult): AgentResult {
    emit({ type: 'end', result })
    return result
  }
}

/** Deferred tools a `tool_search` result returned: the ones not already advertised. */
function searchedNames(result: ToolResult, toolset: Toolset): string[] {
  if (result.name !== TOOL_SEARCH || result.status !== 'ok') return []
  const deferred = toolset.deferred
  if (!deferred.length) return []
  const matches = (result.data as ToolSearchData | undefined)?.matches
  if (!Array.isArray(matches)) return []
  return matches.map((match) => match.name).filter((name) => deferred.includes(name))
}

function failedResult(call: ModelToolCall, message: string): ToolResult {
  return { id: call.id, name: call.name, status: 'error', code: 'tool_error', content: `The tool runtime failed: ${message}`, durationMs: 0 }
}

function usageOf(usage: ChatUsage | undefined): AgentUsage {
  const promptTokens = usage?.prompt_tokens ?? 0
  const completionTokens = usage?.completion_tokens ?? 0
  return { promptTokens, completionTokens, totalTokens: usage?.total_tokens ?? promptTokens + completionTokens }
}

function checkOptions(options: RunAgentOptions) {
  const problem = (text: string) => new AgentError('INVALID_OPTIONS', `runAgent: ${text}`)
  if (!options || typeof options !== 'object') throw problem('expects an options object')
  const { endpoint, toolset, messages, maxSteps, timeout } = options
  if (!endpoint || typeof endpoint.baseURL !== 'string' || !/^https?:\/\//i.test(endpoint.baseURL)) {
    throw problem(`endpoint.baseURL must be an http(s) URL, got ${JSON.stringify(endpoint?.baseURL)}`)
  }
  if (typeof endpoint.model !== 'string' || !endpoint.model) throw problem('endpoint.model must name a model')
  if (!toolset || typeof toolset.execute !== 'function' || typeof toolset.definitions !== 'function') throw problem('toolset must be a Dogu toolset (registry.toolset() or ctx.tools.toolset())')
  if (!Array.isArray(messages)) throw problem('messages must be an array of chat messages')
  if (maxSteps !== undefined && !(Number.isInteger(maxSteps) && maxSteps >= 1)) throw problem(`maxSteps must be a whole number of at least 1, got ${maxSteps}`)
  const textCalls = endpoint.textToolCalls
  if (textCalls !== undefined && textCalls !== 'off' && !TEXT_TOOL_CALL_FORMATS.includes(textCalls)) {
    throw problem(`endpoint.textToolCalls must be one of ${[...TEXT_TOOL_CALL_FORMATS, 'off'].map((name) => `'${name}'`).join(', ')}, got ${JSON.stringify(textCalls)}`)
  }
  if (timeout !== undefined && !(timeout > 0 && Number.isFinite(timeout))) throw problem(`timeout must be a positive number of milliseconds, got ${timeout}`)
  if (options.fetch === undefined && typeof globalThis.fetch !== 'function') throw problem('no fetch: pass options.fetch')
}

function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>
}
