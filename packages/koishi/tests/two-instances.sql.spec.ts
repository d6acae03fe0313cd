// The SQL tier (docs/testing.md): two bot processes, each a Koishi app with the MySQL driver
// and koishi-plugin-dogu, on one real MariaDB server that this file starts for itself
// (test-support/mariadb.ts). Where no server can start, the file has one test saying why,
// which passes, or fails with DOGU_REQUIRE_SQL=1 (CI).
//
// Intervals are short so the file is quick (the defaults are 5 s polls and a 30 s lease):
// grants are polled every 250 ms, tasks every 200 ms, and a running task's lease is 1.5 s
// (the schema's minimum is 1 s), renewed every 500 ms; the restart test takes a lease longer
// than itself instead. Waits poll for what a user would see and fail after 20 s (WAIT_MS);
// nothing asserts how long anything took.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Grant, ToolResult } from '@dogu/core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type MariaDBDatabase, runMariaDB, sqlTierDidNotRun } from '../../../test-support/mariadb'
import { bundleInstance, Instance, killAndCheck, waitFor } from './sql-instance/instance-process'
import type { InstanceConfig } from './sql-instance/protocol'

const fileStarted = performance.now()
const TIMING = { grantSyncMs: 250, taskSyncMs: 200, leaseMs: 1_500, slowTimeoutMs: 300 }
/** The restart test's lease: longer than the test, so only a restarted instance ends its own tasks. */
const LONG_LEASE_MS = 600_000
const started = await runMariaDB()

