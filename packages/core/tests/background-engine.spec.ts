import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BackgroundEngine, type BackgroundEngineOptions } from '../src/background/background-engine'
import type { BackgroundTask } from '../src/background/background-task'
import { MemoryTaskStore } from '../src/background/task-store'
import { DoguError } from '../src/errors'
import { flush, memoryLogger, runningCall } from './background-helpers'

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 })
})

afterEach(() => {
  vi.useRealTimers()
})

async function start(options: BackgroundEngineOptions = {}) {
  const settled: BackgroundTask[] = []
  const engine = new BackgroundEngine({ onSettled: (task) => settled.push(task), ...options })
  await engine.load()
  return { engine, settled }
}

describe('BackgroundEngine: adopt and settle', () => {
  it('adopts a running call and settles it with the very result the call returned', async () => {
    const { engine, settled } = await start()
    const { call, settle } = runningCall({ id: 's1', userId: 'u1' }, 'deploy')
    const task = engine.adopt(call)
    expect(task).toEqual({ id: task.id, tool: 'deploy', callId: call.callId, session: { id: 's1', userId: 'u1' }, status: 'running', startedAt: 1_000_000 })
    expect(task.id).toMatch(/^task_[0-9a-f]{12}$/)
    expect(Object.isFrozen(task)).toBe(true)
    expect(engine.get(task.id)).toBe(task)
    expect(engine.list()).toEqual([task])

    vi.setSystemTime(1_005_000)
    const result = settle('ok', 'deployed')
    await flush()
    const done = engine.get(task.id)!
    expect(done).toEqual({ ...task, status: 'succeeded', settledAt: 1_005_000, result })
    expect(done.result).toBe(result)
    expect(settled).toEqual([done])
    // The record handed out earlier did not change under its reader.
    expect(task.status).toBe('running')
  })

  it.each([
    ['ok', 'succeeded'],
    ['error', 'failed'],
    ['denied', 'failed'],
    ['timed_out', 'failed'],
    ['cancelled', 'cancelled'],
  ] as const)('maps a result %s to the task status %s', async (status, taskStatus) => {
    const { engine } = await start()
    const { call, settle } = runningCall()
    const task = engine.adopt(call)
    settle(status, 'x')
    await flush()
    expect(engine.get(task.id)!.status).toBe(taskStatus)
  })

  it('records a rejected result promise as failed rather than losing the task', async () => {
    const { engine } = await start()
    const { call } = runningCall()
    const task = engine.adopt({ ...call, result: Promise.reject(new Error('broken port')) })
    await flush()
    expect(engine.get(task.id)).toMatchObject({ status: 'failed', result: { status: 'error', content: 'Error: broken port', code: 'tool_error' } })
  })

  it('refuses to adopt before load() and after dispose(), with a coded error', async () => {
    const fresh = new BackgroundEngine()
    expect(() => fresh.adopt(runningCall().call)).toThrow(expect.objectContaining({ code: 'INACTIVE' }))
    await fresh.load()
    await expect(fresh.load()).rejects.toSatisfy((error) => DoguError.is(error, 'INACTIVE'))
    await fresh.dispose()
    expect(() => fresh.adopt(runningCall().call)).toThrow(DoguError)
    expect(() => fresh.adopt(runningCall().call)).toThrow('the background engine is disposed')
  })

  it('refuses a malformed running call', async () => {
    const { engine } = await start()
    expect(() => engine.adopt({} as any)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
    expect(engine.list()).toEqual([])
  })

  it('reports a throwing settled listener and keeps going', async () => {
    const { lines, logger } = memoryLogger()
    const { engine } = await start({ logger, onSettled: () => { throw new Error('listener broke') } })
    const { call, settle } = runningCall()
    const task = engine.adopt(call)
    settle('ok', 'fine')
    await flush()
    expect(engine.get(task.id)!.status).toBe('succeeded')
    expect(lines).toContain('warn: a background/settled listener threw: Error: listener broke')
  })
})

describe('BackgroundEngine: list', () => {
  it('filters by session (object or id) and status, in start order', async () => {
    const { engine } = await start()
    const a = runningCall({ id: 's1' })
    const b = runningCall({ id: 's2' })
    const c = runningCall({ id: 's1' })
    const [ta, tb, tc] = [engine.adopt(a.call), engine.adopt(b.call), engine.adopt(c.call)]
    a.settle('ok', 'done')
    await flush()
    expect(engine.list({ session: 's1' }).map((t) => t.id)).toEqual([ta.id, tc.id])
    expect(engine.list({ session: { id: 's2' } }).map((t) => t.id)).toEqual([tb.id])
    expect(engine.list({ status: 'running' }).map((t) => t.id)).toEqual([tb.id, tc.id])
    expect(engine.list({ session: 's1', status: ['succeeded', 'failed'] }).map((t) => t.id)).toEqual([ta.id])
    expect(() => engine.list({ status: 'done' as any })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'unknown task status "done"' }))
  })

  it('treats ids as untrusted: no prototype lookups', async () => {
    const { engine } = await start()
    expect(engine.get('__proto__')).toBeUndefined()
    expect(engine.get('constructor')).toBeUndefined()
    expect(engine.get(42 as any)).toBeUndefined()
  })
})

