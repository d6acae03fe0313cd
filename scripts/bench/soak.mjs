// Heap over a soak: 10,000 calls through every ending a call can have (the batches of
// packages/core/tests/soak.spec.ts, which checks what is deterministic: one result per call,
// no call or listener kept). 2,500 handlers never settle; if the pipeline kept them or their
// calls alive, the heap would grow with every batch. Measured after a forced GC, so it needs
// --expose-gc, which `yarn bench` passes. Needs the built packages (`node scripts/build.mjs`).
import Schema from 'schemastery'
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { soakWorkload } from '../soak-workload.mjs'
import { median, printTable, writeResults } from './harness.mjs'

if (typeof globalThis.gc !== 'function') {
  console.error('soak.mjs measures the heap after a forced GC: run it with node --expose-gc (yarn bench soak does)')
  process.exit(1)
}

// A few MB of slack covers JIT and allocator noise; a kept call costs far more per batch.
const BOUND = 8 * 1024 * 1024
const BATCHES = 1250
const ROUNDS = 5

const registry = new ToolRegistry()
registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
const { batch, expected, runBatch: run } = soakWorkload({ registry, defineTool, Schema })

async function runBatch(i) {
  const statuses = (await run(i)).map((result) => result.status).join(' ')
  if (statuses !== expected.join(' ')) throw new Error(`soak batch ${i} ended ${statuses}, expected ${expected.join(' ')}`)
}

function heapAfterGc() {
  globalThis.gc()
  return process.memoryUsage().heapUsed
}

// Warm up so the baseline includes compiled validators and JIT state.
for (let i = 0; i < 20; i++) await runBatch(i)

const growth = []
for (let round = 0; round < ROUNDS; round++) {
  const before = heapAfterGc()
  for (let i = 0; i < BATCHES; i++) await runBatch(i)
  await new Promise((resolve) => setImmediate(resolve))
  growth.push(heapAfterGc() - before)
}

const calls = BATCHES * batch(0).length
const figures = {
  calls,
  rounds: ROUNDS,
  heapGrowthBytes: median(growth),
  heapGrowthBytesPerRound: growth,
  boundBytes: BOUND,
  withinBound: median(growth) < BOUND,
}
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MB`
printTable(`heap growth over ${calls.toLocaleString('en')} calls (2,500 handlers never settle), after a forced GC`, [
  { case: 'median of rounds', growth: mb(figures.heapGrowthBytes), 'per call': `${(figures.heapGrowthBytes / calls).toFixed(0)} B`, bound: mb(BOUND) },
  ...growth.map((bytes, round) => ({ case: `round ${round + 1}`, growth: mb(bytes), 'per call': `${(bytes / calls).toFixed(0)} B`, bound: '' })),
])
writeResults('soak', figures)
if (!figures.withinBound) {
  console.error(`\nthe heap grew ${mb(figures.heapGrowthBytes)} over ${calls} calls, above the ${mb(BOUND)} bound: the pipeline keeps something per call`)
  process.exitCode = 1
}
