// Koishi apps put together as bot owners put them together: a database driver that starts
// on its own time, the console, ChatLuna, a tool plugin and Dogu, in any order, before or
// after `app.start()`. Used by load-order.spec.ts and loader.spec.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool } from '@dogu/core'
import { type App, type Context, Schema } from 'koishi'
import { Outbox } from './chat-harness'
import { within } from '../../../test-support/within'

export { freePort } from '../../../test-support/free-port'

const require = createRequire(import.meta.url)
// Koishi's CJS packages come through as `{ default }`; Koishi loads plugins with require.
const unwrap = <T>(module: T): T => (module as { default?: T }).default ?? module
type Plugin = Parameters<App['plugin']>[0]
export const MemoryDatabase = unwrap(require('@koishijs/plugin-database-memory')) as Plugin
export const SQLiteDriver = unwrap(require('@minatojs/driver-sqlite')) as Plugin
export const MockAdapter = unwrap(require('@koishijs/plugin-mock')) as Plugin
export const ServerPlugin = unwrap(require('@koishijs/plugin-server')) as Plugin
export const ConsolePlugin = unwrap(require('@koishijs/plugin-console')) as Plugin
export const ChatLuna = unwrap(require('koishi-plugin-chatluna')) as Plugin

/** A write tool (the default rules ask before it runs); what it saved is in `notes`. */
export function noteTools(notes: string[]): Plugin {
  return {
    name: 'note-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'save_note',
        description: 'Save a note',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'write' },
        run: (args: { text: string }) => {
          notes.push(args.text)
          return `saved “${args.text}”`
        },
      }))
    },
  } as Plugin
}

/** A temp folder, removed by the returned function. */
export async function tempDir(prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  // Retries: a stopping app's last write (the audit trail's queue) may land while the folder goes.
  return { dir, remove: () => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) }
}


/** Turns the crank until `done()` holds: plugins apply asynchronously and drivers start on `ready`. */
export async function until(app: App, done: () => boolean, what: string, timeout = 20_000) {
  const end = Date.now() + timeout
  while (!done()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${timeout} ms`)
    await app.lifecycle.flush()
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * A chat approval as a user sees it: `userId` runs `save_note` with `dogu.run`, the bot asks
 * in the channel, the user answers `answer`, and the command's reply comes back. The user is
 * given authority 3 (what `dogu.run` needs) in the database first.
 */
export async function approveInChat(app: App, outbox: Outbox, answer: string, text = 'hi', userId = 'alice') {
  await app.mock.initUser(userId, 3)
  const client = app.mock.client(userId, 'room')
  const replies = client.receive(`dogu.run save_note {"text":"${text}"}`)
  const question = await within(outbox.next(), 'the chat question')
  const answered = await client.receive(answer)
  return { question: question.text, answered, replies: await within(replies, 'the reply to dogu.run') }
}

/** The bot's messages sent on its own (questions), once its mock bot exists. */
export function outboxOf(app: App): Outbox {
  const bot = app.bots[0]
  if (!bot) throw new Error('the mock bot is not there')
  return new Outbox(bot)
}
