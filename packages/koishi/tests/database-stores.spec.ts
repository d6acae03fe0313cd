import { access, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DatabaseTaskStore, defineTool, GRANT_TABLE, type MinatoDatabase, TASK_TABLE, type ToolCall, type ToolResult } from '@dogu/core'
import { format } from 'node:util'
import MemoryDatabase from '@koishijs/plugin-database-memory'
import SQLite from '@minatojs/driver-sqlite'
import { App, type Context, Logger } from 'koishi'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as Dogu from '../src'
import { guardLogs, logGuard } from '../../../test-support/log-guard'
import { koishiApp as harnessApp, type KoishiAppOptions, settle } from './koishi-app'

const alice = { id: 'discord:9', platform: 'discord', channelId: '9', userId: 'alice' }
// Polls and heartbeats are driven by hand (refresh) unless a test fakes the timers.
const quiet = { permissions: { syncInterval: 3_600_000 }, background: { syncInterval: 3_600_000, leaseMs: 30_000 } }

/** The warnings and notices (a migration) Dogu logs on Koishi's `dogu` logger. */
const warnings: string[] = []
const notices: string[] = []
const target = {
  colors: 0,
  levels: { base: 3 },
  record: (record: { name: string; type: string; content: string }) => {
    if (record.name !== 'dogu') return
    if (record.type === 'warn') warnings.push(record.content)
    if (record.type === 'info') notices.push(record.content)
  },
}
beforeEach(() => {
  warnings.length = 0
  notices.length = 0
  Logger.targets.push(target as never)
})
afterEach(() => {
  Logger.targets.splice(Logger.targets.indexOf(target as never), 1)
})

/** Second apps, on the first app's database: stopped after each test, before koishi-app's cleanup. */
const others: App[] = []
afterEach(async () => {
  vi.useRealTimers()
  for (const app of others.splice(0).reverse()) {
    const engine = app.get('background')?.engine
    await app.stop()
    await engine?.dispose()
  }
})

const db = (app: App) => app.get('database') as unknown as MinatoDatabase

/**
 * The harness's app with Koishi's base directory in its temp dir: Dogu loaded again without
 * store paths (a restart) keeps its files there. Under the cwd's data/dogu/ it would read a
 * playground's audit.jsonl, and the database's migration would rename it (issue 48).
 */
async function koishiApp(options: KoishiAppOptions) {
  const setup = await harnessApp(options)
  setup.app.baseDir = setup.dir
  return setup
}

/** A write tool (asks) and a slow read tool (goes to the background after 1 s), in a plugin of their own. */
function tools(app: App) {
  const slow: { call: ToolCall; finish: (text: string) => void }[] = []
  app.plugin({
    name: 'test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({ name: 'save', description: 'Save', traits: { effect: 'write' }, run: () => 'saved' }))
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'Slow',
        traits: { effect: 'read', timeout: 1_000 },
        run: (_, call) => new Promise<string>((resolve) => { slow.push({ call, finish: resolve }) }),
      }))
    },
  })
  return slow
}

/** A Koishi app on the in-memory database with Dogu and the test tools. */
async function first(dogu: Dogu.Config = {}) {
  const setup = await koishiApp({ database: true, dogu: { ...dogu, permissions: { ...quiet.permissions, ...dogu.permissions }, background: { ...quiet.background, instanceId: 'a', ...dogu.background } } })
  const slow = tools(setup.app)
  await settle(setup.app)
  return { ...setup, slow }
}

/** Another Koishi app on the same database object: a second instance of the bot. */
async function second(database: MinatoDatabase, dir: string, instanceId = 'b') {
  const app = new App()
  app.baseDir = dir
  others.push(app)
  // Its errors and warnings fail the test too, unless the test declares them.
  guardLogs(app)
  app.set('database', database)
  await app.start()
  const dogu = app.plugin(Dogu, {
    approvals: { enabled: false },
    notices: { enabled: false },
    permissions: { ...quiet.permissions, storePath: join(dir, 'b-permissions.json') },
    background: { ...quiet.background, instanceId, storePath: join(dir, 'b-background.json') },
    audit: { storePath: join(dir, 'b-audit.jsonl') },
  })
  const slow = tools(app)
  await settle(app)
  return { app, dogu, slow }
}

/** Alice calls `save`: `ok` when a grant covers her, else denied (no asker is loaded). */
async function save(app: App): Promise<ToolResult['status']> {
  const [result] = await app.tools.execute([{ id: 'c1', name: 'save' }], { session: alice })
  return result.status
}

