import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BackgroundEngine, type BackgroundEngineOptions } from '../src/background/background-engine'
import { capResult, selectEvictions } from '../src/background/retention'
import { MemoryTaskStore } from '../src/background/task-store'
import type { ToolResult } from '../src/tool-result'
import { flush, runningCall } from './background-helpers'

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 })
})

afterEach(() => {
  vi.useRealTimers()
})

async function start(limits: BackgroundEngineOptions['limits']) {
  const store = new MemoryTaskStore()
  const deleted: string[][] = []
  const remove = store.delete.bind(store)
  store.delete = (ids) => {
    deleted.push([...ids])
    return remove(ids)
  }
  const engine = new BackgroundEngine({ store, limits })
  await engine.load()
  return { engine, store, deleted }
}

describe('retention: count', () => {
  it('evicts the oldest settled tasks beyond maxTasks, explicitly, from memory and the store', async () => {
    const { engine, store, deleted } = await start({ maxTasks: 3 })
    const calls = [runningCall(), runningCall(), runningCall(), runningCall()]
    const tasks = calls.map(({ call }) => engine.adopt(call))
    // Four running tasks over a limit of three: none is evicted.
    expect(engine.list()).toHaveLength(4)
    // Settle in the order 2, 0, 3: the oldest settled go first, whatever their start.
    for (const index of [2, 0, 3]) {
      calls[index].settle('ok', `done ${index}`)
      await flush()
    }
    expect(deleted).toEqual([[tasks[2].id]])
    expect(engine.list().map((task) => task.id)).toEqual([tasks[0].id, tasks[1].id, tasks[3].id])
    expect(engine.get(tasks[2].id)).toBeUndefined()
    expect((await store.load()).map((task) => task.id).sort()).toEqual([tasks[0].id, tasks[1].id, tasks[3].id].sort())
    // Adopting a fifth evicts the next oldest settled one (task 0), not a running one.
    const fifth = engine.adopt(runningCall().call)
    expect(deleted).toEqual([[tasks[2].id], [tasks[0].id]])
    expect(engine.list().map((task) => task.id)).toEqual([tasks[1].id, tasks[3].id, fifth.id])
  })

  it('never evicts running tasks, even far over the limit', async () => {
    const { engine, deleted } = await start({ maxTasks: 1 })
    for (let i = 0; i < 5; i++) engine.adopt(runningCall().call)
    expect(engine.list({ status: 'running' })).toHaveLength(5)
    expect(deleted).toEqual([])
  })
})

describe('retention: age', () => {
  it('evicts settled tasks older than maxAgeMs since they settled, never running ones', async () => {
    const { engine, deleted } = await start({ maxAgeMs: 60_000 })
    const old = runningCall()
    const oldTask = engine.adopt(old.call)
    const running = engine.adopt(runningCall().call)
    old.settle('ok', 'done')
    await flush()
    vi.setSystemTime(1_060_000)
    expect(engine.get(oldTask.id)).toMatchObject({ status: 'succeeded' })
    vi.setSystemTime(1_060_001)
    expect(engine.get(oldTask.id)).toBeUndefined()
    expect(deleted).toEqual([[oldTask.id]])
    vi.setSystemTime(9_000_000)
    expect(engine.list()).toEqual([running])
  })

  it('applies limits to what a restart loads', async () => {
    const store = new MemoryTaskStore()
    const first = new BackgroundEngine({ store })
    await first.load()
    const call = runningCall()
    const task = first.adopt(call.call)
    call.settle('ok', 'done')
    await flush()
    vi.setSystemTime(1_000_000 + 8 * 24 * 3600_000)
    const second = new BackgroundEngine({ store })
    await second.load()
    expect(second.get(task.id)).toBeUndefined()
    expect(await store.load()).toEqual([])
  })
})

describe('retention: result size', () => {
  const result = (extra: Partial<ToolResult>): ToolResult => ({ id: 'c', name: 't', status: 'ok', content: 'short', durationMs: 1, ...extra })

  it('keeps a result that fits as the same object', () => {
    const small = result({ data: { a: 1 } })
    expect(capResult(small, 100)).toBe(small)
  })

  it('cuts long content with a marker and drops oversized or unserializable fields with a note', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const big = result({ content: 'x'.repeat(30), data: { text: 'y'.repeat(50) }, artifacts: [{ kind: 'k', cyclic }], images: [{ mimeType: 'image/png', data: 'AAAA' }] })
    const capped = capResult(big, 20)
    expect(capped).not.toBe(big)
    expect(capped.data).toBeUndefined()
    expect(capped.artifacts).toBeUndefined()
    expect(capped.images).toBeUndefined()
    expect(capped.content).toBe(`${'x'.repeat(20)}\n…[truncated: 10 more characters]\n`
      + '[data omitted: 61 characters is over the background store\'s limit of 20]\n'
      + '[images omitted: 40 characters is over the background store\'s limit of 20]\n'
      + '[artifacts omitted: it cannot be stored as JSON]')
    // The caller's object is untouched.
    expect(big.content).toHaveLength(30)
    expect(big.data).toBeDefined()
  })

  it('is applied when a task settles', async () => {
    const { engine } = await start({ maxResultLength: 10 })
    const call = runningCall()
    const task = engine.adopt(call.call)
    call.settle('ok', 'abcdefghijKLMN')
    await flush()
    expect(engine.get(task.id)!.result!.content).toBe('abcdefghij\n…[truncated: 4 more characters]')
  })
})

describe('retention: selectEvictions', () => {
  const task = (id: string, settledAt: number) => ({ id, tool: 't', callId: id, session: { id: 's' }, status: 'succeeded' as const, startedAt: 0, settledAt })
  const limits = { maxTasks: 2, maxAgeMs: 100, maxResultLength: 10 }

  it('stops at the first task that is young enough while the count fits', () => {
    expect(selectEvictions([task('a', 950), task('b', 960), task('c', 990)], 3, limits, 1000)).toEqual(['a'])
    expect(selectEvictions([task('a', 850), task('b', 960)], 2, limits, 1000)).toEqual(['a'])
    expect(selectEvictions([task('a', 950), task('b', 960)], 2, limits, 1000)).toEqual([])
    // Three running tasks plus two settled, limit two: both settled go, the running stay.
    expect(selectEvictions([task('a', 950), task('b', 960)], 5, limits, 1000)).toEqual(['a', 'b'])
  })

  it('refuses nonsensical limits with a coded error', () => {
    expect(() => new BackgroundEngine({ limits: { maxTasks: 0 } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
    expect(() => new BackgroundEngine({ limits: { maxAgeMs: Number.NaN } })).toThrow('retention limit maxAgeMs must be a number, 1 or more (got null)')
  })
})
