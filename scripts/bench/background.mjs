// The cost of a background handoff: a call that outlives its timeout is adopted by the
// background engine and later settles there. Figures are per call, against a plain call
// through `execute()` measured in the same run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BackgroundEngine, defineTool, JsonFileTaskStore, ToolRegistry } from '../../packages/core/lib/index.js'
import { compare, formatNs, printTable, writeResults } from './harness.mjs'

const session = { id: 'bench', userId: 'u1' }
const okResult = { id: 'c1', name: 'slow', status: 'ok', content: 'done', durationMs: 1 }
const rows = []
const figures = {}

// The yardstick: one ordinary call of a trivial read tool through the whole pipeline.
const plainRegistry = new ToolRegistry()
plainRegistry.define(defineTool({ name: 'echo', description: 'Echo', traits: { effect: 'read' }, run: () => 'done' }))
const plainToolset = plainRegistry.toolset({ session })
const plainCall = [{ id: 'c1', name: 'echo', arguments: '{}' }]
const plain = () => plainToolset.execute(plainCall)

/** adopt() + settle of one running call, awaited until `background/settled` fires. */
async function engineHandoff(store) {
  let settled
  const engine = new BackgroundEngine({ store, onSettled: () => settled() })
  await engine.load()
  const handoff = () => new Promise((resolve) => {
    settled = resolve
    engine.adopt({ callId: 'c1', tool: 'slow', session, args: {}, startedAt: Date.now(), result: Promise.resolve(okResult), cancel() {} })
  })
  return { engine, handoff }
}

{
  const { engine, handoff } = await engineHandoff(undefined)
  const result = await compare(handoff, plain, { iterations: 20_000 })
  figures.handoffMemory = result
  rows.push({ case: 'adopt + settle, memory store (200 kept)', handoff: formatNs(result.subjectNs), 'plain call': formatNs(result.baselineNs), ratio: result.ratio.toFixed(2) + '×' })
  await engine.dispose()
}

{
  const dir = mkdtempSync(join(tmpdir(), 'dogu-bench-background-'))
  try {
    const store = new JsonFileTaskStore(join(dir, 'tasks.json'))
    const { engine, handoff } = await engineHandoff(store)
    // File writes are coalesced: the figure includes the writes, flushed at the end of a round.
    const flushing = async (i) => {
      await handoff()
      if (i % 1000 === 999) await store.flush()
    }
    const result = await compare(flushing, plain, { iterations: 2_000, rounds: 5 })
    figures.handoffJsonFile = result
    rows.push({ case: 'adopt + settle, JSON file store (200 kept)', handoff: formatNs(result.subjectNs), 'plain call': formatNs(result.baselineNs), ratio: result.ratio.toFixed(2) + '×' })
    await engine.dispose()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

{
  // End to end: 1,000 parallel calls time out (1 ms), are handed to the background, and
  // settle there; against the same 1,000 calls returning at once. The 1 ms deadline is
  // included, amortized over the batch (1 µs per call).
  const batch = 1_000
  const calls = Array.from({ length: batch }, (_, i) => ({ id: `c${i}`, name: 'slow', arguments: '{}' }))
  let release
  let gate = new Promise((resolve) => { release = resolve })
  let pending = 0
  let allSettled
  const slowRegistry = new ToolRegistry()
  slowRegistry.define(defineTool({ name: 'slow', description: 'Slow', traits: { effect: 'read', timeout: 1 }, run: () => gate.then(() => 'done') }))
  const engine = new BackgroundEngine({ limits: { maxTasks: batch }, onSettled: () => { if (--pending === 0) allSettled() } })
  await engine.load()
  slowRegistry.background = engine
  const slowToolset = slowRegistry.toolset({ session, concurrency: batch })
  const backgroundBatch = async () => {
    pending = batch
    const done = new Promise((resolve) => { allSettled = resolve })
    const results = await slowToolset.execute(calls)
    if (results[0].status !== 'background') throw new Error(`expected a background result, got ${results[0].status}`)
    release()
    await done
    gate = new Promise((resolve) => { release = resolve })
  }
  const fastRegistry = new ToolRegistry()
  fastRegistry.define(defineTool({ name: 'slow', description: 'Slow', traits: { effect: 'read' }, run: async () => 'done' }))
  const fastToolset = fastRegistry.toolset({ session, concurrency: batch })
  const fastBatch = () => fastToolset.execute(calls)
  // Alternating rounds, as elsewhere, so the VM's drift hits both alike.
  const perBatch = await compare(backgroundBatch, fastBatch, { iterations: 20, rounds: 7 })
  const result = { subjectNs: perBatch.subjectNs / batch, baselineNs: perBatch.baselineNs / batch, ratio: perBatch.ratio }
  figures.batchBackground = result
  rows.push({ case: '1,000-call batch: timeout → background → settle', handoff: formatNs(result.subjectNs), 'plain call': formatNs(result.baselineNs), ratio: result.ratio.toFixed(2) + '×' })
  await engine.dispose()
}

printTable('Background handoff, per call (median of rounds)', rows)
writeResults('background', figures)
