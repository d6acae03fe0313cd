import type { ResolvedAddress } from './resolve-target'

/** One hop of a fetch, with the address its connection must use. */
export interface PinnedRequest {
  url: URL
  method: string
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
  /** The checked address: connect here, never to a fresh DNS answer for `url`'s host. */
  address: ResolvedAddress
}

/**
 * Sends one request and returns the response without following redirects. The built-in
 * implementation goes through Cordis' `ctx.http`; tests inject a stub.
 */
export type HttpClient = (request: PinnedRequest) => Promise<Response>
