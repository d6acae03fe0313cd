import type { RevisionRefusal } from '../../core/src/result-params'

/**
 * How the page's components reach Dogu. The standalone page sends HTTP requests; a host
 * with its own channel (Koishi's console) passes another implementation.
 */
export interface Transport {
  /** Calls a console method (`tools.list`, `call`, …) and resolves with its result. */
  send<T = any>(method: string, payload?: unknown): Promise<T>
}

/**
 * An error the console answered with: `code` is a `ConsoleError` code; `refusal`, for a
 * refused edit, why in the structured form the page words in its locale.
 */
export class TransportError extends Error {
  constructor(readonly code: string, message: string, readonly status: number, readonly refusal?: RevisionRefusal) {
    super(message)
  }
}

/** The standalone host's transport: POST `<base>/api/<method>` with the token header. */
export function httpTransport(base: string, token: () => string | undefined): Transport {
  return {
    async send(method, payload = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      const secret = token()
      if (secret) headers['x-dogu-token'] = secret
      const response = await fetch(`${base}/api/${method}`, { method: 'POST', headers, body: JSON.stringify(payload) })
      const body = await response.json().catch(() => null)
      if (!response.ok) throw new TransportError(body?.error?.code ?? 'HTTP', body?.error?.message ?? `HTTP ${response.status}`, response.status, body?.error?.refusal)
      return body
    },
  }
}
