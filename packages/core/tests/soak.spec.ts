import { getEventListeners } from 'node:events'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, ToolRegistry, type ToolResult } from '../src'
import { soakWorkload } from '../../../scripts/soak-workload.mjs'
import { testGate } from './gate'

const session = { id: 'soak' }

/**
 * 10,000 calls through every ending a call can have, in batches whose outcome is fixed by
 * ordering, not by timing (scripts/soak-workload.mjs). What it holds is deterministic; the
 * heap over the same run is measured by `yarn bench soak` (scripts/bench/soak.mjs), with a
 * forced GC.
 */
describe('soak', () => {
  it('gives exactly one result per call and keeps no call, listener or rejection behind', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const processListeners = process.eventNames().map((name) => [name, process.listenerCount(name)])

    const registry = new ToolRegistry()
    registry.permissions = testGate().gate
    const { batch, expected, runBatch } = soakWorkload({ registry, defineTool, Schema, session })

    // Batches that settle without a cancel share one signal that never aborts: each batch
    // must take its abort listener off again.
    const settling = batch(0).filter((call) => call.name !== 'hangs')
    const shared = new AbortController()
    const toolset = registry.toolset({ session })

    let calls = 0
    const statuses = new Map<string, number>()
    for (let i = 0; i < 1250; i++) {
      const results = await runBatch<ToolResult>(i)
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