/** Alice answers `save`'s question "always" once. */
async function grantAlways(app: App) {
  const fork = app.plugin({
    name: 'always-asker',
    apply(ctx: Context) {
      ctx.permissions.asker(() => ({ decision: 'allow', scope: 'always', by: { id: 'alice', platform: 'discord' } }))
    },
  })
  await settle(app)
  expect(await save(app)).toBe('ok')
  fork.dispose()
  const [grant] = app.permissions.grants()
  // A refresh first waits for this instance's own writes: the row is in the table after it.
  await app.permissions.engine.refreshGrants()
  return grant
}

/** Starts `slow` and returns its background task id, with fake timers for the 1 s timeout. */
async function background(app: App): Promise<string> {
  const pending = app.tools.execute([{ id: 'c1', name: 'slow' }], { session: alice })
  await vi.advanceTimersByTimeAsync(1_000)
  const [result] = await pending
  expect(result.status).toBe('background')
  return result.taskId!
}

/** JSON.parse's message for `text`, which differs between Node versions. */
function parseError(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${text} parses`)
}

const exists = (path: string) => access(path).then(() => true, () => false)

describe('grants and background tasks in Koishi\'s database', () => {
  it('keeps always grants in the dogu_grant table, not the file; a restart of the plugin keeps them', async () => {
    const { app, dir, dogu } = await first()
    const grant = await grantAlways(app)
    const rows = await db(app).get(GRANT_TABLE, {})
    expect(rows).toEqual([expect.objectContaining({ id: grant.id, permission: 'tool:save' })])
    expect(JSON.parse(rows[0].record as string)).toEqual({ ...grant, subject: { ...grant.subject } })
    expect(await exists(join(dir, 'permissions.json'))).toBe(false)
    dogu!.dispose()
    const again = app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet })
    await settle(app)
    expect(await save(app)).toBe('ok')
    expect(app.permissions.grants().map((g) => g.id)).toEqual([grant.id])
    again.dispose()
  })

  it('a task running when the plugin stops comes back interrupted; its record is in dogu_task', async () => {
    const { app, dogu, slow } = await first()
    vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const id = await background(app)
    await app.background.engine.dispose().then(() => {}, () => {})
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    dogu!.dispose()
    const [row] = await db(app).get(TASK_TABLE, { id })
    expect(row).toMatchObject({ status: 'interrupted', owner: 'a', sessionId: 'discord:9' })
    expect(JSON.parse(row.record as string)).toMatchObject({ id, tool: 'slow', status: 'interrupted', settledAt: 1_001_000 })
    app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, background: { ...quiet.background, instanceId: 'a' } })
    await settle(app)
    expect(app.background.get(id)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    expect(app.background.list().map((task) => task.id)).toEqual([id])
  })

  it('after a crash, the same instance interrupts its own running tasks at once; another instance waits for the lease', async () => {
    const { app } = await koishiApp({ database: true, dogu: false })
    const record = (id: string) => ({ id, tool: 'slow', callId: 'c1', session: alice, status: 'running', startedAt: Date.now() - 5_000 })
    // Rows a crashed process left: its own (instance "a") and one of a live instance "z".
    db(app).extend(TASK_TABLE, { id: 'string', status: 'string', owner: 'string', leaseUntil: 'double', sessionId: 'string', record: 'text', updatedAt: 'double' }, { primary: 'id' })
    await db(app).upsert(TASK_TABLE, ['task_mine', 'task_theirs'].map((id, i) => ({
      id, status: 'running', owner: i ? 'z' : 'a', leaseUntil: Date.now() + 30_000, sessionId: alice.id, record: JSON.stringify(record(id)), updatedAt: 0,
    })))
    // A restart of instance "a": the plugin is loaded again.
    const fork = app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, background: { ...quiet.background, instanceId: 'a' } })
    await settle(app)
    expect(app.background.get('task_mine')?.status).toBe('interrupted')
    expect(app.background.get('task_theirs')?.status).toBe('running')
    await app.background.engine.dispose()
    fork.dispose()
    expect((await db(app).get(TASK_TABLE, { id: 'task_theirs' }))[0]).toMatchObject({ status: 'running', owner: 'z' })
  })

  describe('malformed rows allow nothing, are reported and kept', () => {
    const grant = (id: string, extra: object = {}) => ({ id, scope: 'always', subject: { userId: 'alice', platform: 'discord' }, permission: 'tool:save', tool: 'save', by: 'alice', createdAt: 1, ...extra })
    const key = JSON.stringify(['u', 'discord', 'alice', 'tool:save', null])

    it('grant rows', async () => {
      const { app, dir } = await koishiApp({ database: true, dogu: false })
      const rows = [
        { id: 'g_json', key, permission: 'tool:save', record: '{"id": "g_json", ', updatedAt: 0 },
        { id: 'g_renamed', key, permission: 'tool:save', record: JSON.stringify(grant('g_other')), updatedAt: 0 },
        { id: 'g_session', key, permission: 'tool:save', record: JSON.stringify(grant('g_session', { scope: 'session' })), updatedAt: 0 },
        { id: 'g_nobody', key, permission: 'tool:save', record: JSON.stringify(grant('g_nobody', { subject: {} })), updatedAt: 0 },
        // The key column says alice, the record says someone else: not trusted either way.
        { id: 'g_key', key, permission: 'tool:save', record: JSON.stringify(grant('g_key', { subject: { userId: 'mallory', platform: 'discord' } })), updatedAt: 0 },
      ]
      db(app).extend(GRANT_TABLE, { id: 'string', key: 'text', permission: 'string', record: 'text', updatedAt: 'double' }, { primary: 'id' })
      await db(app).upsert(GRANT_TABLE, rows)
      logGuard.expect('the grant table dogu_grant has malformed rows')
      app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, permissions: { ...quiet.permissions, storePath: join(dir, 'p.json') } })
      tools(app)
      await settle(app)
      await app.permissions.engine.ready
      expect(await save(app)).toBe('denied')
      expect(app.permissions.grants()).toEqual([])
      expect(warnings).toEqual([
        'the grant table dogu_grant has malformed rows, kept in the table and not used: '
        + `row "g_json" is not valid JSON (${parseError('{"id": "g_json", ')}); `
        + 'row "g_renamed" holds grant "g_other" under another id; '
        + 'row "g_session" holds a "session" grant; only "always" grants are stored; '
        + 'row "g_nobody" is not a well-formed grant; '
        + 'row "g_key" has a key column that does not match its record',
      ])
      expect(app.permissions.engine.storeProblem?.message).toBe(warnings[0])
      // Reported once, not on every poll.
      await app.permissions.engine.refreshGrants()
      expect(warnings).toHaveLength(1)
      // A grant given and revoked for the same key leaves the malformed rows where they are…
      await grantAlways(app)
      app.permissions.revoke(app.permissions.grants()[0].id)
      await app.permissions.engine.refreshGrants()
      // …except those of its own key: revoking removes every row of that key (see docs).
      expect((await db(app).get(GRANT_TABLE, {})).map((row) => row.id)).toEqual([])
    })

    it('task rows', async () => {
      const { app, dir } = await koishiApp({ database: true, dogu: false })
      // Settled a second ago: older ones would be evicted by the 7-day retention.
      const task = { id: 'task_ok', tool: 'slow', callId: 'c1', session: alice, status: 'succeeded', startedAt: Date.now() - 2_000, settledAt: Date.now() - 1_000, result: { id: 'c1', name: 'slow', status: 'ok', content: 'done', durationMs: 1 } }
      db(app).extend(TASK_TABLE, { id: 'string', status: 'string', owner: 'string', leaseUntil: 'double', sessionId: 'string', record: 'text', updatedAt: 'double' }, { primary: 'id' })
      const row = (id: string, record: string, status = 'succeeded') => ({ id, status, owner: 'z', leaseUntil: 0, sessionId: alice.id, record, updatedAt: 0 })
      await db(app).upsert(TASK_TABLE, [
        row('task_ok', JSON.stringify(task)),
        row('task_json', 'not json'),
        row('task_status', JSON.stringify({ ...task, id: 'task_status', status: 'running' })),
        row('task_shape', JSON.stringify({ ...task, id: 'task_shape', session: 'discord:9' })),
      ])
      logGuard.expect(/the task table dogu_task has a malformed row "task_(json|status|shape)"/)
      app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, background: { ...quiet.background, instanceId: 'a', storePath: join(dir, 'b.json') } })
      await settle(app)
      expect(app.background.list().map((t) => t.id)).toEqual(['task_ok'])
      expect(warnings).toEqual([
        `the task table dogu_task has a malformed row "task_json": it is not valid JSON (${parseError('not json')}); it is kept in the table and not used`,
        'the task table dogu_task has a malformed row "task_status": it has status column "succeeded" but its record says "running"; it is kept in the table and not used',
        'the task table dogu_task has a malformed row "task_shape": it is not a well-formed task record; it is kept in the table and not used',
      ])
      await app.background.engine.refresh()
      expect(warnings).toHaveLength(3)
      expect((await db(app).get(TASK_TABLE, {})).map((r) => r.id).sort()).toEqual(['task_json', 'task_ok', 'task_shape', 'task_status'])
    })
  })

  it('moves the JSON files into the tables once and keeps them as *.migrated.json', async () => {
    const { app, dir } = await koishiApp({ database: true, dogu: false })
    const grant = { id: 'grant_1', scope: 'always', subject: { userId: 'alice', platform: 'discord' }, permission: 'tool:save', tool: 'save', by: 'alice', createdAt: 5 }
    const done = { id: 'task_done', tool: 'slow', callId: 'c1', session: alice, status: 'succeeded', startedAt: Date.now() - 3_000, settledAt: Date.now() - 2_000, result: { id: 'c1', name: 'slow', status: 'ok', content: 'done', durationMs: 1 } }
    const cut = { id: 'task_cut', tool: 'slow', callId: 'c2', session: alice, status: 'running', startedAt: Date.now() - 1_000 }
    const grantsFile = JSON.stringify({ version: 1, grants: [grant] })
    const tasksFile = JSON.stringify({ version: 1, tasks: [done, cut] })
    await writeFile(join(dir, 'permissions.json'), grantsFile)
    await writeFile(join(dir, 'background.json'), tasksFile)
    const config = { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, permissions: { ...quiet.permissions, storePath: join(dir, 'permissions.json') }, background: { ...quiet.background, instanceId: 'a', storePath: join(dir, 'background.json') } }
    let fork = app.plugin(Dogu, config)
    tools(app)
    await settle(app)
    expect(await save(app)).toBe('ok')
    expect(app.background.get('task_done')).toEqual(done)
    expect(app.background.get('task_cut')).toMatchObject({ status: 'interrupted', settledAt: expect.any(Number) })
    expect(await exists(join(dir, 'permissions.json'))).toBe(false)
    expect(await exists(join(dir, 'background.json'))).toBe(false)
    expect(await readFile(join(dir, 'permissions.migrated.json'), 'utf8')).toBe(grantsFile)
    expect(await readFile(join(dir, 'background.migrated.json'), 'utf8')).toBe(tasksFile)
    // The two stores load side by side: either may report first. A notice, not a warning.
    expect(warnings).toEqual([])
    expect([...notices].sort()).toEqual([
      `moved 1 grant(s) from ${join(dir, 'permissions.json')} into the table dogu_grant; the file is kept as ${join(dir, 'permissions.migrated.json')}`,
      `moved 2 background task record(s) from ${join(dir, 'background.json')} into the table dogu_task; the file is kept as ${join(dir, 'background.migrated.json')}`,
    ])
    // Once: a revoked grant stays revoked across a restart; the backup is not read again.
    expect(app.permissions.revoke('grant_1')).toBe(true)
    await app.permissions.engine.refreshGrants()
    await app.background.engine.dispose()
    fork.dispose()
    fork = app.plugin(Dogu, config)
    await settle(app)
    expect(await save(app)).toBe('denied')
    expect(app.background.list().map((task) => task.id)).toEqual(['task_done', 'task_cut'])
    expect(notices).toHaveLength(2)
  })

  it('moves to the database when a driver is loaded after Dogu, and back to the files when it goes, under the same engines', async () => {
    const { app, dir } = await koishiApp({ dogu: quiet })
    tools(app)
    await settle(app)
    const engines = { permissions: app.permissions.engine, background: app.background.engine }
    const memory = app.plugin(MemoryDatabase as never)
    await settle(app)
    // The services were not restarted: the same engines, now on the tables.
    expect(app.permissions.engine).toBe(engines.permissions)
    expect(app.background.engine).toBe(engines.background)
    await grantAlways(app)
    expect(await db(app).get(GRANT_TABLE, {})).toHaveLength(1)
    expect(await exists(join(dir, 'permissions.json'))).toBe(false)
    memory.dispose()
    await settle(app)
    await app.permissions.engine.refreshGrants()
    // The file store again: empty, since the grant lives in the (gone) table.
    expect(app.get('database')).toBeUndefined()
    expect(app.permissions.engine).toBe(engines.permissions)
    expect(app.permissions.grants()).toEqual([])
    expect(await save(app)).toBe('denied')
  })

  describe('two instances on one database', () => {
    it('a grant given on A is used on B, and a revocation on B stops A, within one refresh', async () => {
      const a = await first()
      const b = await second(db(a.app), a.dir)
      expect(await save(b.app)).toBe('denied')
      const grant = await grantAlways(a.app)
      // authorize() is synchronous: B knows of the grant at its next poll (here, by hand).
      expect(await save(b.app)).toBe('denied')
      await b.app.permissions.engine.refreshGrants()
      expect(await save(b.app)).toBe('ok')
      expect(b.app.permissions.revoke(grant.id)).toBe(true)
      expect(await save(b.app)).toBe('denied')
      await a.app.permissions.engine.refreshGrants()
      expect(await save(a.app)).toBe('denied')
      expect(await db(a.app).get(GRANT_TABLE, {})).toEqual([])
    })

    it('polls the grant table every syncInterval', async () => {
      const a = await first()
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
      const b = await second(db(a.app), a.dir)
      b.dogu.update({ ...b.dogu.config, permissions: { ...b.dogu.config.permissions, syncInterval: 5_000 } })
      await settle(b.app)
      await grantAlways(a.app)
      const refresh = vi.spyOn(b.app.permissions.engine, 'refreshGrants')
      await vi.advanceTimersByTimeAsync(4_999)
      expect(refresh).not.toHaveBeenCalled()
      expect(await save(b.app)).toBe('denied')
      await vi.advanceTimersByTimeAsync(1)
      expect(refresh).toHaveBeenCalledTimes(1)
      await refresh.mock.results[0].value
      expect(await save(b.app)).toBe('ok')
    })

    it('B reads A\'s task with task_status, running, then settled', async () => {
      const a = await first()
      const b = await second(db(a.app), a.dir)
      vi.useFakeTimers({ now: 2_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
      const id = await background(a.app)
      expect(b.app.background.get(id)).toBeUndefined()
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)).toMatchObject({ id, tool: 'slow', status: 'running', startedAt: 2_000_000 })
      const status = async () => (await b.app.tools.execute([{ id: 's1', name: 'task_status', arguments: { id } }], { session: alice }))[0]
      expect((await status()).content).toContain(`Task ${id} (slow) is still running (started 1s ago)`)
      a.slow[0].finish('the answer')
      await vi.advanceTimersByTimeAsync(0)
      await a.app.background.engine.refresh()
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)).toMatchObject({ status: 'succeeded', result: expect.objectContaining({ content: 'the answer' }) })
      expect((await status()).content).toContain('the answer')
    })

    it('A stops renewing its lease (it died): after leaseMs B reports the task interrupted, and A can no longer settle it', async () => {
      const a = await first()
      const b = await second(db(a.app), a.dir)
      vi.useFakeTimers({ now: 3_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
      const id = await background(a.app)
      await b.app.background.engine.refresh()
      // Just inside the lease (taken at 3_001_000 for 30 s): still A's, still running.
      vi.setSystemTime(3_031_000)
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)?.status).toBe('running')
      vi.setSystemTime(3_031_001)
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)).toMatchObject({ status: 'interrupted', settledAt: 3_031_001 })
      expect((await db(b.app).get(TASK_TABLE, { id }))[0]).toMatchObject({ status: 'interrupted', owner: 'a' })
      // A was only paused: its late result does not overwrite the interruption.
      logGuard.expect(`background task ${id} was not recorded succeeded here: the table holds it as interrupted (owner a)`)
      a.slow[0].finish('too late')
      await vi.advanceTimersByTimeAsync(0)
      await a.app.background.engine.dispose()
      expect((await db(b.app).get(TASK_TABLE, { id }))[0]).toMatchObject({ status: 'interrupted' })
      expect(warnings).toContain(`background task ${id} was not recorded succeeded here: the table holds it as interrupted (owner a)`)
    })

    it('a stale running record of a task the table has as settled (a file store\'s, from before the database came) changes nothing, and warns of nothing', async () => {
      const a = await first()
      vi.useFakeTimers({ now: 2_500_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
      const id = await background(a.app)
      a.slow[0].finish('the answer')
      await vi.advanceTimersByTimeAsync(0)
      await a.app.background.engine.refresh()
      const settled = a.app.background.get(id)!
      expect(settled.status).toBe('succeeded')
      // What a restarted instance does with such a record: declare it interrupted.
      const store = new DatabaseTaskStore({ database: db(a.app), instanceId: 'a', logger: { debug() {}, warn: (text: string, ...args: unknown[]) => warnings.push(format(text, ...args)) } })
      await store.put(Object.freeze({ ...settled, status: 'interrupted', settledAt: Date.now(), result: undefined }))
      await store.flush()
      expect((await db(a.app).get(TASK_TABLE, { id }))[0]).toMatchObject({ status: 'succeeded' })
      expect(warnings).toEqual([])
    })

    it('A\'s heartbeat renews the lease every leaseMs / 3, so a live task is never interrupted', async () => {
      const a0 = await koishiApp({ database: true, dogu: false })
      vi.useFakeTimers({ now: 4_000_000, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
      a0.app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, ...quiet, background: { ...quiet.background, instanceId: 'a', storePath: join(a0.dir, 'a.json') } })
      const slow = tools(a0.app)
      await settle(a0.app)
      const b = await second(db(a0.app), a0.dir)
      const id = await background(a0.app)
      await vi.advanceTimersByTimeAsync(60_000)
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)?.status).toBe('running')
      // The heartbeat runs every 10 s from 4_000_000: its last renewal, at 4_060_000, leased 30 s more.
      expect((await db(b.app).get(TASK_TABLE, { id }))[0].leaseUntil).toBe(4_090_000)
      // A stops gracefully: it records the task interrupted itself; B sees it at its next refresh.
      await a0.app.background.engine.dispose()
      await b.app.background.engine.refresh()
      expect(b.app.background.get(id)).toMatchObject({ status: 'interrupted', settledAt: 4_061_000 })
      expect(slow[0].call.signal.aborted).toBe(true)
    })
  })
})

describe('on SQLite (@minatojs/driver-sqlite)', () => {
  /** A Koishi app with Dogu on the SQLite file `path`, as instance `instanceId`. */
  async function start(dir: string, instanceId: string) {
    const app = new App()
    app.baseDir = dir
    others.push(app)
    // Its errors and warnings fail the test too, unless the test declares them.
    guardLogs(app)
    app.plugin(SQLite as never, { path: join(dir, 'koishi.db') })
    await app.start()
    app.plugin(Dogu, {
      approvals: { enabled: false },
      notices: { enabled: false },
      permissions: { ...quiet.permissions, storePath: join(dir, `${instanceId}-permissions.json`) },
      background: { ...quiet.background, instanceId, storePath: join(dir, `${instanceId}-background.json`) },
      audit: { storePath: join(dir, `${instanceId}-audit.jsonl`) },
    })
    const slow = tools(app)
    await settle(app)
    return { app, slow }
  }

  it('keeps grants and interrupts a running task across a restart of the app, on one database file', async () => {
    const { dir } = await koishiApp({ dogu: false })
    const one = await start(dir, 'a')
    const grant = await grantAlways(one.app)
    vi.useFakeTimers({ now: 5_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const id = await background(one.app)
    // Waits for the store's writes. Then a crash: nothing is stopped.
    await one.app.background.engine.refresh()
    vi.useRealTimers()
    const two = await start(dir, 'a')
    expect(await save(two.app)).toBe('ok')
    expect(two.app.permissions.grants().map((g) => g.id)).toEqual([grant.id])
    expect(two.app.background.get(id)).toMatchObject({ id, tool: 'slow', status: 'interrupted' })
    expect(warnings).toEqual([])
  })

  it('two apps on one file: a grant on A is used by B; B reads A\'s task; A dies and B reports it interrupted', async () => {
    const { dir } = await koishiApp({ dogu: false })
    const a = await start(dir, 'a')
    const b = await start(dir, 'b')
    await grantAlways(a.app)
    await b.app.permissions.engine.refreshGrants()
    expect(await save(b.app)).toBe('ok')
    vi.useFakeTimers({ now: 6_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const id = await background(a.app)
    await a.app.background.engine.refresh()
    await b.app.background.engine.refresh()
    expect(b.app.background.get(id)).toMatchObject({ status: 'running', startedAt: 6_000_000 })
    vi.setSystemTime(6_031_001)
    await b.app.background.engine.refresh()
    expect(b.app.background.get(id)).toMatchObject({ status: 'interrupted', settledAt: 6_031_001 })
  })
})
