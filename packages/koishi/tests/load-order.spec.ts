// Every order a bot owner may load things in: the database driver, Koishi's console, ChatLuna
// and a tool plugin, each before or after Dogu, all before `app.start()` (as Koishi's loader
// does) or all after it (as the market installs a plugin into a running bot). In each, a chat
// approval works, on the living engine, with its `always` grant in the database, and nothing
// is logged as an error or a warning.
import { join } from 'node:path'
import { defineTool, GRANT_TABLE, TASK_TABLE } from '@dogu/core'
import { App, type Context, type ForkScope } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as Dogu from '../src'
import {
  approveInChat, ChatLuna, ConsolePlugin, freePort, MemoryDatabase, MockAdapter, noteTools, outboxOf, ServerPlugin,
  SQLiteDriver, tempDir, until,
} from './owner-app'

type Part = 'database' | 'console' | 'chatluna' | 'tools'
const PARTS: Part[] = ['database', 'console', 'chatluna', 'tools']

// Every error and warning line, and every `internal/error`, fails the test (docs/testing.md).
const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

interface Owner {
  app: App
  notes: string[]
  forks: Partial<Record<Part | 'dogu' | 'mock', ForkScope>>
  dir: string
}

/** An app with the mock adapter, and Dogu and the parts loaded in `order`. */
async function ownerApp(order: (Part | 'dogu')[], options: { startFirst?: boolean; database?: 'memory' | 'sqlite' } = {}): Promise<Owner> {
  const { dir, remove } = await tempDir('dogu-order-')
  const app = new App({ baseDir: dir } as never)
  // ChatLuna keeps presets under the base directory.
  app.baseDir = dir
  guardLogs(app)
  const notes: string[] = []
  const forks: Owner['forks'] = {}
  const loaded: ForkScope[] = []
  const mock = forks.mock = app.plugin(MockAdapter, { selfId: '514' })
  cleanups.push(async () => {
    // Plugins first, the last loaded first: ChatLuna's uninstall fails once the app's
    // services are gone, and the mock bot cannot outlive the bots service.
    for (const fork of loaded.reverse()) {
      fork.dispose()
      await app.lifecycle.flush()
    }
    mock.dispose()
    await app.stop()
    // What the stores write on stop lands before the folder goes.
    await app.get('background')?.engine.dispose()
    await remove()
  })
  const port = await freePort()
  const load = (part: Part | 'dogu') => {
    if (part === 'dogu') {
      forks.dogu = app.plugin(Dogu, {
        permissions: { storePath: join(dir, 'permissions.json') },
        background: { storePath: join(dir, 'background.json') },
        notices: { enabled: false },
      })
    } else if (part === 'database') {
      forks.database = options.database === 'sqlite'
        ? app.plugin(SQLiteDriver, { path: join(dir, 'koishi.db') })
        : app.plugin(MemoryDatabase)
    } else if (part === 'console') {
      loaded.push(app.plugin(ServerPlugin, { host: '127.0.0.1', port }))
      forks.console = app.plugin(ConsolePlugin, { devMode: false, open: false })
    } else if (part === 'chatluna') {
      forks.chatluna = app.plugin(ChatLuna, {})
    } else {
      forks.tools = app.plugin(noteTools(notes))
    }
  }
  if (options.startFirst) await app.start()
  for (const part of order) {
    load(part)
    const fork = part === 'dogu' ? forks.dogu : forks[part]
    if (fork) loaded.push(fork)
  }
  if (!options.startFirst) await app.start()
  const services = { database: 'database', console: 'console', chatluna: 'chatluna' } as const
  const wanted = order.flatMap((part) => part in services ? [services[part as keyof typeof services]] : [])
  await until(app, () => wanted.every((name) => !!app.get(name)) && !!app.get('background') && !!app.tools?.get('save_note'), 'every service')
  return { app, notes, forks, dir }
}

const alice = { id: 'mock:room', platform: 'mock', channelId: 'room', userId: 'alice' }

/** A read tool that moves to the background after 20 ms and ends when a test calls its `finishes[i]`. */
function slowTools(finishes: ((text: string) => void)[] = []) {
  return {
    name: 'slow-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'Slow',
        traits: { effect: 'read', timeout: 20 },
        run: () => new Promise<string>((resolve) => { finishes.push(resolve) }),
      }))
    },
  }
}

