import type { HTTP } from '@cordisjs/plugin-http'
import type { PermissionGate, Tool } from '@dogu/core'
import Schema from 'schemastery'
import { createCordisHttpClient } from './cordis-http-client'
import type { HttpClient } from './http-client'
import { createHttpFetchTool, DEFAULT_CONTENT_TYPES } from './http-fetch-tool'
import { createUndiciHttpClient } from './undici-http-client'

/** The part of a Cordis or Koishi context this plugin uses. */
export interface HttpFetchHost {
  /** Cordis 4's `ctx.http` is used when loaded; any other (Koishi's) or none: undici directly. */
  http?: HTTP | object
  tools: {
    define(tool: Tool): () => void
    /** Its `permissions` authorizes each redirect hop, read when the hop comes. */
    registry?: { readonly permissions: PermissionGate | undefined }
  }
}

export const name = 'dogu-http'
// In the form both cordis 3 (Koishi) and cordis 4 read: `tools` needed, `http` used when there.
export const inject = { tools: { required: true }, http: { required: false } }

export interface Config {
  allow: string[]
  maxBytes: number
  timeout: number
  maxRedirects: number
  contentTypes: string[]
  userAgent: string
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  allow: Schema.array(String).default([]).description('Hosts (`intranet.example`, `*.corp.example`), IP addresses and CIDR ranges (`10.0.0.0/8`) let through the SSRF guard.'),
  maxBytes: Schema.natural().role('byte').min(1).default(1_048_576).description('Largest response body read; the rest is not downloaded.'),
  timeout: Schema.natural().role('ms').min(1).default(30_000).description('Time for the whole fetch, redirects and body included.'),
  maxRedirects: Schema.natural().default(5).description('Redirects followed before giving up.'),
  contentTypes: Schema.array(String).default([...DEFAULT_CONTENT_TYPES]).description('Accepted MIME patterns.'),
  userAgent: Schema.string().default('Dogu http_fetch').description('User-Agent header.'),
})

/**
 * Registers `http_fetch`, with connections pinned to checked addresses: over Cordis 4's
 * `ctx.http` when it is loaded, else straight over undici (on Koishi, whose `ctx.http`
 * takes no per-request connection).
 */
export function apply(ctx: HttpFetchHost, config: Config) {
  // Dogu's `ctx.tools` (Cordis and Koishi) has a registry; a host without one gets the
  // tool's default, where each redirect asks a person.
  const { registry } = ctx.tools
  const permissions = registry ? () => registry.permissions : undefined
  ctx.tools.define(createHttpFetchTool({ ...config, client: clientOf(ctx.http), permissions }))
}

function clientOf(http: HttpFetchHost['http']): HttpClient {
  return isCordisHttp(http) ? createCordisHttpClient(http) : createUndiciHttpClient()
}

/** Cordis 4's `@cordisjs/plugin-http`: it resolves proxies registered with `proxy()` and carries undici. */
function isCordisHttp(http: unknown): http is HTTP {
  return typeof (http as HTTP | undefined)?.proxy === 'function' && typeof (http as HTTP).undici?.Agent === 'function'
}
