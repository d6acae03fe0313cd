import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineTool, type ToolCall, ToolRegistry } from '../src'
import { testGate } from './gate'

const session = { id: 's1' }

/** Lets every queued microtask and immediate run, so whatever can start has started. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => { resolve = r })
  return { promise, resolve }
}

/** A registry whose tools log start/end and track how many run at once. */
function tracked() {
  const log: string[] = []
  let running = 0
  let peak = 0
  const registry = new ToolRegistry()
  registry.permissions = testGate().gate
  const define = (name: string, traits: object, body: (call: ToolCall) => Promise<unknown> = settle) =>
    registry.define(defineTool({
      name,
      description: '',
      args: Schema.object({ tag: Schema.string().default('') }),
      traits,
      run: async ({ tag }, call) => {
        const label = tag || name
        log.push(`start ${label}`)
        peak = Math.max(peak, ++running)
        try {
          await body(call)
          return label
        } finally {
          running--
          log.push(`end ${label}`)
        }
      },
    }))
  return { registry, log, define, peak: () => peak }
}

const calls = (...specs: [string, string][]) => specs.map(([name, tag], i) => ({ id: `c${i}`, name, arguments: { tag } }))

describe('scheduling by traits', () => {
  it('runs parallel-safe calls together', async () => {
    const s = tracked()
    s.define('read', { effect: 'read' })
    await s.registry.toolset({ session }).execute(calls(['read', 'a'], ['read', 'b'], ['read', 'c']))
    expect(s.peak()).toBe(3)
  })

  it('runs a non-parallel call alone, in call order around it', async () => {
    const s = tracked()
    s.define('read', { effect: 'read' })
    s.define('write', { effect: 'write' })
    const results = await s.registry.toolset({ session }).execute(calls(['read', 'r1'], ['read', 'r2'], ['write', 'w1'], ['read', 'r3'], ['write', 'w2']))
    expect(results.map((r) => r.content)).toEqual(['r1', 'r2', 'w1', 'r3', 'w2'])
    expect(s.log).toEqual([
      'start r1', 'start r2', 'end r1', 'end r2',
      'start w1', 'end w1',
      'start r3', 'end r3',
      'start w2', 'end w2',
    ])
    expect(s.peak()).toBe(2)
  })

  it('keeps results in call order when later calls finish first', async () => {
    const s = tracked()
    const gates = [deferred(), deferred(), deferred()]
    let n = 0
    s.define('read', { effect: 'read' }, () => gates[n++].promise)
    const pending = s.registry.toolset({ session }).execute(calls(['read', 'first'], ['read', 'second'], ['read', 'third']))
    await settle()
    gates[2].resolve()
    await settle()
    gates[1].resolve()
    await settle()
    gates[0].resolve()
    const results = await pending
    expect(s.log.filter((e) => e.startsWith('end'))).toEqual(['end third', 'end second', 'end first'])
    expect(results.map((r) => r.content)).toEqual(['first', 'second', 'third'])
  })

  it('respects the pool size', async () => {
    const s = tracked()
    s.define('read', { effect: 'read' })
    const batch = Array.from({ length: 10 }, (_, i) => ['read', `r${i}`] as [string, string])
    const results = await s.registry.toolset({ session, concurrency: 3 }).execute(calls(...batch))
    expect(results.every((r) => r.status === 'ok')).toBe(true)
    expect(s.peak()).toBe(3)
  })

  it('caps a tool across sessions with traits.concurrency', async () => {
    const s = tracked()
    s.define('scrape', { effect: 'read', concurrency: 1 })
    const [a, b] = await Promise.all([
      s.registry.toolset({ session: { id: 'one' } }).execute(calls(['scrape', 'a1'], ['scrape', 'a2'])),
      s.registry.toolset({ session: { id: 'two' } }).execute(calls(['scrape', 'b1'])),
    ])
    expect([...a, ...b].map((r) => r.status)).toEqual(['ok', 'ok', 'ok'])
    expect(s.peak()).toBe(1)
  })
})