/** The console's Dogu listener, called as a logged-out console with the page's authority. */
function consoleCall(app: App, method: string, payload: unknown = {}) {
  const listener = app.console.listeners[`dogu/${method}`]
  if (!listener) throw new Error(`no console listener dogu/${method}`)
  return listener.callback.call(undefined as never, payload) as Promise<{ value?: unknown }>
}

/** Each part before (true) or after (false) Dogu, in the order PARTS lists them. */
const placements = Array.from({ length: 1 << PARTS.length }, (_, bits) => PARTS.map((_, i) => !!(bits & (1 << i))))
const orderOf = (before: boolean[]): (Part | 'dogu')[] => [...PARTS.filter((_, i) => before[i]), 'dogu', ...PARTS.filter((_, i) => !before[i])]
const named = (order: (Part | 'dogu')[]) => order.join(' → ')

describe('load orders', () => {
  it.each(placements.map((before) => [named(orderOf(before)), orderOf(before)] as const))('%s, then start: a chat approval runs the tool and its "always" grant is in the database', async (_, order) => {
    const { app, notes } = await ownerApp(order)
    const outbox = outboxOf(app)
    const { question, replies } = await approveInChat(app, outbox, 'a')
    expect(question).toContain('save_note(text=hi)')
    expect(replies.join('\n')).toContain('saved “hi”')
    expect(notes).toEqual(['hi'])
    // The grant went to the table, and the tool's ChatLuna counterpart and the console are there.
    await app.permissions.engine.refreshGrants()
    expect(await app.database.get(GRANT_TABLE as never, {})).toHaveLength(1)
    expect(Object.keys((app as any).chatluna.platform.getToolRegistry())).toContain('save_note')
    expect((await consoleCall(app, 'tools.list')).value).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'save_note' })]))
    // Answered "always": the next call runs without a question.
    const again = await app.mock.client('alice', 'room').receive('dogu.run save_note {"text":"again"}')
    expect(again.join('\n')).toContain('saved “again”')
    expect(outbox.unread).toEqual([])
  })

  it('everything loaded into a running app, after Dogu (as the market installs plugins)', async () => {
    const { app, notes } = await ownerApp(['dogu', ...PARTS], { startFirst: true })
    const { replies } = await approveInChat(app, outboxOf(app), 'y')
    expect(replies.join('\n')).toContain('saved “hi”')
    expect(notes).toEqual(['hi'])
  })

  it('everything loaded into a running app, before Dogu', async () => {
    const { app, notes } = await ownerApp([...PARTS, 'dogu'], { startFirst: true })
    const { replies } = await approveInChat(app, outboxOf(app), 'y')
    expect(replies.join('\n')).toContain('saved “hi”')
    expect(notes).toEqual(['hi'])
  })

  it('the question the console shows is the chat\'s: one engine, both askers', async () => {
    const { app } = await ownerApp(['database', 'dogu', 'console', 'chatluna', 'tools'])
    const outbox = outboxOf(app)
    await app.mock.initUser('alice', 3)
    const replies = app.mock.client('alice', 'room').receive('dogu.run save_note {"text":"hi"}')
    await outbox.next()
    const listed = (await consoleCall(app, 'approvals.list')).value as { summary: string }[]
    expect(listed.map((request) => request.summary)).toEqual(['save_note(text=hi)'])
    await app.mock.client('alice', 'room').receive('n')
    expect((await replies).join('\n')).toMatch(/denied|拒绝/)
  })
})

