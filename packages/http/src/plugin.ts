import type { HTTP } from '@cordisjs/plugin-http'
import type { Tool } from '@dogu/core'
import Schema from 'schemastery'
import { createCordisHttpClient } from './cordis-http-client'
import { createHttpFetchTool, DEFAULT_CONTENT_TYPES } from './http-fetch-tool'

/** The part of a Cordis context this plugin uses. */
export interface HttpFetchHost {
  http: HTTP
  tools: { define(tool: Tool): () => void }
}

export const name = 'dogu-http'
export const inject = ['tools', 'http']

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

/** Registers `http_fetch` over `ctx.http`, with connections pinned to checked addresses. */
export function apply(ctx: HttpFetchHost, config: Config) {
  ctx.tools.define(createHttpFetchTool({ ...config, client: createCordisHttpClient(ctx.http) }))
}
