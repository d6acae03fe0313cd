import type { Toolset, ToolsetOptions } from '@dogu/core'
import type { Context, Session } from 'koishi'
import type { KoishiDoguSession } from './koishi-permission'

export interface DoguSessionOptions {
  /**
   * The caller's authority when the Koishi session holds none (no database, or a user not
   * loaded yet). Koishi's own default for unknown users is 1.
   * @default 1
   */
  defaultAuthority?: number
}

/**
 * Maps a Koishi session to the Dogu session a toolset is made for, from what the Koishi
 * session already holds; it looks nothing up. `ctx.permissions.resolveSession` does the
 * same and also reads the user table and the Koishi permissions rules name.
 *
 * - `id`: `platform:channelId`. A private chat's channel is per user (`private:123` on
 *   OneBot and the mock adapter), so every private chat is its own session; a session
 *   without a channel is `platform:private:userId`.
 * - `userId` and `platform` stay separate fields: rules and approvals compare both, so the
 *   same user id on another platform is another person.
 * - `authority`: `session.user.authority` when Koishi loaded the user (its middleware and
 *   commands do when a database is loaded), else `defaultAuthority`.
 */
export function doguSession(session: Session, options: DoguSessionOptions = {}): KoishiDoguSession {
  const { platform, userId, channelId, guildId } = session
  const user = session.user as { authority?: unknown } | undefined
  const authority = typeof user?.authority === 'number' ? user.authority : options.defaultAuthority ?? 1
  return {
    id: channelId ? `${platform}:${channelId}` : `${platform}:private:${userId}`,
    ...(userId !== undefined ? { userId } : {}),
    ...(channelId !== undefined ? { channelId } : {}),
    ...(guildId !== undefined ? { guildId } : {}),
    ...(platform !== undefined ? { platform } : {}),
    authority,
  }
}

/**
 * The locale a Koishi session reads in, for a toolset's `locale` option: the first of the
 * session's own locales, then the user's and the channel's in the order Koishi's
 * `session.text` uses (`i18n.output`). `undefined` when none is known.
 */
export function localeOf(session: Session): string | undefined {
  const user = (session.user as { locales?: string[] } | undefined)?.locales ?? []
  const places = [
    ...(session.channel as { locales?: string[] } | undefined)?.locales ?? [],
    ...(session.guild as { locales?: string[] } | undefined)?.locales ?? [],
  ]
  const preferUser = (session.app?.koishi?.config as { i18n?: { output?: string } } | undefined)?.i18n?.output === 'prefer-user'
  const locales = [...session.locales ?? [], ...preferUser ? [...user, ...places] : [...places, ...user]]
  return locales.find((locale) => typeof locale === 'string' && locale.length > 0)
}

/**
 * A toolset for a Koishi session: the session resolved by `ctx.permissions.resolveSession`
 * (authority from the user table, the Koishi permissions rules name) and the caller's
 * locale. Make one per turn: the facts are those of the moment it was made.
 *
 * @example
 * ctx.middleware(async (session, next) => {
 *   const toolset = await toolsetFor(ctx, session, { include: ['lookup', 'notes'] })
 *   // … send toolset.definitions('openai') to the model, then:
 *   const results = await toolset.execute(modelToolCalls)
 * })
 */
export async function toolsetFor(ctx: Context, session: Session, options: Omit<ToolsetOptions, 'session'> = {}): Promise<Toolset> {
  const permissions = ctx.permissions as Partial<Pick<Context['permissions'], 'resolveSession'>>
  // Without Dogu's permissions the gate fails closed anyway; the mapping alone is enough.
  const resolved = typeof permissions.resolveSession === 'function' ? await permissions.resolveSession(session) : doguSession(session)
  const locale = localeOf(session)
  return ctx.tools.toolset({ ...locale !== undefined ? { locale } : {}, ...options, session: resolved })
}
