import { AgentError } from './agent-error'
import type { FetchLike, RetryOptions } from './endpoint'

export interface SendOptions {
  fetch: FetchLike
  url: string
  init: RequestInit
  /** Milliseconds to wait for the response headers. */
  timeout: number
  retry: Required<RetryOptions>
  signal?: AbortSignal
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void
}

const RETRY_STATUSES = new Set([408, 409, 425, 429, 500, 502, 503, 504])

/**
 * Sends one request: each attempt has its own timeout (for the headers; the body is the
 * caller's to time), and 408/409/425/429/5xx answers and network errors are retried with
 * exponential backoff, within `retry.retries`, honouring `Retry-After` up to `retry.maxDelay`.
 * Resolves with the first answer that is not retried, ok or not.
 */
export async function sendRequest(options: SendOptions): Promise<Response> {
  const { retry, signal } = options
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined
    let failure: AgentError | undefined
    const timer = new AbortController()
    const timeout = setTimeout(() => timer.abort(new AgentError('TIMEOUT', `the endpoint sent no answer within ${options.timeout} ms (${options.url})`)), options.timeout)
    try {
      response = await options.fetch(options.url, { ...options.init, signal: signal ? AbortSignal.any([signal, timer.signal]) : timer.signal })
    } catch (error) {
      if (signal?.aborted) throw aborted(signal)
      failure = timer.signal.aborted
        ? timer.signal.reason as AgentError
        : new AgentError('NETWORK', `could not reach ${options.url}: ${messageOf(error)}`, { cause: error })
    } finally {
      clearTimeout(timeout)
    }
    if (response && !RETRY_STATUSES.has(response.status)) return response
    const reason = response ? `HTTP ${response.status}` : failure!.message
    let delay = retry.baseDelay * 2 ** attempt
    if (response) {
      const asked = retryAfter(response.headers.get('retry-after'))
      if (asked !== undefined && asked > retry.maxDelay) {
        await response.body?.cancel().catch(() => {})
        throw httpError(response.status, `the endpoint answered ${response.status} and asked to retry after ${Math.ceil(asked / 1000)} s, longer than the ${retry.maxDelay} ms this run waits`)
      }
      if (asked !== undefined) delay = asked
    }
    delay = Math.min(delay, retry.maxDelay)
    if (attempt >= retry.retries) {
      if (!response) throw failure!
      return response
    }
    await response?.body?.cancel().catch(() => {})
    options.onRetry?.({ attempt: attempt + 1, delayMs: delay, reason })
    await sleep(delay, signal)
  }
}

/** Milliseconds a `Retry-After` header asks for: delta-seconds or an HTTP date. */
export function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

export function httpError(status: number, message: string): AgentError {
  const error = new AgentError('HTTP', message)
  error.status = status
  return error
}

export function aborted(signal: AbortSignal): AgentError {
  return new AgentError('ABORTED', `the run was aborted: ${messageOf(signal.reason)}`, { cause: signal.reason })
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(signal))
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(aborted(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
