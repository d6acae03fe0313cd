// The SQL tier (docs/testing.md), for questions that outlive their instance (`permissions.durable`,
// issue 46): two bot processes, each a Koishi app with the MySQL driver and koishi-plugin-dogu,
// on one real MariaDB server that this file starts for itself (test-support/mariadb.ts), share
// the dogu_pending table. A question asked on A is answered on B after A died, on B while A
// waits, or on both at once (also after A restarted), and the call runs once. Where no server can start, the file has one test saying why,
// which passes, or fails with DOGU_REQUIRE_SQL=1 (CI). The instances are the ones
// two-instances.sql.spec.ts drives (sql-instance/instance.ts); the `save` tool counts its runs
// (`saves`), and the audit table is read with the server's own client.
//
// Each instance reads the pending table with its grants, every 250 ms here (the default is
// 5 s). The first races keep that poll out (RACE): the instance that answers second then
// always learns of the first answer from its own claim, in the server, and its reply says
// who answered. With the poll on, it may learn it from a poll first: a poll while the `y` is
// read still has the reply say who answered (two tests make that poll land there, through
// the instance's refreshWhileRead), and a poll before the `y` closes its question, the `y`
// being conversation again (no reply); the race with the poll on allows both, and nothing
// else. Waits poll for what a user would see and fail after 20 s (WAIT_MS); nothing asserts
// how long anything took.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolResult } from '@dogu/core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type MariaDBDatabase, runMariaDB, sqlTierDidNotRun } from '../../../test-support/mariadb'
import { bundleInstance, Instance, killAndCheck, waitFor } from './sql-instance/instance-process'
import type { InstanceConfig } from './sql-instance/protocol'

const fileStarted = performance.now()
const TIMING = { grantSyncMs: 250, taskSyncMs: 200, leaseMs: 1_500, slowTimeoutMs: 300 }
/** For the races: no poll of the pending table within a test; an instance reads it as it starts. */
const RACE = { grantSyncMs: 600_000 }
const started = await runMariaDB()

