// Several instances on one shared pending store (issue 46): the minato table `dogu_pending`
// on SQLite, each instance an engine with its own DatabasePendingStore on the one database.
// An answer on any instance claims the request with one conditional write: exactly one runs
// it, and the instance that asked lets its caller go. Two Koishi apps on MariaDB are
// durable-permissions.sql.spec.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineTool, ToolRegistry } from '../src'
import { AuditLog } from '../src/audit'
import type { MinatoDatabase } from '../src/database/minato-database'
import type { Session } from '../src/session'
import {
  type AskerContext,
  DatabasePendingStore,
  type DecisionEvent,
  PermissionEngine,
  type PermissionEngineOptions,
  type PermissionRequest,
  type ResumedCall,
} from '../src/permissions'
import { koishiDatabase } from './durable-permissions-support'

const caller: Session = { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1 }
const alice = { id: 'u1', platform: 'mock' }
const admin = { id: 'op', platform: 'mock', authority: 4 }

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  vi.useRealTimers()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function database(): Promise<MinatoDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-instances-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const { database, stop } = await koishiDatabase('sqlite', join(dir, 'koishi.db'))
  cleanups.push(stop)
  return database
}

/** One instance: an engine on its own store over `db`, an asker the test answers, and a tools host that defines `defined`. */
function instance(db: MinatoDatabase, instanceId: string, options: PermissionEngineOptions & { defined?: string[] } = {}) {
  const events: DecisionEvent[] = []
  const warnings: string[] = []
  const shown: { request: PermissionRequest; context: AskerContext }[] = []
  const resumed: ResumedCall[] = []
  const { defined = ['save'], ...rest } = options
  const engine = new PermissionEngine({
    pendingStore: new DatabasePendingStore({ database: db }),
    instanceId,
    onDecision: (event) => events.push(event),
    logger: { debug() {}, warn: (fmt, ...args) => warnings.push(format(fmt, ...args)) },
    ...rest,
  })
  cleanups.push(() => engine.stop())
  engine.addAsker((request, context) => { shown.push({ request, context }) })
  engine.onResume({
    defines: (tool) => defined.includes(tool),
    resume: async (call) => {
      resumed.push(call)
      return { taskId: `${instanceId}-task-${resumed.length}` }
    },
  })
  const ask = (callId = 'call-1') => engine.approve({ session: caller, permission: { name: 'tool:save' }, effect: 'write', tool: 'save', args: { file: 'notes.txt' }, callId }, new AbortController().signal)
  /** The question this instance shows for the request first asked as `originalId`. */
  const question = (originalId: string) => shown.find((item) => (item.request.restored?.originalId ?? item.request.id) === originalId)!
  return { engine, events, warnings, shown, resumed, ask, question }
}