describe('cancellation', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('cancels the whole batch: running calls see their signal, queued calls never start', async () => {
    const s = tracked()
    const seen: boolean[] = []
    s.define('slow', { effect: 'write' }, (call) => new Promise((resolve) => {
      call.signal.addEventListener('abort', () => { seen.push(call.signal.aborted); resolve(undefined) })
    }))
    const controller = new AbortController()
    const pending = s.registry.toolset({ session }).execute(calls(['slow', 'one'], ['slow', 'two']), { signal: controller.signal })
    await settle()
    controller.abort()
    const results = await pending
    expect(results.map((r) => [r.status, r.code])).toEqual([['cancelled', 'cancelled'], ['cancelled', 'cancelled']])
    expect(results[0].content).toBe('Cancelled: the batch was cancelled.')
    expect(seen).toEqual([true])
    expect(s.log).toEqual(['start one', 'end one'])
  })

  it('reports a handler that ignores its signal as cancelled at once and drops its late result', async () => {
    const debug = vi.fn()
    const ends: string[] = []
    const registry = new ToolRegistry({
      logger: { debug, warn: vi.fn() },
      emit: (name: string, ...args: any[]) => { if (name === 'tools/call-end') ends.push(args[1].status) },
    })
    const late = deferred<string>()
    registry.define(defineTool({ name: 'stubborn', description: '', traits: { effect: 'read' }, run: () => late.promise }))
    const controller = new AbortController()
    const pending = registry.toolset({ session }).execute([{ id: '1', name: 'stubborn', arguments: '{}' }], { signal: controller.signal })
    await settle()
    controller.abort()
    const [result] = await pending
    expect(result.status).toBe('cancelled')
    late.resolve('too late')
    await settle()
    expect(ends).toEqual(['cancelled'])
    expect(debug).toHaveBeenCalledWith(expect.stringContaining('discarded the late'), 'result', 'stubborn', '1', 'cancelled')
  })

  it('cancels a call whose tool is unloaded mid-call', async () => {
    const registry = new ToolRegistry()
    const started = deferred()
    let aborted = false
    const dispose = registry.define(defineTool({
      name: 'long',
      description: '',
      traits: { effect: 'read' },
      run: (_, call) => new Promise(() => {
        call.signal.addEventListener('abort', () => { aborted = true })
        started.resolve()
      }),
    }))
    const pending = registry.toolset({ session }).execute([{ id: '1', name: 'long', arguments: '{}' }])
    await started.promise
    dispose()
    const [result] = await pending
    expect(result).toMatchObject({ status: 'cancelled', content: 'Cancelled: tool "long" was unloaded.' })
    expect(aborted).toBe(true)
  })

  it('times out with the last progress when background is off', async () => {
    vi.useFakeTimers()
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'crawl',
      description: '',
      traits: { effect: 'read', timeout: 5_000, background: false },
      run: (_, call) => new Promise(() => { call.progress('page 3 of 10') }),
    }))
    const pending = registry.toolset({ session }).execute([{ id: '1', name: 'crawl', arguments: '{}' }])
    await vi.advanceTimersByTimeAsync(4_999)
    let done = false
    pending.then(() => { done = true })
    await vi.advanceTimersByTimeAsync(0)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    const [result] = await pending
    expect(result).toMatchObject({ status: 'timed_out', code: 'timed_out', content: 'Timed out: timed out after 5s. Last progress: page 3 of 10' })
  })

  it('keeps the process alive while a call waits for its deadline, and not after', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'waits',
      description: '',
      traits: { effect: 'read', timeout: 60_000, background: false },
      // Waits for nothing but its own abort: only the deadline timer can end it.
      run: (_, call) => new Promise((resolve) => call.signal.addEventListener('abort', resolve)),
    }))
    const before = timers()
    const controller = new AbortController()
    const pending = registry.toolset({ session }).execute([{ id: '1', name: 'waits', arguments: '{}' }], { signal: controller.signal })
    await settle()
    expect(timers()).toBe(before + 1)
    controller.abort()
    expect((await pending)[0].status).toBe('cancelled')
    expect(timers()).toBe(before)
    registry.dispose()
  })

  it('lets a host lower the timeout per toolset', async () => {
    vi.useFakeTimers()
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'wait', description: '', traits: { effect: 'read', background: false }, run: () => new Promise(() => {}) }))
    const pending = registry.toolset({ session, timeout: 1_000 }).execute([{ id: '1', name: 'wait', arguments: '{}' }])
    await vi.advanceTimersByTimeAsync(1_000)
    expect((await pending)[0].status).toBe('timed_out')
  })
})
