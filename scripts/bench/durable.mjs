// What keeping questions across restarts (`permissions.durable`, on by default) costs, on the
// path users run: a Cordis app with the default plugin as docs/getting-started.md loads it, a
// write tool that asks, and an asker plugin that answers at once. Each asked call writes its
// request to pending.json and removes it at the answer; `durable: false` writes nothing. Both
// apps are measured in alternating rounds. Then a restart: N open requests in pending.json,
// and how long a new app takes until all of them are asked again.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { defineTool } from '../../packages/core/lib/index.js'
import { compareAll, formatNs, machineLoad, median, printLoad, printTable, writeResults } from './harness.mjs'

printLoad('at start')
const loadAtStart = machineLoad()

const { Context } = await import('cordis')
const { default: Dogu } = await import('../../packages/cordis/lib/index.js')
const dataDir = mkdtempSync(join(tmpdir(), 'dogu-bench-durable-'))
const session = { id: 'bench', userId: 'u1', platform: 'bench' }
const save = defineTool({ name: 'save', description: 'Saves a note', args: Schema.object({ note: Schema.string().required() }), traits: { effect: 'write' }, run: ({ note }) => `saved ${note}` })

let apps = 0
/** The default plugin in its own folder; an asker that allows at once (`answer`), or one that never answers. */
async function app(permissions, answer = true) {
  const app = new Context()
  const dir = join(dataDir, `app-${apps++}`)
  const fibers = []
  fibers.push(await app.plugin(Dogu, {
    permissions: { storePath: join(dir, 'permissions.json'), askTimeout: 600_000, ...permissions },
    background: { storePath: join(dir, 'tasks.json') },
    audit: { enabled: false },
  }))
  fibers.push(await app.plugin({
    name: 'notes',
    inject: ['tools', 'permissions'],
    apply(ctx) {
      ctx.tools.define(save)
      ctx.permissions.asker((request, context) => { if (answer) context.respond({ decision: 'allow', by: { id: 'u1', platform: 'bench' } }) })
    },
  }))
  return { app, dir, stop: () => stop(fibers) }
}

/** Stops an app as a restart would: its plugins disposed in reverse, its stores written. */
async function stop(fibers) {
  for (const fiber of fibers.reverse()) await fiber.dispose()
}

const durable = await app({})
const volatile = await app({ durable: false })
const calls = [{ id: 'c1', name: 'save', arguments: '{"note":"hi"}' }]
async function checked(ctx) {
  const toolset = ctx.tools.toolset({ session })
  const [result] = await toolset.execute(calls)
  if (result.status !== 'ok') throw new Error(`bench call failed: ${result.status} ${result.content}`)
  return () => toolset.execute(calls)
}
const askedDurable = await checked(durable.app)
const askedVolatile = await checked(volatile.app)

const ns = await compareAll({ durable: askedDurable, volatile: askedVolatile }, { iterations: 500, rounds: 9 })
const rows = [
  { case: 'an asked write call, answered at once: durable: false (baseline)', time: formatNs(ns.volatile), ratio: '1.00×' },
  { case: 'the same with durable (default): pending.json written and cleared', time: formatNs(ns.durable), ratio: `${(ns.durable / ns.volatile).toFixed(2)}×` },
]
printTable('asked call (per call, median of alternating rounds)', rows)

// A restart with N open requests: the first app asks N times and nobody answers; it stops;
// a second app on the same folder asks them all again.
const RESTART_N = process.env.DOGU_BENCH_QUICK ? 50 : 1_000
const asking = await app({}, false)
const toolset = asking.app.tools.toolset({ session })
const waits = Array.from({ length: RESTART_N }, (_, i) => toolset.execute([{ id: `w${i}`, name: 'save', arguments: `{"note":"n${i}"}` }]))
await waitUntil(() => asking.app.permissions.pending().length === RESTART_N, 'the first app to ask every call')
await asking.stop()
const interrupted = (await Promise.all(waits)).filter(([result]) => result.status === 'denied').length

const restarts = []
const rounds = process.env.DOGU_BENCH_QUICK ? 1 : 3
for (let round = 0; round < rounds; round++) {
  const started = performance.now()
  const again = new Context()
  let shown = 0
  const fibers = []
  fibers.push(await again.plugin(Dogu, { permissions: { storePath: join(asking.dir, 'permissions.json'), askTimeout: 600_000 }, background: { storePath: join(asking.dir, 'tasks.json') }, audit: { enabled: false } }))
  fibers.push(await again.plugin({ name: 'notes', inject: ['tools', 'permissions'], apply(ctx) { ctx.tools.define(save); ctx.permissions.asker(() => { shown++ }) } }))
  await waitUntil(() => shown === RESTART_N, 'the restarted app to ask every request again')
  restarts.push(performance.now() - started)
  await stop(fibers)
}
const restartMs = median(restarts)
printTable(`restart with ${RESTART_N} open requests`, [
  { what: 'calls that ended interrupted at the stop', value: `${interrupted} of ${RESTART_N}` },
  { what: 'start to every request asked again (median)', value: `${restartMs.toFixed(1)} ms (${(restartMs * 1000 / RESTART_N).toFixed(1)} µs per request)` },
])

await durable.stop()
await volatile.stop()
rmSync(dataDir, { recursive: true, force: true })
printLoad('at end')
writeResults('durable', {
  loadAtStart,
  askedCall: { durableNs: ns.durable, volatileNs: ns.volatile, ratio: ns.durable / ns.volatile },
  restart: { openRequests: RESTART_N, interrupted, medianMs: restartMs, rounds: restarts },
})

async function waitUntil(condition, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
