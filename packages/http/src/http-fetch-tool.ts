import { defineTool, type PermissionSpec, type Tool } from '@dogu/core'
import Schema from 'schemastery'
import { Allowlist } from './allowlist'
import { decodeText, HTML_TYPES, matchesContentType, parseContentType } from './content-type'
import { fetchUrl } from './fetch-url'
import type { HttpClient } from './http-client'
import { HttpFetchError } from './http-fetch-error'
import { readableText } from './readable-text'
import { readBody } from './read-body'
import { systemResolver, type HostResolver } from './resolve-target'

/** Text-like types a model can read. */
export const DEFAULT_CONTENT_TYPES = [
  'text/*', 'application/json', 'application/*+json', 'application/xml', 'application/*+xml',
  'application/javascript', 'application/x-javascript', 'application/ecmascript', 'application/x-ndjson',
  'application/yaml', 'application/x-yaml', 'application/toml', 'application/x-www-form-urlencoded',
]

export interface HttpFetchToolOptions {
  /** Sends each hop to the checked address; `createCordisHttpClient(ctx.http)` in a Cordis app. */
  client: HttpClient
  /** Resolves host names. @default the system resolver (`dns.lookup`) */
  resolver?: HostResolver
  /** Hosts (`intranet.example`, `*.corp.example`), addresses and CIDR ranges the SSRF guard lets through. @default [] */
  allow?: readonly string[]
  /** Largest body read; longer bodies are cut and the download stopped. @default 1_048_576 */
  maxBytes?: number
  /** Milliseconds for the whole fetch, redirects and body included. @default 30_000 */
  timeout?: number
  /** @default 5 */
  maxRedirects?: number
  /** MIME patterns accepted (`text/*`, `application/*+json`). @default DEFAULT_CONTENT_TYPES */
  contentTypes?: readonly string[]
  /** @default 'Dogu http_fetch' */
  userAgent?: string
  /** @default 'http_fetch' */
  name?: string
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
const READ_METHODS = new Set(['GET', 'HEAD'])

/** The permission a fetch needs: `http`, target `METHOD url`; GET and HEAD read, the rest write. */
export function httpPermission(method: string, url: string): PermissionSpec {
  return { name: 'http', target: `${method} ${url}`, effect: READ_METHODS.has(method) ? 'read' : 'write' }
}

const DESCRIPTION = `Fetch a URL over HTTP(S) and return the response as text; HTML is reduced to readable text.
- GET and HEAD read; POST, PUT, PATCH and DELETE ask for approval first.
- Only public addresses can be reached: private, loopback and link-local hosts are refused.
- Redirects are followed (up to a limit); long bodies are cut; only text-like content types are returned.`

/**
 * Creates the `http_fetch` tool. Host-free: the HTTP client is injected, and must send
 * each request to the address it is given.
 */
export function createHttpFetchTool(options: HttpFetchToolOptions): Tool {
  const { client, resolver = systemResolver, maxBytes = 1_048_576, timeout = 30_000, maxRedirects = 5 } = options
  if (typeof client !== 'function') throw new HttpFetchError('INVALID_OPTIONS', 'createHttpFetchTool() needs an HTTP client')
  if (!(maxBytes >= 1) || !(timeout >= 1) || !(maxRedirects >= 0)) {
    throw new HttpFetchError('INVALID_OPTIONS', 'maxBytes and timeout must be positive and maxRedirects must not be negative')
  }
  const allowlist = new Allowlist(options.allow)
  const contentTypes = options.contentTypes ?? DEFAULT_CONTENT_TYPES
  const userAgent = options.userAgent ?? 'Dogu http_fetch'
  return defineTool({
    name: options.name ?? 'http_fetch',
    description: DESCRIPTION,
    args: Schema.object({
      url: Schema.string().required().description('An http or https URL.'),
      method: Schema.union(METHODS).default('GET').description('HTTP method.'),
      headers: Schema.dict(String).default({}).description('Request headers.'),
      body: Schema.string().description('Request body, for POST, PUT and PATCH.'),
      raw: Schema.boolean().default(false).description('Return HTML source instead of readable text.'),
    }),
    permission: ({ method, url }) => httpPermission(method, url),
    traits: {
      effect: 'write',
      // Fetches touch no local state, so they need no read/write gate among other calls.
      parallel: true,
      timeout: timeout + 5000,
      background: false,
    },
    async run({ url, method, headers, body, raw }, call) {
      if (body !== undefined && READ_METHODS.has(method)) {
        throw new HttpFetchError('INVALID_REQUEST', `a ${method} request cannot have a body`)
      }
      const timer = new AbortController()
      const handle = setTimeout(() => timer.abort(new HttpFetchError('TIMEOUT', `no complete response within ${timeout} ms`)), timeout)
      const signal = AbortSignal.any([call.signal, timer.signal])
      try {
        const fetched = await fetchUrl(
          { url, method, headers: { 'user-agent': userAgent, accept: 'text/html,application/json,text/*;q=0.9,*/*;q=0.1', ...headers }, body },
          { client, resolver, allowlist, maxRedirects, signal },
        )
        const { response } = fetched
        const type = parseContentType(response.headers.get('content-type'))
        if (type && !matchesContentType(type.mime, contentTypes)) {
          await response.body?.cancel().catch(() => {})
          throw new HttpFetchError('CONTENT_TYPE_REFUSED', `${fetched.url.href} returned ${type.mime}, which is not a text type this tool returns`)
        }
        const { bytes, truncated } = await readBody(response, maxBytes)
        if (!type && bytes.subarray(0, 1024).includes(0)) {
          throw new HttpFetchError('CONTENT_TYPE_REFUSED', `${fetched.url.href} sent no content type and its body looks binary`)
        }
        let text = decodeText(bytes, type?.charset)
        if (type && HTML_TYPES.has(type.mime) && !raw) text = readableText(text)
        const data = {
          url,
          finalUrl: fetched.url.href,
          redirects: fetched.redirects,
          status: response.status,
          statusText: response.statusText,
          contentType: type?.mime,
          bytes: bytes.length,
          truncated,
          headers: headerRecord(response.headers),
        }
        return { text: formatResponse(method, data, text), data }
      } catch (error) {
        if (timer.signal.aborted && !call.signal.aborted) throw timer.signal.reason
        throw error
      } finally {
        clearTimeout(handle)
      }
    },
  })
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {}
  headers.forEach((value, name) => { record[name] = value })
  return record
}

interface Summary {
  finalUrl: string
  redirects: string[]
  status: number
  statusText: string
  contentType?: string
  bytes: number
  truncated: boolean
  headers: Record<string, string>
}

function formatResponse(method: string, summary: Summary, text: string): string {
  const lines = [`HTTP ${summary.status} ${summary.statusText} — ${method} ${summary.finalUrl} (${summary.contentType ?? 'no content type'}, ${summary.bytes} bytes)`]
  if (summary.redirects.length) lines.push(`Redirected ${summary.redirects.length} time(s); final URL above.`)
  if (summary.truncated) lines.push(`[The body was cut at ${summary.bytes} bytes.]`)
  if (method === 'HEAD') {
    lines.push('', ...Object.entries(summary.headers).map(([name, value]) => `${name}: ${value}`))
  } else {
    lines.push('', text || '(empty body)')
  }
  return lines.join('\n')
}
