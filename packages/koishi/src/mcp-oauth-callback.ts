import type { Context } from 'koishi'
import { enUS } from './locales/en-US'
import { type Locale, zhCN } from './locales/zh-CN'
import { mcpSources } from './mcp-command'
import type {} from '@koishijs/plugin-server'

/**
 * Where authorization servers send the person back: `OAUTH_CALLBACK_PATH` of @dogu/mcp's
 * client-plugin.ts, repeated because koishi-plugin-dogu does not depend on @dogu/mcp (the
 * MCP client is a plugin of its own; this only sees its servers as `ctx.tools.sources()`).
 */
export const OAUTH_CALLBACK_PATH = '/dogu/mcp/oauth/callback'

type Texts = Locale['mcp']['callback']

/**
 * `GET /dogu/mcp/oauth/callback?code=…&state=…` on Koishi's server: completes the
 * authorization whose state came back, and answers with a small page saying so.
 *
 * Who opens the page is unknown here (no console login on a plain route), so the state
 * alone binds the redirect: it is a 192-bit random secret made for one authorization and
 * given only to whoever started it (`dogu.mcp.auth` sends it to that admin privately). The
 * source completes with the operator its pending authorization was started by
 * (`authorizationBy`), so its own check of state and operator still holds; a state no
 * authorization under way has completes nothing.
 */
export function mcpOAuthCallback(ctx: Context): void {
  ctx.server.get(OAUTH_CALLBACK_PATH, async (koa) => {
    const texts = textsFor(koa.get('accept-language'))
    const query = (key: string) => {
      const value = koa.query[key]
      return typeof value === 'string' ? value : undefined
    }
    const answer = (status: number, message: string) => {
      koa.status = status
      koa.type = 'html'
      // The URL carried a code: not kept by caches, not sent on as a referrer.
      koa.set('Cache-Control', 'no-store')
      koa.set('Referrer-Policy', 'no-referrer')
      koa.body = page(texts.title, message)
    }
    const error = query('error')
    if (error !== undefined) {
      const description = query('error_description')
      return answer(400, fill(texts.denied, { error: description ? `${error} (${description})` : error }))
    }
    const code = query('code')
    const state = query('state')
    if (!code || !state) return answer(400, texts['missing-code'])
    for (const source of mcpSources(ctx)) {
      const bound = source.authorizationBy?.(state)
      if (!bound || !source.authorize) continue
      try {
        await source.authorize(code, state, bound.by)
      } catch (failure) {
        const reason = failure instanceof Error ? failure.message : String(failure)
        ctx.logger('dogu').warn('MCP server "%s": the authorization failed: %s', source.name, reason)
        return answer(502, fill(texts.failed, { server: source.name, reason }))
      }
      if (source.status === 'connected') return answer(200, fill(texts.authorized, { server: source.name }))
      return answer(200, fill(texts['authorized-not-connected'], { server: source.name, status: source.status, reason: source.lastError ?? source.status }))
    }
    return answer(400, texts['no-match'])
  })
}

/** The page's language from the browser's preference: Chinese when it names Chinese first of the two. */
function textsFor(acceptLanguage: string): Texts {
  for (const part of acceptLanguage.split(',')) {
    const tag = part.split(';', 1)[0].trim().toLowerCase()
    if (tag.startsWith('zh')) return zhCN.mcp.callback
    if (tag.startsWith('en')) return enUS.mcp.callback
  }
  return enUS.mcp.callback
}

/** A locale template with its `{name}` parameters. */
function fill(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => params[key] ?? whole)
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }
const escape = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char])

function page(title: string, message: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)}</title></head>`
    + `<body><p>${escape(message)}</p></body></html>\n`
}
