import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Session as DoguSession } from '@dogu/core'
import memory from '@koishijs/plugin-database-memory'
import mock from '@koishijs/plugin-mock'
import { App, type Bot, type Context, h, type Session } from 'koishi'
import { expect } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { BackgroundService, PermissionService, ToolService } from '../src'
import { chatApprovals, type ChatApprovalsConfig } from '../src/chat-approvals'
import { commands, type CommandsConfig } from '../src/commands'
import { taskNotices, type TaskNoticesConfig } from '../src/task-notices'

// Koishi's CJS packages come through as `{ default }` under ESM.
const MockPlugin = (mock as unknown as { default?: typeof mock }).default ?? mock
const MemoryPlugin = (memory as unknown as { default?: typeof memory }).default ?? memory

/** A message the bot sent on its own (a question, a notice), not as a reply. */
export interface Sent {
  channelId: string
  /** The message as text, without its buttons. */
  text: string
  id: string
  /** Its buttons (`<button type="action">`), when it has any: what a user could press. */
  buttons?: { id: string; label: string }[]
}

/**
 * What the bot posts on its own. The mock bot can only reply to a mock client's message,
 * so its `sendMessage` is wrapped: a send without a session lands here.
 */
export class Outbox {
  readonly sent: Sent[] = []
  private read = 0
  private waiter?: () => void

  constructor(bot: Bot) {
    const original = bot.sendMessage.bind(bot)
    bot.sendMessage = async (channelId, content, referrer, options) => {
      if (options?.session) return original(channelId, content, referrer, options)
      const id = `m${this.sent.length + 1}`
      const elements = h.normalize(content)
      const buttons = h.select(elements, 'button').map((button) => ({ id: button.attrs.id, label: button.children.join('') }))
      // A mention reads `@id` here: stripped, it would leave nothing to check.
      const text = h.transform(elements.filter((element) => element.type !== 'button'), { at: ({ id }) => `@${id}` }).map((element) => element.toString(true)).join('')
      this.sent.push(buttons.length ? { channelId, text, id, buttons } : { channelId, text, id })
      this.waiter?.()
      return [id]
    }
  }

  /** The next message posted after the last one read: at once, or when it is sent. */
  async next(): Promise<Sent> {
    while (this.read === this.sent.length) await new Promise<void>((resolve) => { this.waiter = resolve })
    this.waiter = undefined
    return this.sent[this.read++]
  }

  /** Messages posted and not yet read. */
  get unread(): Sent[] {
    return this.sent.slice(this.read)
  }
}

export interface ChatAppOptions {
  /** Load @koishijs/plugin-database-memory, with users alice (1), bob (1), ops (3), admin (4), guest (0). @default true */
  database?: boolean
  defaultAuthority?: number
  permissions?: PermissionService.Config
  approvals?: ChatApprovalsConfig | false
  commands?: CommandsConfig | false
  notices?: TaskNoticesConfig | false
}

export const USERS = { alice: 1, bob: 1, ops: 3, admin: 4, guest: 0 } as const

/**
 * A Koishi app with the mock adapter, Dogu's services and the chat parts, loaded as
 * plugins of their own (as the Dogu plugin loads them). Messages the app lets pass reach
 * `passed`: what a later plugin of the bot would see.
 */
export async function chatApp(options: ChatAppOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dogu-koishi-chat-'))
  const app = new App()
  // An error or warning the test does not declare (guard.expect) fails it: test-support/log-guard.ts.
  const guard = guardLogs(app)
  /** What `internal/error` carried, for a test that checks which error it was. */
  const errors: unknown[] = []
  app.on('internal/error', (error) => { errors.push(error) })
  const mockFork = app.plugin(MockPlugin, { selfId: '514' })
  if (options.database !== false) app.plugin(MemoryPlugin)
  await app.start()
  const permissions = app.plugin(PermissionService, {
    storePath: join(dir, 'permissions.json'),
    defaultAuthority: options.defaultAuthority,
    ...options.permissions,
  })
  app.plugin(ToolService)
  const background = app.plugin(BackgroundService, { storePath: join(dir, 'background.json') })
  const part = <T extends object>(name: string, apply: (ctx: Context, config: T) => void, config: T | false | undefined, inject: string[]) =>
    config === false ? undefined : app.plugin({ name, inject, apply }, (config ?? {}) as T)
  const approvals = part('dogu-chat-approvals', chatApprovals, options.approvals, ['tools'])
  const commandsFork = part('dogu-commands', commands, options.commands, ['tools'])
  const notices = part('dogu-task-notices', taskNotices, options.notices, ['background'])
  await app.lifecycle.flush()
  const engine = app.permissions.engine
  const tasks = app.background.engine
  await engine.ready
  await app.lifecycle.flush()
  if (options.database !== false) {
    for (const [user, authority] of Object.entries(USERS)) await app.mock.initUser(user, authority)
  }
  const bot = app.bots[0]
  const outbox = new Outbox(bot)
  const passed: string[] = []
  app.middleware((session: Session, next) => {
    passed.push(`${session.userId}: ${session.content}`)
    return next()
  })
  return {
    app,
    bot,
    outbox,
    errors,
    guard,
    passed,
    forks: { permissions, background, approvals, commands: commandsFork, notices },
    /** The Dogu session of a user in a channel of the mock platform. */
    session(userId: keyof typeof USERS | string, channelId = 'room'): DoguSession {
      return { id: `mock:${channelId}`, platform: 'mock', channelId, guildId: channelId, userId, authority: (USERS as Record<string, number>)[userId] ?? 1 }
    },
    client(userId: string, channelId = 'room') {
      return app.mock.client(userId, channelId)
    },
    /**
     * A press of the button `id` by a user in a channel, as an adapter with buttons reports
     * it (`interaction/button`; the mock has no helper for it): the bot's replies to it.
     */
    async press(userId: string, id: string, channelId = 'room'): Promise<string[]> {
      const client = app.mock.client(userId, channelId)
      // Where the mock collects what the bot says to this client (private in its types).
      const replies = (client as unknown as { replies: string[] }).replies
      ;(bot as any).receive({ ...client.event, type: 'interaction/button', button: { id } }, client)
      // The press has no middleware run to wait for: wait for its reply instead.
      for (let tick = 0; tick < 200 && !replies.length; tick++) await new Promise((resolve) => setImmediate(resolve))
      return replies.splice(0)
    },
    settle: () => app.lifecycle.flush(),
    async dispose() {
      // The mock bot cannot leave an app whose bots are gone: take it out first.
      mockFork.dispose()
      await app.stop()
      // What the stores are written by: wait for them before the folder goes.
      await Promise.all([engine.stop(), tasks.dispose()])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type ChatApp = Awaited<ReturnType<typeof chatApp>>

/** Every description in a config schema, as `path: { locale: text }`. */
export function descriptions(schema: any, path = '$', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (schema.meta?.description !== undefined) out[path] = schema.meta.description
  for (const [key, inner] of Object.entries(schema.dict ?? {})) descriptions(inner, `${path}.${key}`, out)
  if (schema.inner) descriptions(schema.inner, `${path}[]`, out)
  return out
}

/** Each path described in Chinese and English, English also as the plain description. */
export const inBothLanguages = (paths: string[]) => Object.fromEntries(paths.map((path) => [path, {
  '': expect.any(String),
  'en-US': expect.any(String),
  'zh-CN': expect.stringMatching(/\p{Script=Han}/u),
}]))
