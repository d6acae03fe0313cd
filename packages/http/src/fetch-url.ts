import type { Allowlist } from './allowlist'
import { canonicalUrl } from './canonical-url'
import type { HttpClient } from './http-client'
import { HttpFetchError } from './http-fetch-error'
import { resolveTarget, type HostResolver } from './resolve-target'

export interface FetchRequest {
  url: string
  method: string
  headers: Record<string, string>
  body?: string
}

export interface FetchContext {
  client: HttpClient
  resolver: HostResolver
  allowlist: Allowlist
  maxRedirects: number
  signal: AbortSignal
  /**
   * Authorizes a redirect hop as its own request, before it is resolved or connected to;
   * throws to refuse it. `url` is canonical (`canonicalUrl`), `method` the one it is sent with.
   */
  authorizeHop: (hop: RedirectHop) => Promise<void>
}

/** A redirect about to be followed. */
export interface RedirectHop {
  method: string
  url: URL
  /** The URL that answered with the redirect, and its status. */
  from: URL
  status: number
}

export interface FetchedResponse {
  response: Response
  /** The URL that answered, after redirects. */
  url: URL
  /** Every URL redirected to, in order. */
  redirects: string[]
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
// Credentials meant for one origin are not forwarded to another.
const ORIGIN_BOUND = ['authorization', 'cookie', 'proxy-authorization']

/**
 * Fetches a URL following redirects by hand, so every hop is in canonical form, authorized
 * (the first by the pipeline, the others by `authorizeHop`), resolved, checked against the
 * SSRF guard and connected to the address that was checked.
 */
export async function fetchUrl(request: FetchRequest, context: FetchContext): Promise<FetchedResponse> {
  let url = canonicalUrl(request.url)
  let { method, body } = request
  const headers = { ...request.headers }
  const redirects: string[] = []
  while (true) {
    const address = await resolveTarget(url, context.resolver, context.allowlist, context.signal)
    let response: Response
    try {
      response = await context.client({ url, method, headers, body, signal: context.signal, address })
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason
      const cause = (error as Error)?.cause ?? error
      throw new HttpFetchError('FETCH_FAILED', `${method} ${url.href} failed: ${(cause as Error)?.message ?? cause}`, { cause: error })
    }
    const location = response.headers.get('location')
    if (!REDIRECTS.has(response.status) || location === null) return { response, url, redirects }
    await response.body?.cancel().catch(() => {})
    if (redirects.length >= context.maxRedirects) {
      throw new HttpFetchError('TOO_MANY_REDIRECTS', `stopped after ${context.maxRedirects} redirects (last: ${url.href} → ${location})`)
    }
    const next = canonicalUrl(location, url)
    if ((response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      // As browsers do: the redirect is fetched with GET and without the body.
      method = 'GET'
      body = undefined
      for (const name of Object.keys(headers)) if (/^content-/i.test(name)) delete headers[name]
    } else if (body !== undefined && next.origin !== url.origin) {
      throw new HttpFetchError('REDIRECT_REFUSED', `${url.href} redirects (${response.status}) to ${next.href}, which would receive the ${method} body; the approval was for the first origin, so fetch the new URL directly if that is intended`)
    }
    if (next.origin !== url.origin) {
      for (const name of Object.keys(headers)) if (ORIGIN_BOUND.includes(name.toLowerCase())) delete headers[name]
    }
    await context.authorizeHop({ method, url: next, from: url, status: response.status })
    redirects.push(next.href)
    url = next
  }
}
