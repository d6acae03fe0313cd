import { getEventListeners } from 'node:events'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, ToolRegistry, type ToolResult } from '../src'
import { testGate } from './gate'

const session = { id: 'soak' }

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => { resolve = r })
  return { promise, resolve }
}

/**
 * 10,000 calls through every ending a call can have. Each batch is built so its outcome
 * is fixed by ordering, not by timing: the hanging calls start only after the exclusive
 * timing-out call has ended, and the batch is cancelled once both hangs are running.
 * What it holds is deterministic; the heap over the same run is measured by
 * `yarn bench soak` (scripts/bench/soak.mjs), with a forced GC.
 */
describe('soak', () => {
  it('gives exactly one result per call and keeps no call, listener or rejection behind', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const processListeners = process.eventNames().map((name) => [name, process.listenerCount(name)])

    const registry = new ToolRegistry()
    registry.permissions = testGate().gate
    let hanging = 0
    let bothHanging = deferred()
    const args = Schema.object({ n: Schema.natural().default(0) })
    registry.define(defineTool({ name: 'read_ok', description: '', args, traits: { effect: 'read' }, run: ({ n }) => `r${n}` }))
    registry.define(defineTool({ name: 'write_ok', description: '', args, traits: { effect: 'write' }, run: async ({ n }) => ({ text: `w${n}`, data: { n } }) }))
    registry.define(defineTool({ name: 'fails', description: '', args, traits: { effect: 'read' }, run: async () => { throw new Error('nope') } }))
    registry.define(defineTool({ name: 'too_slow', description: '', args, traits: { effect: 'exec', timeout: 1, background: false }, run: () => new Promise(() => {}) }))
    registry.define(defineTool({
      name: 'hangs',
      description: '',
      args,
      traits: { effect: 'read' },
      // Ignores its signal on purpose: the pipeline must still end the call.
      run: () => new Promise(() => { if (++hanging % 2 === 0) bothHanging.resolve() }),
    }))

    const batch = (i: number) => [
      { id: `${i}-0`, name: 'read_ok', arguments: `{"n":${i}}` },
      { id: `${i}-1`, name: 'write_ok', arguments: { n: i } },
      { id: `${i}-2`, name: 'fails', arguments: '{}' },
      { id: `${i}-3`, name: 'read_ok', arguments: '{"n":"bad"}' },
      { id: `${i}-4`, name: 'too_slow', arguments: '{}' },
      { id: `${i}-5`, name: 'hangs', arguments: '{}' },
      { id: `${i}-6`, name: 'hangs', arguments: '{}' },
      { id: `${i}-7`, name: 'missing', arguments: '{}' },
    ]
    const expected = ['ok', 'ok', 'error', 'error', 'timed_out', 'cancelled', 'cancelled', 'error']

    const runBatch = async (i: number): Promise<ToolResult[]> => {
      const controller = new AbortController()
      bothHanging = deferred()
      const pending = registry.toolset({ session }).execute(batch(i), { signal: controller.signal })
      await bothHanging.promise
      controller.abort()
      return pending
    }

    // Batches that settle without a cancel share one signal that never aborts: each batch
    // must take its abort listener off again.
    const settling = batch(0).filter((call) => call.name !== 'hangs')
    const shared = new AbortController()
    const toolset = registry.toolset({ session })

    let calls = 0
    const statuses = new Map<string, number>()
    for (let i = 0; i < 1250; i++) {
      const results = await runBatch(i)
      expect(results.map((r) => r.id)).toEqual(batch(i).map((c) => c.id))
      expect(results.map((r) => r.status)).toEqual(expected)
      calls += results.length
      for (const result of results) statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1)
    }
    for (let i = 0; i < 250; i++) {
      const results = await toolset.execute(settling, { signal: shared.signal })
      expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'error', 'error', 'timed_out', 'error'])
    }
    await new Promise((resolve) => setImmediate(resolve))
    const leftListeners = process.eventNames().map((name) => [name, process.listenerCount(name)])
    process.off('unhandledRejection', onUnhandled)

    expect(calls).toBe(10_000)
    expect(Object.fromEntries(statuses)).toEqual({ ok: 2500, error: 3750, timed_out: 1250, cancelled: 2500 })
    expect(unhandled).toEqual([])
    expect(toolset.size).toBe(5)
    // 2,500 handlers never settle; the pipeline must still forget their calls.
    expect(registry.running.active()).toEqual([])
    expect(getEventListeners(shared.signal, 'abort')).toEqual([])
    expect(leftListeners).toEqual(processListeners)
  }, 60_000)
})
