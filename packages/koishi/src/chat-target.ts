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
 * come from a chat channel (a WebUI call, a script). The bot is the one the call came
 * through (`session.host.selfId`, which a durable request's record keeps across a restart)
 * while it is there, else the channel's assignee when a database knows it, else the first
 * online bot of the platform. Locales follow
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
    bot: pickBot(ctx, platform, [selfIdOf(session), assignee]),
    locales: preferUser ? [...userLocales, ...channelLocales] : [...channelLocales, ...userLocales],
  }
}

// `Universal.Status.ONLINE`: a const enum, which isolated modules cannot read.
const ONLINE = 1

/** The bot a Koishi session came through, as `resolveSession` records it. */
function selfIdOf(session: Session): string | undefined {
  const selfId = (session as { host?: { selfId?: unknown } }).host?.selfId
  return typeof selfId === 'string' && selfId ? selfId : undefined
}

function pickBot(ctx: Context, platform: string, preferred: readonly (string | undefined)[]): Bot | undefined {
  // A plugin disposed meanwhile (the app stopped during a database read) sees no bots.
  const bots = (ctx.bots ?? []).filter((bot) => bot.platform === platform)
  const named = preferred.map((selfId) => selfId && bots.find((bot) => bot.selfId === selfId)).find(Boolean)
  return named
    || bots.find((bot) => bot.status === ONLINE)
    || bots[0]
}

/**
 * The target's bot once it is online, for a message sent on the bot's own (a question asked
 * again after a restart, the notice of one closed then): an adapter connects after the app
 * started, and a message sent before would fail. `undefined` when `signal` aborts first, or
 * when no bot of the platform is there at all.
 */
export async function onlineBot(ctx: Context, target: ChatTarget, signal: AbortSignal): Promise<Bot | undefined> {
  const { bot } = target
  if (!bot || bot.status === ONLINE) return bot
  return new Promise<Bot | undefined>((resolve) => {
    const done = (value: Bot | undefined) => {
      stop()
      signal.removeEventListener('abort', aborted)
      resolve(value)
    }
    const aborted = () => done(undefined)
    // By sid: the event carries the bot itself, `ctx.bots` a proxy of it (cordis' service tracker).
    const stop = ctx.on('bot-status-updated', (updated: Bot) => {
      if (updated.sid === bot.sid && updated.status === ONLINE) done(bot)
    })
    if (signal.aborted) return done(undefined)
    signal.addEventListener('abort', aborted, { once: true })
  })
}
