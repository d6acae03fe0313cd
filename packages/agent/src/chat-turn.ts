import type { ModelToolCall } from '@dogu/core'
import { AgentError } from './agent-error'
import type { FetchLike, RetryOptions } from './endpoint'
import { ChatCompletionAccumulator, type ChatCompletionChunk, type ChatUsage, parseChatToolCalls } from './providers/openai-chat'
import { aborted, httpError, messageOf, sendRequest } from './send-request'
import { readSse } from './sse'

export interface ChatTurnOptions {
  fetch: FetchLike
  url: string
  headers: Record<string, string>
  body: Record<string, unknown>
  stream: boolean
  timeout: number
  retry: Required<RetryOptions>
  signal?: AbortSignal
  onText(delta: string): void
  onRetry(info: { attempt: number; delayMs: number; reason: string }): void
}

/** One model turn, whole. */
export interface ChatTurn {
  text: string
  calls: ModelToolCall[]
  finishReason?: string
  usage?: ChatUsage
  /** False when the endpoint answered in one piece (it cannot stream, or was asked not to). */
  streamed: boolean
}

/**
 * Sends one chat completion request and reads its reply, streamed (SSE) or whole. An
 * endpoint that answers a streaming request with plain JSON is read as a whole reply; one
 * that refuses `stream` with a 400/422 naming it is asked again without streaming.
 */
export async function chatTurn(options: ChatTurnOptions): Promise<ChatTurn> {
  const first = await attempt(options, options.stream)
  if (first !== 'no-stream') return first
  const second = await attempt(options, false)
  if (second === 'no-stream') throw new AgentError('BAD_RESPONSE', 'the endpoint refused the request without streaming too')
  return second
}

async function attempt(options: ChatTurnOptions, stream: boolean): Promise<ChatTurn | 'no-stream'> {
  const { signal } = options
  const body = stream ? { ...options.body, stream: true, stream_options: { include_usage: true } } : { ...options.body, stream: false }
  // The body's own timeout: the longest silence between two chunks of the reply.
  const idle = new AbortController()
  const merged = signal ? AbortSignal.any([signal, idle.signal]) : idle.signal
  const response = await sendRequest({
    fetch: options.fetch,
    url: options.url,
    init: {
      method: 'POST',
      headers: { ...options.headers, accept: stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(body),
    },
    timeout: options.timeout,
    retry: options.retry,
    signal: merged,
    onRetry: options.onRetry,
  })
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => idle.abort(new AgentError('TIMEOUT', `the endpoint went silent for ${options.timeout} ms in the middle of its reply`)), options.timeout)
  }
  arm()
  try {
    if (!response.ok) {
      const text = await response.text().catch(() => '')
      if (stream && (response.status === 400 || response.status === 422) && /stream/i.test(text)) return 'no-stream'
      throw httpError(response.status, `the endpoint answered ${response.status}${response.statusText ? ' ' + response.statusText : ''}: ${text.slice(0, 500) || '(no body)'}`)
    }
    const type = response.headers.get('content-type') ?? ''
    if (stream && type.includes('text/event-stream') && response.body) return await readStream(response.body, options, arm)
    const text = await response.text()
    return wholeReply(text, options)
  } catch (error) {
    if (signal?.aborted) throw aborted(signal)
    if (idle.signal.aborted) throw idle.signal.reason
    if (AgentError.is(error)) throw error
    throw new AgentError('NETWORK', `the reply from ${options.url} broke off: ${messageOf(error)}`, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}

async function readStream(body: ReadableStream<Uint8Array>, options: ChatTurnOptions, arm: () => void): Promise<ChatTurn> {
  const collected = new ChatCompletionAccumulator()
  let finished = false
  for await (const data of readSse(body)) {
    arm()
    if (data.trim() === '[DONE]') {
      finished = true
      break
    }
    let chunk: ChatCompletionChunk & { error?: { message?: string } }
    try {
      chunk = JSON.parse(data)
    } catch {
      throw new AgentError('BAD_RESPONSE', `the endpoint streamed an event that is not JSON: ${data.slice(0, 200)}`)
    }
    if (chunk.error) throw new AgentError('BAD_RESPONSE', `the endpoint reported an error mid-stream: ${chunk.error.message ?? JSON.stringify(chunk.error).slice(0, 300)}`)
    const text = collected.push(chunk)
    if (text) options.onText(text)
  }
  if (!finished && !collected.finishReason) throw new AgentError('BAD_RESPONSE', 'the stream ended before the reply finished (no finish_reason, no [DONE])')
  return { text: collected.text, calls: collected.toolCalls(), finishReason: collected.finishReason, usage: collected.usage, streamed: true }
}

function wholeReply(text: string, options: ChatTurnOptions): ChatTurn {
  let reply: { choices?: { message?: Parameters<typeof parseChatToolCalls>[0]; finish_reason?: string }[]; usage?: ChatUsage }
  try {
    reply = JSON.parse(text)
  } catch {
    throw new AgentError('BAD_RESPONSE', `the endpoint's reply is not JSON: ${text.slice(0, 200)}`)
  }
  const choice = reply?.choices?.[0]
  if (!choice?.message) throw new AgentError('BAD_RESPONSE', `the endpoint's reply has no choices[0].message: ${text.slice(0, 200)}`)
  const content = typeof choice.message.content === 'string' ? choice.message.content : ''
  if (content) options.onText(content)
  return { text: content, calls: parseChatToolCalls(choice.message), finishReason: choice.finish_reason, usage: reply.usage ?? undefined, streamed: false }
}