describe('BackgroundEngine: wait', () => {
  it('resolves with the settled record as soon as the task settles', async () => {
    const { engine } = await start()
    const { call, settle } = runningCall()
    const task = engine.adopt(call)
    const waited = engine.wait(task.id, { timeout: 60_000 })
    const result = settle('ok', 'done')
    expect(await waited).toMatchObject({ id: task.id, status: 'succeeded', result })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('resolves with the running record when the timeout passes first', async () => {
    const { engine } = await start()
    const task = engine.adopt(runningCall().call)
    let outcome: BackgroundTask | undefined
    void engine.wait(task.id, { timeout: 1_000 }).then((value) => { outcome = value })
    await vi.advanceTimersByTimeAsync(999)
    expect(outcome).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(outcome).toBe(task)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('rejects with the signal\'s reason on abort and clears its timer', async () => {
    const { engine } = await start()
    const task = engine.adopt(runningCall().call)
    const controller = new AbortController()
    const waited = engine.wait(task.id, { timeout: 60_000, signal: controller.signal })
    expect(vi.getTimerCount()).toBe(1)
    controller.abort(new Error('caller left'))
    await expect(waited).rejects.toThrow('caller left')
    expect(vi.getTimerCount()).toBe(0)
    await expect(engine.wait(task.id, { timeout: 1, signal: controller.signal })).rejects.toThrow('caller left')
  })

  it('answers at once for settled, unknown and zero-timeout waits', async () => {
    const { engine } = await start()
    const { call, settle } = runningCall()
    const task = engine.adopt(call)
    expect(await engine.wait(task.id, { timeout: 0 })).toBe(task)
    expect(await engine.wait('task_nope', { timeout: 5_000 })).toBeUndefined()
    settle('error', 'Error: boom')
    await flush()
    expect(await engine.wait(task.id, { timeout: 5_000 })).toMatchObject({ status: 'failed' })
    expect(vi.getTimerCount()).toBe(0)
  })

  it.each([undefined, {}, { timeout: -1 }, { timeout: Infinity }, { timeout: Number.NaN }])('needs a finite timeout: %o', async (options) => {
    const { engine } = await start()
    expect(() => engine.wait('task_x', options as any)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
  })
})

describe('BackgroundEngine: cancel', () => {
  it('aborts the call through cancel() and resolves with the cancelled record', async () => {
    const { engine, settled } = await start()
    const { call, cancels } = runningCall()
    const task = engine.adopt(call)
    const after = await engine.cancel(task.id, 'user asked')
    expect(cancels).toEqual(['user asked'])
    expect(after).toMatchObject({ id: task.id, status: 'cancelled', result: { status: 'cancelled', content: 'Cancelled: user asked.' } })
    expect(settled).toEqual([after])
    // Cancelling again changes nothing.
    expect(await engine.cancel(task.id)).toBe(after)
    expect(cancels).toHaveLength(1)
    expect(await engine.cancel('task_unknown')).toBeUndefined()
  })

  it('gives up waiting after cancelTimeout when the call does not settle', async () => {
    const { engine } = await start({ cancelTimeout: 2_000 })
    const { call } = runningCall()
    const task = engine.adopt({ ...call, cancel: () => {} })
    let outcome: BackgroundTask | undefined
    void engine.cancel(task.id).then((value) => { outcome = value })
    await vi.advanceTimersByTimeAsync(2_000)
    expect(outcome).toMatchObject({ id: task.id, status: 'running' })
  })
})

describe('BackgroundEngine: restart and dispose', () => {
  it('brings a task that was running back as interrupted after a restart, and stores it so', async () => {
    const store = new MemoryTaskStore()
    const first = await start({ store })
    const done = runningCall()
    const doneTask = first.engine.adopt(done.call)
    done.settle('ok', 'finished')
    const lost = first.engine.adopt(runningCall().call)
    await flush()
    // The process dies: no dispose. A new engine loads the same store.
    vi.setSystemTime(2_000_000)
    const second = await start({ store })
    expect(second.engine.get(lost.id)).toEqual({ ...lost, status: 'interrupted', settledAt: 2_000_000 })
    expect(second.engine.get(doneTask.id)).toMatchObject({ status: 'succeeded', result: { content: 'finished' } })
    expect((await store.load()).find((task) => task.id === lost.id)).toMatchObject({ status: 'interrupted' })
    // Announced as it comes back (its channel is told, the audit log records its end); the finished one is not again.
    expect(second.settled).toEqual([{ ...lost, status: 'interrupted', settledAt: 2_000_000 }])
    const third = await start({ store })
    expect(third.settled).toEqual([])
  })

  it('on dispose aborts running calls, records them interrupted, ends waits and drops late results', async () => {
    const store = new MemoryTaskStore()
    const { lines, logger } = memoryLogger()
    const { engine, settled } = await start({ store, logger })
    const { call, cancels } = runningCall()
    const task = engine.adopt(call)
    const waited = engine.wait(task.id, { timeout: 60_000 })
    vi.setSystemTime(1_001_000)
    const disposed = engine.dispose()
    expect(engine.dispose()).toBe(disposed)
    await disposed
    expect(cancels).toEqual(['the background service stopped'])
    const interrupted = { ...task, status: 'interrupted', settledAt: 1_001_000 }
    expect(await waited).toEqual(interrupted)
    expect(engine.get(task.id)).toEqual(interrupted)
    expect(await store.load()).toEqual([interrupted])
    expect(settled).toEqual([])
    expect(vi.getTimerCount()).toBe(0)
    await flush()
    expect(lines.filter((line) => line.startsWith('debug'))).toEqual([`debug: dropped the late result of background task ${task.id} (cancelled)`])
    expect(engine.active).toBe(false)
  })

  it('reports store failures without failing the call', async () => {
    const { lines, logger } = memoryLogger()
    const store = new MemoryTaskStore()
    store.put = () => Promise.reject(new Error('disk full'))
    const { engine } = await start({ store, logger })
    const task = engine.adopt(runningCall().call)
    await flush()
    expect(engine.get(task.id)!.status).toBe('running')
    expect(lines).toContain('warn: writing to the background task store failed: Error: disk full')
  })
})

describe('BackgroundEngine: untrusted input', () => {
  it('records a malformed result as failed', async () => {
    const { engine } = await start()
    const { call } = runningCall()
    const task = engine.adopt({ ...call, result: Promise.resolve({ nonsense: true } as any) })
    await flush()
    expect(engine.get(task.id)).toMatchObject({ status: 'failed', result: { status: 'error', content: 'Error: the call settled without a valid result' } })
  })

  it('ignores and reports invalid records a custom store returns', async () => {
    const { lines, logger } = memoryLogger()
    const good = { id: 'task_good', tool: 't', callId: 'c', session: { id: 's' }, status: 'succeeded', startedAt: 1, settledAt: 2 } as const
    const store = new MemoryTaskStore([good, { id: 'task_bad' } as any])
    const { engine } = await start({ store, logger })
    expect(engine.list()).toEqual([good])
    expect(lines).toContain('warn: the background task store returned 1 invalid record(s); they were ignored')
  })
})
