import { describe, expect, it } from 'vitest'
import type { RunningCall } from '../src/background-port'
import { BackgroundEngine, type BackgroundTask } from '../src/background'
import { MemoryTaskStore, type TaskStore } from '../src/background/task-store'
import type { ApprovalRequest } from '../src/permission-gate'
import { type Grant, type GrantStore, type GrantStoreLoad, MemoryGrantStore, PermissionEngine, type PermissionEngineOptions } from '../src/permissions'
import type { ToolResult } from '../src/tool-result'

// A host switches the stores under a living engine when a database appears, is reloaded or
// goes (packages/koishi/tests/load-order.spec.ts does it with real drivers); here, what
// stays and what moves.

const alice = { id: 's1', userId: 'alice', platform: 'discord' }
const request: ApprovalRequest = { session: alice, permission: { name: 'tool:save' }, effect: 'write', tool: 'save', args: {}, callId: 'c1' }

/** A grant store whose `add` can be made to fail, as a database does while its driver stops. */
class TableStore implements GrantStore {
  readonly rows = new Map<string, Grant>()
  failing = false
  async load(): Promise<GrantStoreLoad> {
    return { grants: [...this.rows.values()] }
  }
  async save(): Promise<void> {}
  async add(grant: Grant): Promise<void> {
    if (this.failing) throw new Error('the driver stopped')
    this.rows.set(grant.id, grant)
  }
  async remove(grant: Grant): Promise<void> {
    this.rows.delete(grant.id)
  }
}