if ('reason' in started) {
  sqlTierDidNotRun(started.reason)
} else {
  const server = started.server
  let dir: string
  let entry: string
  /** Every instance started, running or not: killed after each test. */
  const instances: Instance[] = []
  const measured: { seenOnB: number[]; ranOnB?: number; released?: number; raceWinner?: string; restartedRaceWinner?: string } = { seenOnB: [] }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-sql-durable-'))
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
    console.log(`sql tier: durable-two-instances.sql.spec.ts took ${s(performance.now() - fileStarted)} (mariadbd ${server.version}); `
      + `A's question on B's board ${ms(most(measured.seenOnB))} after A posted it, at most (pending poll ${TIMING.grantSyncMs} ms); `
      + `B's task notice ${ms(measured.ranOnB)} after alice's y on B (A SIGKILLed); `
      + `A's waiting call released ${ms(measured.released)} after B's answer; the race won by ${measured.raceWinner ?? 'not measured'}, after A's restart by ${measured.restartedRaceWinner ?? 'not measured'}`)
  })

  /** Starts instance `instanceId` on `database`; the same id again is a restart of it. */
  async function start(instanceId: string, database: MariaDBDatabase, timing: Partial<typeof TIMING> = {}): Promise<Instance> {
    const config: InstanceConfig = { instanceId, dir: join(dir, `${database.database}-${instanceId}`), mysql: database, readyTimeoutMs: 20_000, durable: true, ...TIMING, ...timing }
    return Instance.start(entry, config, (spawned) => instances.push(spawned))
  }

  /** A, then B: one at a time, as minato's MySQL driver creates its tables without checking again (see two-instances.sql.spec.ts). */
  async function pair(database: MariaDBDatabase) {
    const a = await start('a', database)
    const b = await start('b', database)
    return { a, b }
  }

  const question = (note: string) => new RegExp(`^\\[\\d+\\] 工具 save 请求批准：save\\(note=${note}\\)\\n`)
  const allowed = (note: string) => `已允许 [1] save(note=${note})（仅此一次）。`
  const taken = (note: string) => `请求 [1] save(note=${note}) 已由 mock:alice 回答过了。`
  const RESUMED = /^已允许 \[1\] save\(note=(\w+)\)（仅此一次）。\n它作为后台任务 (task_\w+) 运行，结果会发到这里。$/

  /** Alice calls `save` on `instance`; resolves once its question is posted there, with the call (still waiting). */
  async function ask(instance: Instance, note: string): Promise<{ call: Promise<ToolResult> }> {
    const call = instance.call('save', 'alice', { note })
    const posted = await Promise.race([
      instance.nextSent(),
      call.then((result) => { throw new Error(`instance ${instance.name} did not ask: the call ended ${result.status}: ${result.content}`) }),
    ])
    expect(posted).toEqual({ channelId: 'room', text: expect.stringMatching(question(note)) })
    // Wrapped: an async function's returned promise would be waited for.
    return { call }
  }

  /**
   * Waits until `instance` has the question another instance asked on its board: alice's
   * dogu.pending there lists it, marked as asked on `asker`. Resolves with the listing.
   */
  async function onBoard(instance: Instance, note: string, asker: string): Promise<string> {
    const line = `save：save(note=${note})（由另一个实例 ${asker} 提出；`
    return waitFor(`${instance.name}'s board to list ${asker}'s question (${note})`, async () => {
      const listing = (await instance.say('alice', 'dogu.pending')).join('\n')
      return listing.includes(line) && listing
    })
  }

  /**
   * A asks for `note` and is SIGKILLed once its request is in dogu_pending (the call's command
   * dies with it: its reply never comes); then B and A again start, each reading the table as
   * it starts and polling no more (RACE). Resolves once A has posted its question again and B
   * has it on its board, with what A posted.
   */
  async function askedThenRestarted(database: MariaDBDatabase, note: string) {
    const a = await start('a', database, RACE)
    const { call } = await ask(a, note)
    await waitFor('A\'s request in dogu_pending', async () => (await pendingRows(database)).length === 1)
    const lost = expect(call).rejects.toThrow(/instance a exited/)
    await a.kill()
    await lost
    const b = await start('b', database, RACE)
    const a2 = await start('a', database, RACE)
    // Its own question: posted again, saying the bot restarted.
    const again = await a2.nextSent()
    expect(again.text).toContain('机器人重启过，这个请求仍在等待回答。')
    await onBoard(b, note, 'a')
    return { b, a2, again }
  }

  /** The audit table's records of `save`, in the order each instance wrote them: outcome, the task's end status, and the call a resumed record answers. */
  async function saveRecords(database: MariaDBDatabase): Promise<string[][]> {
    const text = await server.query(`SELECT outcome, IFNULL(JSON_VALUE(record, '$.taskStatus'), '-'), IFNULL(JSON_VALUE(record, '$.resumes.callId'), '-') FROM \`${database.database}\`.dogu_audit WHERE tool = 'save' ORDER BY seq`)
    return text.split('\n').filter(Boolean).map((line) => line.split('\t'))
  }

  /** The rows of dogu_pending: id, the instance that asked, and who claimed it (empty while open). */
  async function pendingRows(database: MariaDBDatabase): Promise<string[][]> {
    const text = await server.query(`SELECT id, instance, claimedBy, claimedFor FROM \`${database.database}\`.dogu_pending ORDER BY expiresAt`)
    return text.split('\n').filter(Boolean).map((line) => line.split('\t'))
  }

  describe(`MariaDB ${server.version.split('-')[0]}: a question kept in dogu_pending, answered on any instance`, { timeout: 120_000 }, () => {
    it('asked on A, A SIGKILLed, answered on B: it runs once, on B, its notice brings the result; a restarted A neither runs it nor asks it again', async () => {
      const database = await server.createDatabase('dogu_durable_killed')
      const { a, b } = await pair(database)
      const { call } = await ask(a, 'first')
      const posted = performance.now()
      // Asked means kept: A's record is in the table before A dies.
      await waitFor('A\'s request in dogu_pending', async () => (await pendingRows(database)).length === 1)
      expect(await pendingRows(database)).toEqual([[expect.any(String), 'a', '', '']])
      // The call's command dies with A: its reply never comes.
      const lost = expect(call).rejects.toThrow(/instance a exited/)
      await a.kill()
      await lost

      // B reads the table: the question is on its board, answerable in the channel, not posted from B.
      await onBoard(b, 'first', 'a')
      measured.seenOnB.push(performance.now() - posted)
      expect(b.sent).toEqual([])
      const answered = performance.now()
      const [reply] = await b.say('alice', 'y')
      const [, note, taskId] = RESUMED.exec(reply) ?? []
      expect({ reply, note }).toEqual({ reply: expect.stringMatching(RESUMED), note: 'first' })
      const notice = await b.nextSent()
      measured.ranOnB = performance.now() - answered
      expect(notice.channelId).toBe('room')
      expect(notice.text).toContain(taskId)
      expect(notice.text).toContain('saved first')
      expect(await b.saves()).toEqual(['first'])
      expect(await b.tasks()).toEqual([expect.objectContaining({ id: taskId, tool: 'save', status: 'succeeded', session: expect.objectContaining({ id: 'mock:room', userId: 'alice' }) })])
      // B claimed the row, and left it as the trace of who answered.
      expect(await pendingRows(database)).toEqual([[expect.any(String), 'a', 'b', 'mock:alice']])
      // The audit: B's answer, which ran A's call as the task, and the task's end; nothing from A, which died waiting.
      await waitFor('B\'s two records of save', async () => (await saveRecords(database)).length >= 2)
      expect(await saveRecords(database)).toEqual([['background', '-', expect.stringMatching(/^a-\d+-1$/)], ['ok', 'succeeded', '-']])
      expect(b.sent).toEqual([notice])

      // Another question of alice's, asked on B and open, for the restarted A to read.
      const { call: second } = await ask(b, 'second')
      const a2 = await start('a', database)
      // The restarted A lists B's question as B's, and not its own first one: that was claimed.
      const listing = await onBoard(a2, 'second', 'b')
      expect(listing).not.toContain('first')
      expect(await a2.pending()).toEqual([expect.objectContaining({ tool: 'save', summary: 'save(note=second)', restored: expect.objectContaining({ instance: 'b' }) })])
      // Nothing posted from A: not its first question again, not B's.
      expect(a2.sent).toEqual([])
      expect(await a2.saves()).toEqual([])
      expect(await a2.tasks()).toEqual([expect.objectContaining({ id: taskId, status: 'succeeded' })])

      // Declined on B: it goes from A's board too, which posts nothing for it.
      expect(await b.say('alice', 'n')).toEqual(['已拒绝 [1] save(note=second)。'])
      expect(await second).toMatchObject({ status: 'denied' })
      await waitFor('the restarted A to drop B\'s question', async () => (await a2.say('alice', 'dogu.pending')).join('\n') === '本频道中没有等你批准的请求。')
      expect(a2.sent).toEqual([])
      expect([...await a2.saves(), ...await b.saves()]).toEqual(['first'])
    })

    it('answered on A and on B at the same moment: it runs once; one answerer is told it is allowed, the other that alice answered it already', async () => {
      const database = await server.createDatabase('dogu_durable_race')
      const a = await start('a', database, RACE)
      const { call } = await ask(a, 'race')
      await waitFor('A\'s request in dogu_pending', async () => (await pendingRows(database)).length === 1)
      // B reads it as it starts (it polls no more in this test).
      const b = await start('b', database, RACE)
      await onBoard(b, 'race', 'a')
      const [onA, onB] = await Promise.all([a.say('alice', 'y'), b.say('alice', 'y')])
      const aWon = onA[0] === allowed('race')
      measured.raceWinner = aWon ? 'A (asked there)' : 'B'
      if (aWon) {
        // A's own call ran on: its result is the call's, and B heard it was taken.
        expect(onB).toEqual([taken('race')])
        expect(await call).toMatchObject({ status: 'ok', content: 'saved race' })
        expect(await a.saves()).toEqual(['race'])
        expect(await b.saves()).toEqual([])
        expect(await b.tasks()).toEqual([])
      } else {
        // B ran it as a task, its notice the result; A's call ended saying the call runs on B.
        expect(onA).toEqual([taken('race')])
        expect(onB).toEqual([expect.stringMatching(RESUMED)])
        const taskId = RESUMED.exec(onB[0])![2]
        const notice = await b.nextSent()
        expect(notice.text).toContain(taskId)
        expect(notice.text).toContain('saved race')
        expect(await call).toMatchObject({ status: 'denied', content: expect.stringContaining('answered on another instance (b) by mock:alice; the call runs there, not here') })
        expect(await a.saves()).toEqual([])
        expect(await b.saves()).toEqual(['race'])
      }
      // Answered through A's copy or B's board: no other copy is told anything.
      expect(a.sent).toHaveLength(1)
      // The winner claimed the row: nothing is open in the table (A, told B claimed it, may have
      // removed the row already), nor on either instance.
      for (const [, instance, claimedBy, claimedFor] of await pendingRows(database)) expect({ instance, claimedBy, claimedFor }).toEqual({ instance: 'a', claimedBy: aWon ? 'a' : 'b', claimedFor: 'mock:alice' })
      expect(await a.pending()).toEqual([])
      // The audit has one run: A's call's record, or A's call denied (it runs on B), B's answer and its task's end.
      const records = aWon
        ? [['ok', '-', '-']]
        : [['background', '-', expect.stringMatching(/^a-\d+-1$/)], ['denied', '-', '-'], ['ok', 'succeeded', '-']]
      await waitFor('the records of save', async () => (await saveRecords(database)).length >= records.length)
      expect((await saveRecords(database)).sort()).toEqual(records)
      await waitFor('B to drop the answered question', async () => !(await b.pending()).length)
      expect(await b.say('alice', 'dogu.pending')).toEqual(['本频道中没有等你批准的请求。'])
    })

    it('answered on B while A waits: A releases its call, saying it runs on B, and tells the channel who answered; it runs once, on B', async () => {
      const database = await server.createDatabase('dogu_durable_elsewhere')
      const { a, b } = await pair(database)
      const { call } = await ask(a, 'there')
      await onBoard(b, 'there', 'a')
      const answered = performance.now()
      const [reply] = await b.say('alice', 'y')
      expect(reply).toMatch(RESUMED)
      const result = await call
      measured.released = performance.now() - answered
      expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining('answered on another instance (b) by mock:alice; the call runs there, not here') })
      // A's question, posted in the room, is closed there with who answered.
      expect(await a.nextSent()).toEqual({ channelId: 'room', text: taken('there') })
      expect((await b.nextSent()).text).toContain('saved there')
      expect(await a.saves()).toEqual([])
      expect(await b.saves()).toEqual(['there'])
      expect(await a.say('alice', 'dogu.pending')).toEqual(['本频道中没有等你批准的请求。'])
    })

    it('answered on B, then a y on A read while A\'s poll sees B\'s claim: A\'s reply says mock:alice answered it, and A\'s question is closed saying so', async () => {
      const database = await server.createDatabase('dogu_durable_late_live')
      const a = await start('a', database, RACE)
      const { call } = await ask(a, 'late')
      await waitFor('A\'s request in dogu_pending', async () => (await pendingRows(database)).length === 1)
      const b = await start('b', database, RACE)
      await onBoard(b, 'late', 'a')
      expect(await b.say('alice', 'y')).toEqual([expect.stringMatching(RESUMED)])
      // A has not read the table since: its poll lands while alice's y is read there.
      expect(await a.say('alice', 'y', { refreshWhileRead: true })).toEqual([taken('late')])
      expect(await call).toMatchObject({ status: 'denied', content: expect.stringContaining('answered on another instance (b) by mock:alice; the call runs there, not here') })
      expect(await a.nextSent()).toEqual({ channelId: 'room', text: taken('late') })
      expect((await b.nextSent()).text).toContain('saved late')
      expect({ a: await a.saves(), b: await b.saves() }).toEqual({ a: [], b: ['late'] })
    })

    it('answered on A, then a y on B read while B\'s poll sees A\'s claim: B\'s reply says mock:alice answered it', async () => {
      const database = await server.createDatabase('dogu_durable_late_board')
      const a = await start('a', database, RACE)
      const { call } = await ask(a, 'board')
      await waitFor('A\'s request in dogu_pending', async () => (await pendingRows(database)).length === 1)
      const b = await start('b', database, RACE)
      await onBoard(b, 'board', 'a')
      expect(await a.say('alice', 'y')).toEqual([allowed('board')])
      expect(await call).toMatchObject({ status: 'ok', content: 'saved board' })
      expect(await b.say('alice', 'y', { refreshWhileRead: true })).toEqual([taken('board')])
      expect(await b.pending()).toEqual([])
      expect(b.sent).toEqual([])
      expect({ a: await a.saves(), b: await b.saves() }).toEqual({ a: ['board'], b: [] })
    })

    it('A restarted posts its question again; answered on B, A closes the question it posted, saying who answered; it runs once, on B', async () => {
      const database = await server.createDatabase('dogu_durable_reposted')
      const { b, a2 } = await askedThenRestarted(database, 'reposted')
      expect(await b.say('alice', 'y')).toEqual([expect.stringMatching(RESUMED)])
      expect((await b.nextSent()).text).toContain('saved reposted')
      // A's next read of the table (its poll) finds B's claim.
      await a2.refresh()
      expect(await a2.nextSent()).toEqual({ channelId: 'room', text: taken('reposted') })
      expect(await a2.say('alice', 'dogu.pending')).toEqual(['本频道中没有等你批准的请求。'])
      expect({ a: await a2.saves(), b: await b.saves() }).toEqual({ a: [], b: ['reposted'] })
      expect(a2.sent).toHaveLength(2)
    })

    it('answered on A and on B at once with the pending poll on, 6 rounds: it runs once each time; the second answerer hears who answered, or nothing when the poll had closed its question before its y', async () => {
      const database = await server.createDatabase('dogu_durable_race_polled')
      const { a, b } = await pair(database)
      const outcomes: string[] = []
      for (let round = 0; round < 6; round++) {
        const note = `polled${round}`
        const call = a.call('save', 'alice', { note })
        await waitFor(`A's question ${note}`, async () => a.sent.some((sent) => question(note).test(sent.text)))
        await onBoard(b, note, 'a')
        const [onA, onB] = await Promise.all([a.say('alice', 'y'), b.say('alice', 'y')])
        const aWon = onA[0] === allowed(note)
        outcomes.push(`${aWon ? 'A' : 'B'} won, the other ${(aWon ? onB : onA).length ? 'told' : 'silent'}`)
        // The other answerer: told who answered, or nothing (its question had closed); never a bare "已经结束".
        if (aWon) {
          expect({ round, onB }).toEqual({ round, onB: onB.length ? [taken(note)] : [] })
          expect(await call).toMatchObject({ status: 'ok', content: `saved ${note}` })
        } else {
          expect({ round, onA, onB }).toEqual({ round, onA: onA.length ? [taken(note)] : [], onB: [expect.stringMatching(RESUMED)] })
          expect(await call).toMatchObject({ status: 'denied' })
          await waitFor(`B's task notice of ${note}`, async () => b.sent.some((sent) => sent.text.includes(`saved ${note}`)))
        }
        await waitFor('both boards empty', async () => !(await a.pending()).length && !(await b.pending()).length)
      }
      const saved = [...await a.saves(), ...await b.saves()].sort()
      expect(saved).toEqual(Array.from({ length: 6 }, (_, round) => `polled${round}`))
      console.log(`sql tier: the race with the pending poll on: ${outcomes.join('; ')}`)
    })

    it('A SIGKILLed and restarted before anyone answered: A asks it again, B does not; answered on both at once, it runs once', async () => {
      const database = await server.createDatabase('dogu_durable_restarted')
      const { b, a2, again } = await askedThenRestarted(database, 'again')
      expect(again).toEqual({ channelId: 'room', text: expect.stringMatching(question('again')) })
      // Two instances of one bot account both read the channel: alice's y reaches both.
      const [onA, onB] = await Promise.all([a2.say('alice', 'y'), b.say('alice', 'y')])
      const [winner, loser] = RESUMED.test(onA[0]) ? [a2, b] : [b, a2]
      measured.restartedRaceWinner = winner === a2 ? 'A' : 'B'
      expect(winner === a2 ? onB : onA).toEqual([taken('again')])
      const taskId = RESUMED.exec((winner === a2 ? onA : onB)[0])?.[2]
      expect(taskId).toMatch(/^task_/)
      const notice = await winner.nextSent()
      expect(notice.text).toContain(taskId)
      expect(notice.text).toContain('saved again')
      expect({ winner: await winner.saves(), loser: await loser.saves() }).toEqual({ winner: ['again'], loser: [] })
      await waitFor('the records of save', async () => (await saveRecords(database)).length >= 2)
      expect(await saveRecords(database)).toEqual([['background', '-', expect.stringMatching(/^a-\d+-1$/)], ['ok', 'succeeded', '-']])
      expect(await pendingRows(database)).toEqual([[expect.any(String), 'a', winner.name, 'mock:alice']])
      expect(b.sent).toEqual(winner === b ? [notice] : [])
      expect(await a2.pending()).toEqual([])
      expect(await b.pending()).toEqual([])
    })
  })
}
