import type { Session } from '@dogu/core'
import { h, type KoishiApp } from './koishi-modules'

// The mock channel a Koishi bot asks its questions in, as the person in it sees it: every
// message the bot posts there on its own (questions, expiry notices) and every reply it gives
// to what the person says. The mock bot only replies to a mock client's message, so its
// `sendMessage` is wrapped (as packages/koishi/tests/chat-harness.ts does): a post without a
// session lands in `posts`.

export class ChatChannel {
  static readonly CHANNEL = 'room'
  /** The caller, who is also the person asked: authority 1 in the database. */
  static readonly USER = 'u1'

  /** Everything the bot posted on its own, as text (buttons and mentions as markup). */
  readonly posts: string[] = []
  /** The bot's replies to the person, in order. */
  readonly replies: string[] = []
  private listeners: ((text: string) => void)[] = []

  private constructor(private app: KoishiApp) {
    const bot = app.bots[0]
    const original = bot.sendMessage.bind(bot)
    bot.sendMessage = async (channelId, content, referrer, options) => {
      if (options?.session) return original(channelId, content, referrer, options)
      const text = h.normalize(content).join('')
      this.posts.push(text)
      for (const listener of this.listeners) listener(text)
      return [`m${this.posts.length}`]
    }
  }

  static async open(app: KoishiApp): Promise<ChatChannel> {
    await app.mock.initUser(ChatChannel.USER, 1)
    return new ChatChannel(app)
  }

  /** The Dogu session of a call the person's message led to: their channel on the mock platform. */
  get session(): Session {
    const { CHANNEL, USER } = ChatChannel
    return { id: `mock:${CHANNEL}`, platform: 'mock', channelId: CHANNEL, guildId: CHANNEL, userId: USER, authority: 1 }
  }

  /** Called with each post, as it is sent (the person reads it). */
  onPost(listener: (text: string) => void): void {
    this.listeners.push(listener)
  }

  /** The person says `text` in the channel; the bot's replies to it. */
  async say(text: string): Promise<string[]> {
    const replies = await this.app.mock.client(ChatChannel.USER, ChatChannel.CHANNEL).receive(text)
    this.replies.push(...replies)
    return replies
  }
}