/** An engine with one asker that answers through `answer`, once asked. */
function engineWithAsker(store: GrantStore, logger?: PermissionEngineOptions['logger']) {
  const engine = new PermissionEngine({ store, logger })
  const asked: ((scope: 'once' | 'always') => void)[] = []
  engine.addAsker((_, { respond }) => new Promise((done) => {
    asked.push((scope) => {
      respond({ decision: 'allow', scope, by: { id: 'alice', platform: 'discord' } })
      done(undefined)
    })
  }))
  return { engine, asked }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('PermissionEngine.useStore', () => {
  it('keeps askers, rules, modes and the waiting question; the answer is stored in the new store', async () => {
    const file = new MemoryGrantStore()
    const table = new TableStore()
    const { engine, asked } = engineWithAsker(file)
    engine.addRule({ permission: 'tool:pay', decision: 'deny', name: 'no paying' })
    engine.setMode('s2', 'readOnly')
    await engine.ready
    const waiting = engine.approve(request)
    await tick()
    await engine.useStore(table)
    expect(engine.pending()).toHaveLength(1)
    asked[0]('always')
    expect(await waiting).toEqual({ decision: 'allow', reason: expect.any(String), rule: expect.objectContaining({ kind: 'answer' }) })
    await engine.refreshGrants()
    expect([...table.rows.values()].map((grant) => grant.permission)).toEqual(['tool:save'])
    expect(await file.load()).toEqual({ grants: [] })
    expect(engine.authorize({ ...request, permission: { name: 'tool:pay' }, tool: 'pay' }).decision).toBe('deny')
    expect(engine.modeOf('s2')).toBe('readOnly')
  })

  it('the grants in force become the new store\'s; session grants stay', async () => {
    const table = new TableStore()
    const { engine, asked } = engineWithAsker(table)
    await engine.ready
    const always = engine.approve(request)
    await tick()
    asked[0]('always')
    await always
    const other = engine.approve({ ...request, permission: { name: 'tool:note' }, tool: 'note' })
    await tick()
    asked[1]('session' as never)
    await other
    await engine.refreshGrants()
    // The database goes: its grant does not apply while it is away; the session grant does.
    await engine.useStore(new MemoryGrantStore())
    expect(engine.grants().map((grant) => grant.scope)).toEqual(['session'])
    expect(engine.authorize(request).decision).toBe('ask')
    // It comes back: its grant applies again.
    await engine.useStore(table)
    expect(engine.authorize(request).decision).toBe('allow')
  })

  it('a grant whose save failed as the old store went is saved to the new one', async () => {
    const table = new TableStore()
    const file = new MemoryGrantStore()
    const warnings: string[] = []
    const { engine, asked } = engineWithAsker(table, { debug() {}, warn: (format, ...args) => { warnings.push(`${format} ${args.join(' ')}`) } })
    await engine.ready
    table.failing = true
    const waiting = engine.approve(request)
    await tick()
    asked[0]('always')
    await waiting
    await tick()
    // Failed while it was the engine's store: said so.
    expect(warnings).toEqual([expect.stringContaining('the driver stopped')])
    await engine.useStore(file)
    await engine.refreshGrants()
    expect((await file.load()).grants.map((grant) => grant.permission)).toEqual(['tool:save'])
    expect(engine.authorize(request).decision).toBe('allow')
  })

  it('a call asked about while the new store is read is decided by its grants, without asking', async () => {
    const table = new TableStore()
    table.rows.set('grant_1', { id: 'grant_1', scope: 'always', subject: { userId: 'alice', platform: 'discord' }, permission: 'tool:save', tool: 'save', by: 'alice', createdAt: 1 })
    let open!: () => void
    const gated: GrantStore = { load: () => new Promise((resolve) => { open = () => resolve(table.load()) }), save: async () => {} }
    const { engine, asked } = engineWithAsker(new MemoryGrantStore())
    await engine.ready
    const switching = engine.useStore(gated)
    // The database has just started: its grants are being read.
    expect(engine.authorize(request).decision).toBe('ask')
    const outcome = engine.approve(request)
    await tick()
    open()
    await switching
    expect(await outcome).toMatchObject({ decision: 'allow' })
    expect(asked).toEqual([])
  })

  it('refuses something that is not a store', () => {
    expect(() => new PermissionEngine().useStore({} as never)).toThrow('useStore() expects a grant store')
  })
})

/** A call that runs until `finish`. */
function slowCall(id: string) {
  let finish!: (result: ToolResult) => void
  const result = new Promise<ToolResult>((resolve) => { finish = resolve })
  const call: RunningCall = { callId: id, tool: 'slow', session: alice, args: {}, startedAt: Date.now(), result, cancel: () => finish({ id, name: 'slow', status: 'cancelled', content: 'cancelled' } as ToolResult) }
  return { call, finish: (content: string) => finish({ id, name: 'slow', status: 'ok', content } as ToolResult) }
}

/** A task store whose `load` waits for `open()`, to look inside a switch. */
class GatedStore extends MemoryTaskStore {
  private gate?: () => void
  private readonly opened = new Promise<void>((resolve) => { this.gate = resolve })
  readonly puts: string[] = []
  open() {
    this.gate?.()
  }
  override async load(): Promise<BackgroundTask[]> {
    await this.opened
    return super.load()
  }
  override async put(task: BackgroundTask): Promise<void> {
    this.puts.push(`${task.id} ${task.status}`)
    return super.put(task)
  }
}

describe('BackgroundEngine.useStore', () => {
  it('a running task goes on; it is written to the new store as running, and settles there', async () => {
    const old = new MemoryTaskStore()
    const engine = new BackgroundEngine({ store: old })
    await engine.load()
    const { call, finish } = slowCall('c1')
    const task = engine.adopt(call)
    const next = new GatedStore()
    const switching = engine.useStore(next)
    await tick()
    // Settles while the new store is read: written once it is.
    finish('done')
    await tick()
    expect(engine.get(task.id)?.status).toBe('succeeded')
    expect(next.puts).toEqual([])
    next.open()
    await switching
    await next.flush()
    expect(next.puts).toEqual([`${task.id} succeeded`])
    expect((await next.load()).map((record) => record.status)).toEqual(['succeeded'])
  })

  it('keeps a running task running in the new store until it settles', async () => {
    const engine = new BackgroundEngine({ store: new MemoryTaskStore() })
    await engine.load()
    const { call, finish } = slowCall('c1')
    const task = engine.adopt(call)
    const next = new GatedStore()
    next.open()
    await engine.useStore(next)
    expect(next.puts).toEqual([`${task.id} running`])
    finish('done')
    const settled = await engine.wait(task.id, { timeout: 1_000 })
    expect(settled?.status).toBe('succeeded')
    expect(next.puts).toEqual([`${task.id} running`, `${task.id} succeeded`])
  })

  it('takes in the new store\'s records; one held as running that does not run here was cut off', async () => {
    const cutOff: BackgroundTask = { id: 'task_old', tool: 'slow', callId: 'c0', session: alice, status: 'running', startedAt: 1 }
    const done: BackgroundTask = { ...cutOff, id: 'task_done', status: 'succeeded', settledAt: Date.now() }
    const engine = new BackgroundEngine({ store: new MemoryTaskStore() })
    await engine.load()
    const local = engine.adopt(slowCall('c9').call)
    const next = new MemoryTaskStore([{ ...done, startedAt: 2 }, cutOff])
    await engine.useStore(next)
    // In the order they started, as list() promises, whatever order the store gave.
    expect(engine.list().map((task) => task.id)).toEqual(['task_old', 'task_done', local.id])
    expect(engine.get('task_old')?.status).toBe('interrupted')
    expect(engine.get('task_done')?.status).toBe('succeeded')
    expect((await next.load()).find((task) => task.id === 'task_old')?.status).toBe('interrupted')
  })

  it('a refresh waits for the switch; dispose during it writes the interrupted task to the new store', async () => {
    const engine = new BackgroundEngine({ store: new MemoryTaskStore() })
    await engine.load()
    const { call } = slowCall('c1')
    const task = engine.adopt(call)
    const next = new GatedStore()
    const switching = engine.useStore(next)
    let refreshed = false
    const refresh = engine.refresh().then(() => { refreshed = true })
    await tick()
    expect(refreshed).toBe(false)
    const disposed = engine.dispose()
    next.open()
    await Promise.all([switching, refresh, disposed])
    expect((await next.load()).map((record) => `${record.id} ${record.status}`)).toEqual([`${task.id} interrupted`])
  })

  it('a record the old store failed to write goes to the new one', async () => {
    const failing: TaskStore = {
      load: async () => [],
      put: () => new Promise((_, reject) => setTimeout(() => reject(new Error('the driver stopped')), 5)),
      delete: async () => {},
      flush: async () => {},
    }
    const engine = new BackgroundEngine({ store: failing })
    await engine.load()
    const { call } = slowCall('c1')
    const task = engine.adopt(call)
    const next = new GatedStore()
    next.open()
    await engine.useStore(next)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(next.puts.every((put) => put === `${task.id} running`)).toBe(true)
    expect(next.puts.length).toBeGreaterThan(0)
  })

  it('refuses something that is not a store', () => {
    expect(() => new BackgroundEngine().useStore({ load() {} } as never)).toThrow('useStore() expects a task store')
  })
})