if ('reason' in started) {
  sqlTierDidNotRun(started.reason)
} else {
  const server = started.server
  let dir: string
  let entry: string
  /** Every instance started, running or not: killed after each test. */
  const instances: Instance[] = []
  const measured: { grant?: number; revoke?: number; interrupted?: number; restored: number[]; instanceStartMs: number[]; patchedDriver?: boolean } = { restored: [], instanceStartMs: [] }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-sql-'))
    entry = await bundleInstance(dir)
  })

  afterEach(async () => {
    await killAndCheck(instances)
  })

  afterAll(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.kill()))
    await server.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
    const s = (ms?: number) => ms === undefined ? 'not measured' : `${(ms / 1000).toFixed(2)} s`
    const ms = (value?: number) => value === undefined ? 'not measured' : `${Math.round(value)} ms`
    const most = (values: number[]) => values.length ? Math.max(...values) : undefined
    console.log(`sql tier: two-instances.sql.spec.ts took ${s(performance.now() - fileStarted)} (mariadbd ${server.version} up in ${s(server.startupMs)}, an instance ready in ${ms(most(measured.instanceStartMs))} at most, and its grants back ${ms(most(measured.restored))} after that); `
      + `grant A→B ${ms(measured.grant)}, revoke A→B ${ms(measured.revoke)} (grant poll ${TIMING.grantSyncMs} ms); `
      + `task interrupted on B ${s(measured.interrupted)} after A's SIGKILL (lease ${TIMING.leaseMs} ms, task poll ${TIMING.taskSyncMs} ms)`
      + (measured.patchedDriver ? '; @minatojs/driver-mysql lacked getIndexes and was patched (sql-instance/instance.ts)' : ''))
  })

  /** Starts instance `instanceId` on `database`; the same id again is a restart of it. */
  async function start(instanceId: string, database: MariaDBDatabase, timing: Partial<typeof TIMING> = {}): Promise<Instance> {
    const config: InstanceConfig = { instanceId, dir: join(dir, `${database.database}-${instanceId}`), mysql: database, readyTimeoutMs: 20_000, ...TIMING, ...timing }
    const instance = await Instance.start(entry, config, (spawned) => instances.push(spawned))
    measured.instanceStartMs.push(instance.startupMs)
    measured.patchedDriver ||= instance.patchedDriver
    return instance
  }

  /**
   * A on a new database, then B. One at a time: minato's MySQL driver creates its tables and
   * SQL functions without checking again, so two processes starting together on an empty
   * database race (ER_TABLE_EXISTS_ERROR, ER_SP_ALREADY_EXISTS), and the loser's tables fail.
   */
  async function pair(database: MariaDBDatabase, timing: Partial<typeof TIMING> = {}) {
    const a = await start('a', database, timing)
    const b = await start('b', database, timing)
    return { a, b }
  }

  const QUESTION = /^\[1\] 工具 save 请求批准：save\(note=/

  /** The question `call` makes the instance post; fails when the call ends without one. */
  async function question(instance: Instance, call: Promise<ToolResult>) {
    return Promise.race([
      instance.nextSent(),
      call.then((result) => { throw new Error(`instance ${instance.name} did not ask: the call ended ${result.status}: ${result.content}`) }),
    ])
  }

  /** Alice asks for `save` on `instance`; she answers "always" in chat. Resolves with her grant. */
  async function grantAlways(instance: Instance): Promise<Grant> {
    const call = instance.call('save', 'alice', { note: 'first' })
    expect(await question(instance, call)).toEqual({ channelId: 'room', text: expect.stringMatching(QUESTION) })
    expect(await instance.say('alice', 'a')).toEqual(['已允许 [1] save(note=first)（总是）。'])
    expect(await call).toMatchObject({ status: 'ok', content: 'saved first' })
    const grants = await instance.grants()
    expect(grants).toEqual([expect.objectContaining({ scope: 'always', subject: { userId: 'alice', platform: 'mock' }, permission: 'tool:save', tool: 'save' })])
    return grants[0]
  }

  const has = (grants: Grant[], id: string) => grants.some((grant) => grant.id === id)

  /** Waits for a restarted instance to list `grant`; measures how long after `ready` that was. */
  async function restored(instance: Instance, grant: Grant) {
    const ready = performance.now()
    await waitFor(`the restarted ${instance.name} to list the grant`, async () => has(await instance.grants(), grant.id))
    measured.restored.push(performance.now() - ready)
  }

  // Two or three instances start per test, on a 2-core machine shared with other work.
  describe(`MariaDB ${server.version.split('-')[0]}: two Koishi instances on one server`, { timeout: 120_000 }, () => {
    it('an always grant answered on A holds on B within the poll interval; a revoke on A stops it on B', async () => {
      const database = await server.createDatabase('dogu_grants')
      const { a, b } = await pair(database)
      const grant = await grantAlways(a)
      const granted = performance.now()
      // B reads the grant table every grantSyncMs: it holds there from its next read on.
      await waitFor('B to list the grant', async () => has(await b.grants(), grant.id))
      measured.grant = performance.now() - granted
      expect(await b.call('save', 'alice', { note: 'second' })).toMatchObject({ status: 'ok', content: 'saved second' })
      // B ran it without asking anyone.
      expect(b.sent).toEqual([])

      expect(await a.revoke(grant.id)).toBe(true)
      const revoked = performance.now()
      await waitFor('B to drop the grant', async () => !has(await b.grants(), grant.id))
      measured.revoke = performance.now() - revoked
      // B asks again; alice says no.
      const call = b.call('save', 'alice', { note: 'third' })
      expect(await question(b, call)).toEqual({ channelId: 'room', text: expect.stringMatching(QUESTION) })
      expect(await b.say('alice', 'n')).toEqual(['已拒绝 [1] save(note=third)。'])
      expect(await call).toMatchObject({ status: 'denied' })
      expect(await a.grants()).toEqual([])
    })

    it('a task started on A is seen on B; when A is SIGKILLed, B reports it interrupted once A\'s lease lapses', async () => {
      const database = await server.createDatabase('dogu_tasks')
      const { a, b } = await pair(database)
      const handed = await a.call('slow', 'alice')
      expect(handed).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
      const id = handed.taskId!
      const seen = await waitFor('B to list A\'s task', async () => (await b.tasks()).find((task) => task.id === id))
      expect(seen).toMatchObject({ id, tool: 'slow', status: 'running', session: { id: 'mock:room', userId: 'alice' } })
      expect((await b.call('task_status', 'alice', { id })).content).toMatch(new RegExp(`^Task ${id} \\(slow\\) is still running \\(started \\d+s ago\\)`))

      // While A lives, its heartbeat renews the lease: past the first lease, B still sees it running.
      const leaseUntil = async () => Number((await server.query(`SELECT leaseUntil FROM dogu_tasks.dogu_task WHERE id = '${id}'`)).trim())
      const firstLease = await leaseUntil()
      await waitFor('A to renew its lease, and the first lease to be over', async () => await leaseUntil() > firstLease && Date.now() > firstLease + 2 * TIMING.taskSyncMs)
      expect((await b.tasks()).find((task) => task.id === id)).toMatchObject({ status: 'running' })

      await a.kill()
      const killed = performance.now()
      const interrupted = await waitFor('B to report A\'s task interrupted', async () => (await b.tasks()).find((task) => task.id === id && task.status !== 'running'))
      measured.interrupted = performance.now() - killed
      expect(interrupted).toMatchObject({ id, status: 'interrupted', settledAt: expect.any(Number) })
      expect(interrupted.result).toBeUndefined()
      expect((await b.call('task_status', 'alice', { id })).content).toBe(`Task ${id} (slow) was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`)
    })

    it('restarting either instance loses nothing: grants and settled tasks come back from the database', async () => {
      const database = await server.createDatabase('dogu_restarts')
      // A lease far longer than a restart, as the 30 s default is: no instance declares the
      // other's task interrupted meanwhile, so what ends a cut-off task here is the restarted
      // instance itself, at once. (With a lease as short as a restart both may declare it,
      // and the later one warns that the table already holds it interrupted.)
      const timing = { leaseMs: LONG_LEASE_MS }
      const { a, b } = await pair(database, timing)
      const grant = await grantAlways(a)
      // A task that ends: A posts its notice; B learns of it from the table, and posts nothing.
      const done = await a.call('slow', 'alice')
      expect(done).toMatchObject({ status: 'background' })
      expect(await a.finish(done.id, 'the answer')).toBe(true)
      expect(await a.nextSent()).toEqual({ channelId: 'room', text: expect.stringContaining(done.taskId!) })
      const succeeded = expect.objectContaining({ id: done.taskId, status: 'succeeded', result: expect.objectContaining({ content: 'the answer' }) })
      await waitFor('B to list the settled task and the grant', async () => {
        const tasks = await b.tasks()
        return tasks.some((task) => task.id === done.taskId && task.status === 'succeeded') && has(await b.grants(), grant.id)
      })
      expect(b.sent).toEqual([])

      // B stops with a task of its own running, and starts again: it reads everything back
      // from the database, and its task, cut off by the stop, is interrupted, here and on A.
      const stopped = await b.call('slow', 'alice')
      expect(stopped).toMatchObject({ status: 'background' })
      await waitFor('A to list B\'s running task', async () => (await a.tasks()).some((task) => task.id === stopped.taskId && task.status === 'running'))
      await b.stop()
      const b2 = await start('b', database, timing)
      // The database appears after Dogu's services: the grants come when the store moves onto it.
      await restored(b2, grant)
      expect(await b2.grants()).toEqual([grant])
      const cutOnB = expect.objectContaining({ id: stopped.taskId, status: 'interrupted' })
      await waitFor('the restarted B to list its task interrupted', async () => (await b2.tasks()).length === 2)
      // In the order they started, as ctx.background.list() promises (and dogu.tasks shows).
      expect(await b2.tasks()).toEqual([succeeded, cutOnB])
      await waitFor('A to list B\'s task interrupted', async () => (await a.tasks()).some((task) => task.id === stopped.taskId && task.status === 'interrupted'))
      expect(await b2.call('save', 'alice', { note: 'after B restarted' })).toMatchObject({ status: 'ok', content: 'saved after B restarted' })

      // A crashes with a task running, and starts again: the same instance interrupts its own
      // task at once (no lease to wait for); the rest is as it was.
      const cut = await a.call('slow', 'alice')
      expect(cut).toMatchObject({ status: 'background' })
      // Its record is in the table once B sees it running.
      await waitFor('B to list A\'s running task', async () => (await b2.tasks()).some((task) => task.id === cut.taskId && task.status === 'running'))
      await a.kill()
      const a2 = await start('a', database, timing)
      await restored(a2, grant)
      expect(await a2.grants()).toEqual([grant])
      await waitFor('the restarted A to list the tasks', async () => (await a2.tasks()).length === 3)
      expect(await a2.tasks()).toEqual([succeeded, cutOnB, expect.objectContaining({ id: cut.taskId, status: 'interrupted' })])
      expect((await a2.call('task_status', 'alice', { id: done.taskId })).content).toContain('the answer')
      expect(await a2.call('save', 'alice', { note: 'after A restarted' })).toMatchObject({ status: 'ok', content: 'saved after A restarted' })
      // Each restarted instance tells the channel of its own task the restart cut off, once; nothing else.
      const cutOff = (taskId: string) => ({ channelId: 'room', text: `后台任务 ${taskId}（slow）已中断。` })
      // Told once the restarted bot is online: a2's notice may come after its first calls.
      await waitFor('the restarted A to tell the channel of its task', async () => a2.sent.length > 0)
      expect(b2.sent).toEqual([cutOff(stopped.taskId!)])
      expect(a2.sent).toEqual([cutOff(cut.taskId!)])

      // The restarted pair still shares: a revoke on B reaches A.
      expect(await b2.revoke(grant.id)).toBe(true)
      await waitFor('the restarted A to drop the grant', async () => !has(await a2.grants(), grant.id))
      await waitFor('the restarted B to see the interrupted task', async () => (await b2.tasks()).some((task) => task.id === cut.taskId && task.status === 'interrupted'))
    })
  })
}
