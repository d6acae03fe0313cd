import type { Session } from '@dogu/core'
import type { Bot, Context } from 'koishi'

/** Where to speak to a Dogu session that came from a chat: its channel, a bot, a language. */
export interface ChatTarget {
  /** `platform:channelId`. */
  channel: string
  platform: string
  channelId: string
  /** The bot to speak through, or `undefined` when no bot of the platform is there. */
  bot?: Bot
  /** The channel's and the user's locales from the database, best first; empty without one. */
  locales: string[]
}

/**
 * Resolves where messages about a session go, or `undefined` when the session did not
 * come from a chat channel (a WebUI call, a script). The bot is the channel's assignee
 * when a database knows it, else the first online bot of the platform. Locales follow
 * Koishi's `i18n.output` preference; Koishi's own `i18n.locales` order comes after them
 * when a message is rendered.
 */
export async function chatTarget(ctx: Context, session: Session): Promise<ChatTarget | undefined> {
  const { platform, channelId, userId } = session
  if (!platform || !channelId) return undefined
  const database = ctx.get('database') as Context['database'] | undefined
  let assignee: string | undefined
  let channelLocales: string[] = []
  let userLocales: string[] = []
  if (database) {
    // A missing row or a failing database only costs the preference, never the message.
    const [channel, user] = await Promise.all([
      database.getChannel(platform, channelId, ['assignee', 'locales']).catch(() => undefined),
      userId ? database.getUser(platform, userId, ['locales']).catch(() => undefined) : undefined,
    ])
    assignee = channel?.assignee || undefined
    channelLocales = channel?.locales ?? []
    userLocales = user?.locales ?? []
  }
  const preferUser = ctx.root.config.i18n?.output === 'prefer-user'
  return {
    channel: `${platform}:${channelId}`,
    platform,
    channelId,
    bot: pickBot(ctx, platform, assignee),
    locales: preferUser ? [...userLocales, ...channelLocales] : [...channelLocales, ...userLocales],
  }
}

// `Universal.Status.ONLINE`: a const enum, which isolated modules cannot read.
const ONLINE = 1

function pickBot(ctx: Context, platform: string, assignee: string | undefined): Bot | undefined {
  // A plugin disposed meanwhile (the app stopped during a database read) sees no bots.
  const bots = (ctx.bots ?? []).filter((bot) => bot.platform === platform)
  return (assignee && bots.find((bot) => bot.selfId === assignee))
    || bots.find((bot) => bot.status === ONLINE)
    || bots[0]
}
