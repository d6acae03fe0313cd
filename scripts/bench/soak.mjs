// Heap over a soak: 10,000 calls through every ending a call can have (the batches of
// packages/core/tests/soak.spec.ts, which checks what is deterministic: one result per call,
// no call or listener kept). 2,500 handlers never settle; if the pipeline kept them or their
// calls alive, the heap would grow with every batch. Measured after a forced GC, so it needs
// --expose-gc, which `yarn bench` passes. Needs the built packages (`node scripts/build.mjs`).
import Schema from 'schemastery'
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { median, printTable, writeResults } from './harness.mjs'

if (typeof globalThis.gc !== 'function') {
  console.error('soak.mjs measures the heap after a forced GC: run it with node --expose-gc (yarn bench soak does)')
  process.exit(1)
}

// A few MB of slack covers JIT and allocator noise; a kept call costs far more per batch.
const BOUND = 8 * 1024 * 1024
const BATCHES = 1250
const ROUNDS = 5

const session = { id: 'soak' }
const registry = new ToolRegistry()
registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
let hanging = 0
let bothHanging
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
  run: () => new Promise(() => { if (++hanging % 2 === 0) bothHanging() }),
}))

const batch = (i) => [
  { id: `${i}-0`, name: 'read_ok', arguments: `{"n":${i}}` },
  { id: `${i}-1`, name: 'write_ok', arguments: { n: i } },
  { id: `${i}-2`, name: 'fails', arguments: '{}' },
  { id: `${i}-3`, name: 'read_ok', arguments: '{"n":"bad"}' },
  { id: `${i}-4`, name: 'too_slow', arguments: '{}' },
  { id: `${i}-5`, name: 'hangs', arguments: '{}' },
  { id: `${i}-6`, name: 'hangs', arguments: '{}' },
  { id: `${i}-7`, name: 'missing', arguments: '{}' },
]
const expected = 'ok ok error error timed_out cancelled cancelled error'

async function runBatch(i) {
  const controller = new AbortController()
  const started = new Promise((resolve) => { bothHanging = resolve })
  const pending = registry.toolset({ session }).execute(batch(i), { signal: controller.signal })
  await started
  controller.abort()
  const results = await pending
  const statuses = results.map((result) => result.status).join(' ')
  if (statuses !== expected) throw new Error(`soak batch ${i} ended ${statuses}, expected ${expected}`)
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