describe('a database reloaded while a question waits', () => {
  it('the question keeps waiting; the "always" answer is stored in the database that came back', async () => {
    const { app, notes, forks, dir } = await ownerApp(['database', 'dogu', 'console', 'chatluna', 'tools'], { database: 'sqlite' })
    const engine = app.permissions.engine
    const outbox = outboxOf(app)
    await app.mock.initUser('alice', 3)
    const client = app.mock.client('alice', 'room')
    const replies = client.receive('dogu.run save_note {"text":"hi"}')
    await outbox.next()
    forks.database!.dispose()
    await until(app, () => !app.get('database'), 'the database going')
    expect(app.permissions.pending()).toHaveLength(1)
    app.plugin(SQLiteDriver, { path: join(dir, 'koishi.db') })
    await until(app, () => !!app.get('database'), 'the database coming back')
    await client.receive('a')
    expect((await replies).join('\n')).toContain('saved “hi”')
    expect(notes).toEqual(['hi'])
    expect(app.permissions.engine).toBe(engine)
    await engine.refreshGrants()
    const rows = await app.database.get(GRANT_TABLE as never, {}) as { permission: string }[]
    expect(rows.map((row) => row.permission)).toEqual(['tool:save_note'])
  })

  it('a plugin\'s rule and asker stay registered across the reload', async () => {
    const { app, forks, dir } = await ownerApp(['database', 'dogu', 'console', 'chatluna', 'tools'], { database: 'sqlite' })
    const asked: string[] = []
    app.plugin({
      name: 'house-rules',
      apply(ctx: Context) {
        ctx.permissions.rule({ permission: 'tool:save_note', users: ['bob'], decision: 'deny', name: 'no notes for bob' })
        ctx.permissions.asker((request) => { asked.push(request.tool) })
      },
    })
    await app.lifecycle.flush()
    forks.database!.dispose()
    await until(app, () => !app.get('database'), 'the database going')
    app.plugin(SQLiteDriver, { path: join(dir, 'koishi.db') })
    await until(app, () => !!app.get('database'), 'the database coming back')
    const outbox = outboxOf(app)
    await app.mock.initUser('bob', 3)
    await app.mock.initUser('carol', 3)
    const denied = await app.mock.client('bob', 'room').receive('dogu.run save_note {"text":"x"}')
    expect(denied.join('\n')).toContain('no notes for bob')
    const replies = app.mock.client('carol', 'room').receive('dogu.run save_note {"text":"y"}')
    await outbox.next()
    expect(asked).toEqual(['save_note'])
    await app.mock.client('carol', 'room').receive('n')
    expect((await replies).join('\n')).not.toContain('saved')
  })

  it('a background task started before the reload goes on, and its result is recorded in the database that came back', async () => {
    const { app, forks, dir } = await ownerApp(['database', 'dogu', 'console', 'chatluna', 'tools'], { database: 'sqlite' })
    const finishes: ((text: string) => void)[] = []
    app.plugin(slowTools(finishes))
    await until(app, () => !!app.tools.get('slow'), 'the slow tool')
    const [started] = await app.tools.execute([{ id: 'c1', name: 'slow' }], { session: alice })
    expect(started.status).toBe('background')
    const id = started.taskId!
    forks.database!.dispose()
    await until(app, () => !app.get('database'), 'the database going')
    app.plugin(SQLiteDriver, { path: join(dir, 'koishi.db') })
    await until(app, () => !!app.get('database'), 'the database coming back')
    expect(app.background.get(id)?.status).toBe('running')
    finishes[0]('done at last')
    const settled = await app.background.wait(id, { timeout: 10_000 })
    expect(settled).toMatchObject({ status: 'succeeded', result: { content: 'done at last' } })
    await app.background.engine.refresh()
    const [row] = await app.database.get(TASK_TABLE as never, { id } as never) as { status: string }[]
    expect(row.status).toBe('succeeded')
  })

  it('the app stops while a task runs, the driver before Dogu: nothing fails writing to the stopped driver, and the next start reads the task interrupted', async () => {
    const { app, dir, forks } = await ownerApp(['database', 'dogu', 'tools'], { database: 'sqlite' })
    app.plugin(slowTools())
    await until(app, () => !!app.tools.get('slow'), 'the slow tool')
    const [started] = await app.tools.execute([{ id: 'c1', name: 'slow' }], { session: alice })
    await app.background.engine.refresh()
    // The mock bot cannot outlive the bots service, which the app's stop takes first.
    forks.mock!.dispose()
    await app.stop()
    // The task's end could not reach the stopped driver: not reported as a failure (the
    // guard fails the test on any warning), and the next start reads it interrupted.
    const next = new App()
    // The same base directory: the same instance (its default instanceId), started again.
    next.baseDir = dir
    // The task a restart cut off is announced (the audit log's second record, a notice): this app has no bot to post it.
    guardLogs(next).expect(/no bot of platform mock to tell mock:room that task task_\w+ ended/)
    cleanups.push(() => next.stop())
    next.plugin(SQLiteDriver, { path: join(dir, 'koishi.db') })
    next.plugin(Dogu, { permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await next.start()
    await until(next, () => !!next.get('database') && !!next.get('background'), 'the next start')
    await until(next, () => next.background.get(started.taskId!)?.status === 'interrupted', 'the task read as interrupted')
  })
})
