import type { ToolSource } from '@dogu/core'
import type { Argv, Context, h, Session as KoishiSession } from 'koishi'
import { defineLocales } from './locales'

// Statuses the locales name; another one (a source of a newer version) is shown as it is.
const STATUSES = new Set(['connected', 'connecting', 'reconnecting', 'closed'])

/** The imported MCP servers registered on `ctx.tools`, by name. */
export function mcpSources(ctx: Context): ToolSource[] {
  return ctx.tools.sources().filter((source) => source.kind === 'mcp')
}

/**
 * `dogu.mcp`: each imported MCP server with its status (one that needs authorization is
 * marked, with the command that authorizes it), its tool count and its last error.
 * `dogu.mcp.auth <server>`: starts the OAuth authorization of a server for the admin who
 * sends it and gives them the URL privately — in a private chat there, from a group by a
 * private message, the group only told that it was sent. The state in that URL is the
 * redirect's only binding to the admin on Koishi's server (mcp-oauth-callback.ts), so it
 * is never posted where others read.
 */
export function mcpCommand(ctx: Context, authority: { list: number; auth: number }, gate: { list: (argv: Argv) => Promise<string | undefined>; auth: (argv: Argv) => Promise<string | undefined> }): void {
  defineLocales(ctx, 'commands.dogu.mcp', (locale) => locale.mcp.list)
  defineLocales(ctx, 'commands.dogu.mcp.auth', (locale) => locale.mcp.auth)

  ctx.command('dogu.mcp', { authority: authority.list })
    .check(gate.list)
    .action(({ session }) => {
      const sources = mcpSources(ctx)
      if (!sources.length) return session!.text('.none')
      const item = (source: ToolSource) => {
        const status = statusText(session!, source)
        const { lastError } = source
        // "needs authorization" is the status itself: no error to repeat.
        return source.needsAuthorization || !lastError
          ? session!.text('.item', { name: source.name, status, tools: source.tools.length })
          : session!.text('.item-error', { name: source.name, status, tools: source.tools.length, error: lastError })
      }
      return [session!.text('.header', { count: sources.length }), ...sources.map(item)].join('\n')
    })

  ctx.command('dogu.mcp.auth [server:string]', { authority: authority.auth })
    .check(gate.auth)
    .action(async ({ session }, name) => {
      const sources = mcpSources(ctx)
      const names = (list: ToolSource[]) => list.length ? list.map((source) => source.name).join(', ') : session!.i18n('.nothing')
      if (!name) return session!.text('.no-server', { servers: names(sources.filter((source) => source.needsAuthorization)) })
      const source = sources.find((candidate) => candidate.name === name)
      if (!source) return session!.text('.unknown', { server: name, servers: names(sources) })
      if (!source.needsAuthorization || !source.startAuthorization) {
        return session!.text('.not-needed', { server: name, status: statusText(session!, source) })
      }
      let url: string
      try {
        // The operator the state is bound to: this admin, as the permission engine names a chat user.
        url = await source.startAuthorization(`${session!.platform}:${session!.userId}`)
      } catch (error) {
        return session!.text('.failed', { server: name, reason: error instanceof Error ? error.message : String(error) })
      }
      const link = session!.text('.link', { server: name, url })
      if (session!.isDirect) return link
      try {
        const channel = await session!.bot.createDirectChannel(session!.userId!)
        await session!.bot.sendMessage(channel.id, link)
      } catch (error) {
        ctx.logger('dogu').warn('dogu.mcp.auth cannot message %s:%s privately: %s', session!.platform, session!.userId, error instanceof Error ? error.message : String(error))
        return session!.text('.dm-failed', { server: name })
      }
      return session!.text('.sent-privately')
    })
}

/** A source's status in the session's language (rendered parts, escaped once when inserted); "needs authorization" says how to give it. */
function statusText(session: KoishiSession, source: ToolSource): h[] | string {
  if (source.needsAuthorization) return session.i18n('commands.dogu.mcp.messages.needs-authorization', { name: source.name })
  return STATUSES.has(source.status) ? session.i18n(`commands.dogu.mcp.messages.status.${source.status}`) : source.status
}
