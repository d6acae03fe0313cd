import { defineTool, type PermissionGate, type PermissionSpec, type Tool, type ToolCall, type ToolPreview } from '@dogu/core'
import Schema from 'schemastery'
import { Allowlist } from './allowlist'
import { canonicalUrl } from './canonical-url'
import { decodeText, HTML_TYPES, matchesContentType, parseContentType } from './content-type'
import { fetchUrl, type RedirectHop } from './fetch-url'
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
  /**
   * The permission gate each redirect hop is authorized by, read when the hop comes (the
   * plugin passes `ctx.tools.registry.permissions`). A getter that returns `undefined` means
   * no permission service is loaded: read hops follow, write hops are refused. Without this
   * option every redirect asks a person through `call.ask`.
   */
  permissions?: () => PermissionGate | undefined
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
const READ_METHODS = new Set(['GET', 'HEAD'])

/**
 * The permission a fetch needs: `http`, target `METHOD url` with the URL in the canonical
 * form it is fetched in (`canonicalUrl`); GET and HEAD read, the rest write.
 */
export function httpPermission(method: string, url: string | URL): PermissionSpec {
  const href = typeof url === 'string' ? canonicalUrl(url).href : url.href
  return { name: 'http', target: `${method} ${href}`, effect: READ_METHODS.has(method) ? 'read' : 'write' }
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
    preview: ({ url, method, headers, body }, call) => fetchPreview(call.name, method, url, headers, body),
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
          { client, resolver, allowlist, maxRedirects, signal, authorizeHop: (hop) => authorizeHop(hop, call, signal, options.permissions) },
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

/**
 * Authorizes a redirect hop the way the pipeline authorizes a call: rules, modes and
 * grants decide, `ask` asks a person (the question ends with the fetch), anything else
 * refuses the hop, and with it the call (`denied`).
 */
async function authorizeHop(hop: RedirectHop, call: ToolCall, signal: AbortSignal, permissions: HttpFetchToolOptions['permissions']): Promise<void> {
  const permission = httpPermission(hop.method, hop.url)
  const reason = `${hop.from.href} redirects (${hop.status}) to ${permission.target}`
  const preview = hopPreview(hop)
  if (!permissions) {
    await call.ask(reason, { preview })
    return
  }
  const gate = permissions()
  if (!gate) {
    if (permission.effect === 'read') return
    call.deny(`${reason}, and no permission service is loaded, so only read requests may follow a redirect`)
  }
  const request = {
    session: call.session,
    permission: { ...permission, reason },
    effect: permission.effect!,
    tool: call.name,
    args: { method: hop.method, url: hop.url.href },
  }
  const answer = await gate!.authorize(request)
  if (signal.aborted) throw signal.reason
  if (answer?.decision === 'allow') return
  if (answer?.decision === 'ask') {
    const outcome = await gate!.approve({ ...request, callId: call.id, reason, preview }, signal)
    if (signal.aborted) throw signal.reason
    if (outcome?.decision === 'allow') return
    call.deny(`${reason}: ${outcome?.reason ?? 'the redirect was not approved'}`)
  }
  call.deny(`${reason}: ${answer?.reason ?? 'the permission check returned no valid decision'}`)
}

/**
 * What a fetch will send, for the person asked: the method and the URL as it will be
 * fetched (canonical; credentials in it shown as `***`), the body's size and type, and the
 * names (not the values) of the headers given. A request the tool refuses says so.
 */
export function fetchPreview(tool: string, method: string, url: string, headers: Record<string, string> = {}, body?: string): ToolPreview {
  let href: string
  try {
    href = canonicalUrl(url).href
  } catch (error) {
    const code = error instanceof HttpFetchError ? ` (${error.code})` : ''
    return { url: redactUrl(url), text: `${tool} will be refused${code}: ${redactUrl((error as Error).message)}` }
  }
  const lines = [`${method} ${href}`]
  if (body !== undefined && READ_METHODS.has(method)) {
    lines.push(`${tool} will be refused (INVALID_REQUEST): a ${method} request cannot have a body`)
  }
  if (body !== undefined) {
    const type = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1]
    lines.push(`body: ${formatSize(Buffer.byteLength(body))}, ${type ? `content-type ${type}` : 'no content-type header'}`)
  } else {
    lines.push('no body')
  }
  const names = Object.keys(headers)
  if (names.length) lines.push(`headers: ${names.join(', ')} (values not shown)`)
  return { url: href, text: lines.join('\n') }
}

/** A redirect hop's question: the next URL as it will be fetched. */
function hopPreview(hop: RedirectHop): ToolPreview {
  return { url: hop.url.href, text: `${hop.method} ${hop.url.href}\nredirected (${hop.status}) from ${hop.from.href}` }
}

/** `https://***:***@host/…`: a user name and password in a URL (or in a text quoting one) hidden. */
export function redactUrl(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/gi, '$1***@')
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`
  return bytes < 1 << 20 ? `${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes)` : `${(bytes / (1 << 20)).toFixed(1)} MiB (${bytes} bytes)`
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