describe('instances on one shared pending store (SQLite)', () => {
  it('asked on A, answered on B: it runs once on B, and A\'s caller is told it runs there', async () => {
    const db = await database()
    const a = instance(db, 'a')
    const b = instance(db, 'b')
    await Promise.all([a.engine.ready, b.engine.ready])
    const outcome = a.ask()
    await a.shown[0].context.kept
    const id = a.shown[0].request.id
    // B sees it on its refresh (the host's refreshGrants timer reads the pending table too).
    await b.engine.refreshGrants()
    expect(b.engine.pending()).toEqual([expect.objectContaining({ restored: expect.objectContaining({ originalId: id, instance: 'a' }) })])
    expect(await b.question(id).context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'accepted', reason: 'approved by mock:u1 (once) on instance b (asked on a)', taskId: 'b-task-1', open: false })
    expect(b.resumed).toHaveLength(1)
    await a.engine.refreshPending()
    expect(await outcome).toMatchObject({ decision: 'deny', reason: 'the request was answered on another instance (b) by mock:u1; the call runs there, not here', rule: { kind: 'elsewhere', instance: 'b', by: 'mock:u1' } })
    expect(a.resumed).toEqual([])
    expect(a.shown[0].context.signal.aborted).toBe(true)
    expect([...a.warnings, ...b.warnings]).toEqual([])
  })

  it('A\'s audit record of its call shows the answer given on B: ended elsewhere, the instance and who answered', async () => {
    const db = await database()
    const log = new AuditLog()
    cleanups.push(() => log.stop())
    const a = instance(db, 'a', { onDecision: (event) => log.onDecision(event) })
    const b = instance(db, 'b')
    await Promise.all([a.engine.ready, b.engine.ready])
    const registry = new ToolRegistry({ emit: (name: string, ...args: any[]) => { if (name === 'tools/call-end') log.onCallEnd(args[0], args[1]) } })
    registry.define(defineTool({ name: 'save', description: 'Save', args: Schema.object({ file: Schema.string() }), traits: { effect: 'write' }, run: () => 'saved' }))
    registry.permissions = a.engine
    const result = registry.toolset({ session: caller }).execute([{ id: 'call-1', name: 'save', arguments: { file: 'notes.txt' } }])
    await expect.poll(() => a.shown.length).toBe(1)
    await a.shown[0].context.kept
    const id = a.shown[0].request.id
    await b.engine.refreshPending()
    expect(await b.question(id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    await a.engine.refreshPending()
    expect((await result)[0]).toMatchObject({ status: 'denied' })
    const [record] = await log.export()
    expect(record).toMatchObject({
      tool: 'save',
      callId: 'call-1',
      outcome: 'denied',
      reason: 'the request was answered on another instance (b) by mock:u1; the call runs there, not here',
      ask: { requestId: id, ended: 'elsewhere', decision: 'deny', elsewhere: { instance: 'b', by: 'mock:u1' } },
    })
  })

  it('asked on A, A killed, B started after: B asks it again and one answer runs it on B', async () => {
    const db = await database()
    const a = instance(db, 'a')
    void a.ask()
    await a.shown[0].context.kept
    // A is gone without stopping (SIGKILL): nothing of it is used any more.
    const b = instance(db, 'b')
    await b.engine.ready
    const id = a.shown[0].request.id
    expect(b.shown.map((item) => item.request.restored?.originalId)).toEqual([id])
    expect(await b.question(id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(b.resumed.map((call) => call.record.id)).toEqual([id])
    // Left claimed, so that A (were it alive) learns who answered; no instance asks it again.
    expect(await db.get('dogu_pending', {})).toEqual([expect.objectContaining({ id, claimedBy: 'b', claimedFor: 'mock:u1' })])
    const c = instance(db, 'c')
    await c.engine.ready
    expect(c.shown).toEqual([])
  })

  it('answered on A and on B at once, 20 rounds: each time it runs exactly once, and the other answerer hears who answered first', async () => {
    const db = await database()
    const a = instance(db, 'a')
    const b = instance(db, 'b')
    await Promise.all([a.engine.ready, b.engine.ready])
    let ranHere = 0
    for (let round = 0; round < 20; round++) {
      const outcome = a.ask(`call-${round}`)
      const mine = a.shown.at(-1)!
      await mine.context.kept
      await b.engine.refreshPending()
      const theirs = b.question(mine.request.id)
      const resumedBefore = b.resumed.length
      const [onA, onB] = await Promise.all([
        mine.context.answer!({ decision: 'allow', by: alice }),
        theirs.context.answer!({ decision: 'allow', by: admin }),
      ])
      const ranOnB = b.resumed.length - resumedBefore
      if (onA.status === 'accepted') {
        ranHere++
        expect(await outcome).toMatchObject({ decision: 'allow', reason: 'approved by mock:u1 (once)' })
        expect(onB).toMatchObject({ status: 'taken', by: 'mock:u1' })
        expect(ranOnB).toBe(0)
      } else {
        expect(onA).toMatchObject({ status: 'taken', by: 'mock:op' })
        expect(onB).toMatchObject({ status: 'accepted' })
        expect(ranOnB).toBe(1)
        expect(await outcome).toMatchObject({ decision: 'deny', reason: 'the request was answered on another instance (b) by mock:op; the call runs there, not here', rule: { kind: 'elsewhere', instance: 'b', by: 'mock:op' } })
      }
    }
    expect(ranHere + b.resumed.length).toBe(20)
    await b.engine.refreshPending()
    expect(b.engine.pending()).toEqual([])
  })

  it('two instances answering one restored request at once, 20 rounds: exactly one runs it', async () => {
    const db = await database()
    const asker = instance(db, 'a')
    const b = instance(db, 'b')
    const c = instance(db, 'c')
    await Promise.all([asker.engine.ready, b.engine.ready, c.engine.ready])
    for (let round = 0; round < 20; round++) {
      void asker.ask(`call-${round}`)
      const id = asker.shown.at(-1)!.request.id
      await asker.shown.at(-1)!.context.kept
      await Promise.all([b.engine.refreshPending(), c.engine.refreshPending()])
      const results = await Promise.all([
        b.question(id).context.answer!({ decision: 'allow', by: alice }),
        c.question(id).context.answer!({ decision: 'allow', by: admin }),
      ])
      expect(results.map((result) => result.status).sort()).toEqual(['accepted', 'taken'])
      const loser = results.find((result) => result.status === 'taken')!
      expect(loser.by).toBe(results[0].status === 'taken' ? 'mock:op' : 'mock:u1')
    }
    expect(b.resumed.length + c.resumed.length).toBe(20)
  })

  it('an answer read on A just after its refresh saw B\'s claim hears who answered on B; the question\'s context says who and where', async () => {
    const db = await database()
    const a = instance(db, 'a')
    const b = instance(db, 'b')
    await Promise.all([a.engine.ready, b.engine.ready])
    const outcome = a.ask()
    const mine = a.shown[0]
    await mine.context.kept
    await b.engine.refreshPending()
    expect(await b.question(mine.request.id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(mine.context.elsewhere!()).toBeUndefined()
    // A's refresh (its host's poll) sees B's claim before the admin's reply on A is read.
    await a.engine.refreshPending()
    expect(await outcome).toMatchObject({ decision: 'deny', rule: { kind: 'elsewhere', instance: 'b', by: 'mock:u1' } })
    expect(mine.context.elsewhere!()).toEqual({ by: 'mock:u1', instance: 'b' })
    expect(await mine.context.answer!({ decision: 'allow', by: admin })).toEqual({ status: 'taken', by: 'mock:u1', open: false, reason: (await outcome).reason })
    expect(a.resumed).toEqual([])
    expect(b.resumed).toHaveLength(1)
  })

  it('a restored request another instance answered: an answer read here after the refresh that dropped it hears who answered, and where', async () => {
    const db = await database()
    const asker = instance(db, 'a')
    const b = instance(db, 'b')
    const c = instance(db, 'c')
    await Promise.all([asker.engine.ready, b.engine.ready, c.engine.ready])
    void asker.ask()
    const id = asker.shown[0].request.id
    await asker.shown[0].context.kept
    await Promise.all([b.engine.refreshPending(), c.engine.refreshPending()])
    expect(await c.question(id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    const theirs = b.question(id).context
    expect(theirs.elsewhere!()).toBeUndefined()
    await b.engine.refreshPending()
    expect(b.engine.pending()).toEqual([])
    expect(theirs.signal.aborted).toBe(true)
    expect(theirs.elsewhere!()).toEqual({ by: 'mock:u1', instance: 'c' })
    expect(await theirs.answer!({ decision: 'allow', by: admin })).toEqual({ status: 'taken', by: 'mock:u1', open: false, reason: 'it was already answered by mock:u1 on instance c' })
    expect(b.resumed).toEqual([])
    expect(c.resumed).toHaveLength(1)
  })

  it('a restored request closed on another instance (not answered) says no one answered it: a later answer hears it is closed', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 60_000_000 })
    const db = await database()
    const asker = instance(db, 'a', { askTimeout: 60_000 })
    void asker.ask()
    await asker.shown[0].context.kept
    const id = asker.shown[0].request.id
    const b = instance(db, 'b')
    await b.engine.ready
    // C reads it past its expiry and the grace left to A, and closes it.
    vi.setSystemTime(60_000_000 + 60_000 + 10_001)
    const c = instance(db, 'c')
    await c.engine.ready
    expect((await db.get('dogu_pending', {})).map((row) => row.claimedFor)).toEqual(['#expired'])
    await b.engine.refreshPending()
    const theirs = b.question(id).context
    expect(theirs.signal.aborted).toBe(true)
    expect(theirs.elsewhere!()).toBeUndefined()
    expect(await theirs.answer!({ decision: 'allow', by: admin })).toEqual({ status: 'closed', open: false })
  })

  it('an instance that does not define the tool refuses the answer; the request stays open and another instance runs it', async () => {
    const db = await database()
    const a = instance(db, 'a')
    const b = instance(db, 'b', { defined: ['deploy'] })
    const c = instance(db, 'c')
    void a.ask()
    await a.shown[0].context.kept
    await Promise.all([b.engine.refreshPending(), c.engine.refreshPending()])
    const id = a.shown[0].request.id
    expect(await b.question(id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'refused', open: true, reason: 'the tool "save" is not defined on this instance (b); the request stays open for one that defines it' })
    expect(await c.question(id).context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(c.resumed).toHaveLength(1)
    await b.engine.refreshPending()
    expect(b.engine.pending()).toEqual([])
    expect(b.question(id).context.signal.aborted).toBe(true)
  })

  it('another instance\'s expired request is closed only after it had time to close its own; its in-run question is left to it', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 60_000_000 })
    const db = await database()
    const a = instance(db, 'a', { askTimeout: 60_000 })
    void a.ask()
    void a.engine.approve({ session: caller, permission: { name: 'tool:clean' }, effect: 'read', tool: 'clean', args: {}, callId: 'in-run', reason: 'delete 3 files', confirm: 'always' }, new AbortController().signal)
    await Promise.all(a.shown.map((item) => item.context.kept))
    const b = instance(db, 'b')
    await b.engine.ready
    // The in-run question is A's: B does not show it, nor close it while A may be waiting on it.
    expect(b.shown.map((item) => item.request.tool)).toEqual(['save'])
    vi.setSystemTime(60_000_000 + 60_000 + 5_000)
    await b.engine.refreshPending()
    expect((await db.get('dogu_pending', {})).map((row) => row.tool).sort()).toEqual(['clean', 'save'])
    const c = instance(db, 'c')
    vi.setSystemTime(60_000_000 + 60_000 + 10_001)
    await c.engine.ready
    expect(c.shown).toEqual([])
    expect(c.events).toEqual([
      expect.objectContaining({ decision: 'deny', restored: true, source: { kind: 'timeout', timeout: 60_000 } }),
      expect.objectContaining({ decision: 'deny', restored: true, source: { kind: 'timeout', timeout: 60_000 } }),
    ])
    expect((await db.get('dogu_pending', {})).map((row) => row.claimedFor).sort()).toEqual(['#expired', '#expired'])
  })
})
