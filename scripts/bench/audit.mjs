// The audit log's cost (issue 44): what a record costs the call (the default plugin with
// auditing on against off, same run, rounds alternated; and the log's own two entry points
// alone), what writing a record costs in CPU (JSON Lines, memory, SQLite through minato's
// driver), and the queue under 100,000 calls that never yield to the event loop.
// DOGU_BENCH_LIB points it at another build of the core and the Cordis plugin (one module
// exporting both, as `Dogu`): how it was measured against the sources without `yarn build`.
import Schema from 'schemastery'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { formatNs, median, pairedDelta, printTable, root, writeResults } from './harness.mjs'

const lib = process.env.DOGU_BENCH_LIB
const core = await import(lib ? pathToFileURL(resolve(lib)).href : '../../packages/core/lib/index.js')
const Dogu = lib ? core.Dogu : (await import('../../packages/cordis/lib/index.js')).default
const { AuditLog, DatabaseAuditStore, JsonlAuditStore, MemoryAuditStore, defineTool } = core
const { Context } = await import('cordis')

const dir = mkdtempSync(join(tmpdir(), 'dogu-bench-audit-'))
const session = { id: 'bench', userId: 'u1', platform: 'discord' }
const args = Schema.object({ city: Schema.string().required(), unit: Schema.union(['c', 'f']).default('c'), days: Schema.natural().max(14).default(1) })
const handler = async ({ city, unit }) => `${city}: 21°${unit}`
const call = [{ id: 'c1', name: 'weather', arguments: '{"city":"Hangzhou","unit":"c","days":3}' }]
const figures = {}
const rows = []
let apps = 0

async function pluginApp(audit) {
  const app = new Context()
  const n = apps++
  await app.plugin(Dogu, {
    permissions: { storePath: join(dir, `grants-${n}.json`) },
    background: { storePath: join(dir, `tasks-${n}.json`) },
    audit: { storePath: join(dir, `audit-${n}.jsonl`), ...audit },
  })
  await app.plugin({ name: 'weather', inject: ['tools'], apply: (ctx) => { ctx.tools.define(defineTool({ name: 'weather', description: 'Weather', args, traits: { effect: 'read' }, run: handler })) } })
  const toolset = app.tools.toolset({ session })
  const [result] = await toolset.execute(call)
  if (result.status !== 'ok') throw new Error(`bench call failed: ${result.status} ${result.content}`)
  return { app, run: () => toolset.execute(call) }
}

// 1. The default plugin, auditing on (to audit.jsonl, writes included) against off.
const on = await pluginApp({})
const off = await pluginApp({ enabled: false })
const plugin = await pairedDelta(off.run, on.run, { rounds: 15 })
figures.pluginAuditOnVsOff = { ...plugin, ratio: plugin.subjectNs / plugin.baselineNs }
rows.push({ case: 'default plugin, audit on (JSONL, writes included) vs off', cost: `+${formatNs(plugin.deltaNs)} (median of pairs +${formatNs(plugin.medianDeltaNs)})`, ratio: `${figures.pluginAuditOnVsOff.ratio.toFixed(2)}×`, target: '—' })

// 2. The call path alone: the two entry points a call reaches (its decision, its end), with
// the writes done between timed stretches.
const decisionSource = { kind: 'default', effect: 'read' }
const request = { tool: 'weather', args: { city: 'Hangzhou', unit: 'c', days: 3 }, session, callId: 'c1', permission: { name: 'tool:weather' } }
const event = { phase: 'authorize', decision: 'allow', source: decisionSource, request, at: Date.now() }
const info = { id: 'c1', name: 'weather', session, args: request.args, startedAt: Date.now(), permission: request.permission }
const result = { status: 'ok', content: 'Hangzhou: 21°c', durationMs: 0 }
const silent = new AuditLog({ store: { append: async () => {}, query: async () => [], prune: async () => 0 }, batchSize: 1e9, flushInterval: 1e9 })
const stretch = 2_000
const pathSamples = []
for (let round = 0; round < 60; round++) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < stretch; i++) {
    silent.onDecision(event)
    silent.onCallEnd(info, result)
  }
  const ns = Number(process.hrtime.bigint() - start) / stretch
  await silent.flush()
  if (round >= 10) pathSamples.push(ns)
}
figures.callPathNs = { median: median(pathSamples), fastest: Math.min(...pathSamples) }
rows.push({ case: "a record's cost on the call path (onDecision + onCallEnd)", cost: `${formatNs(figures.callPathNs.fastest)} (median ${formatNs(figures.callPathNs.median)})`, ratio: '', target: '≤ 150 ns' })

// 3. Writing: CPU per record (finishing, serializing, the store's own work), batches of 100,
// in the steady state a running bot is in: after a warm-up, the median of five stretches
// (one stretch of 20,000 right after start-up measured the JIT's first passes, 3.4 µs).
async function writing(name, store, count = 20_000, stretches = 5) {
  const log = new AuditLog({ store, maxRecords: 1_000_000, flushInterval: 1e9 })
  await log.ready
  const calls = Array.from({ length: 100 }, (_, i) => ({ ...info, id: `c${i}` }))
  const warm = async (n) => {
    for (let done = 0; done < n; done += 100) {
      for (const one of calls) { log.onDecision(event); log.onCallEnd(one, result) }
      await log.flush()
    }
  }
  await warm(count / 2)
  const cpuSamples = []
  const rates = []
  for (let stretch = 0; stretch < stretches; stretch++) {
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    await warm(count)
    const used = process.cpuUsage(cpu)
    const wall = Number(process.hrtime.bigint() - start) / 1e9
    cpuSamples.push((used.user + used.system) / count)
    rates.push(count / wall)
  }
  await log.stop()
  const cpuUs = median(cpuSamples)
  const perSecond = median(rates)
  figures[`write_${name}`] = { records: count * stretches, stretches, cpuUsPerRecord: cpuUs, cpuUsPerRecordEach: cpuSamples, recordsPerSecond: perSecond }
  rows.push({ case: `writing to ${name}: CPU per record (incl. its call path), records/s`, cost: `${cpuUs.toFixed(2)} µs (median of ${stretches} × ${count.toLocaleString('en')}), ${Math.round(perSecond).toLocaleString('en')}/s`, ratio: '', target: name === 'JSONL' ? '≤ 3 µs' : '—' })
}
await writing('JSONL', new JsonlAuditStore(join(dir, 'write.jsonl')))
await writing('memory', new MemoryAuditStore())
// SQLite through minato's driver, in a Koishi app, as packages/koishi's tests load it.
const require = createRequire(join(root, 'packages/koishi/package.json'))
const { App } = require('koishi')
const SQLite = require('@minatojs/driver-sqlite')
const koishi = new App()
koishi.plugin(SQLite.default ?? SQLite, { path: join(dir, 'koishi.db') })
await koishi.start()
await new Promise((done) => { const wait = () => koishi.get('database') ? done() : setTimeout(wait, 10); wait() })
await writing('SQLite', new DatabaseAuditStore({ database: koishi.get('database') }), 2_000, 3)
await koishi.stop()

// 4. 100,000 calls that never yield to the event loop: the log's queue stays bounded.
const flood = await pluginApp({ maxRecords: 10_000 })
const log = flood.app.audit.log
// run.mjs passes --expose-gc: the heap is compared after a collection on both sides.
globalThis.gc?.()
const heapBefore = process.memoryUsage().heapUsed
let deepest = 0
for (let i = 0; i < 100_000; i++) {
  await flood.run()
  if ((i & 1023) === 0) deepest = Math.max(deepest, log.queue.length)
}
globalThis.gc?.()
const heapAfter = process.memoryUsage().heapUsed
await log.flush()
const written = (await log.query({ limit: 1_000_000 })).length
figures.neverYielding = { calls: 100_000, deepestQueue: deepest, heapGrowthMB: (heapAfter - heapBefore) / 2 ** 20, recordsKept: written }
rows.push({ case: '100,000 calls, never yielding: deepest queue, heap growth', cost: `${deepest} drafts, ${figures.neverYielding.heapGrowthMB.toFixed(1)} MB`, ratio: '', target: 'bounded' })

for (const { app } of [on, off, flood]) await app.fiber.dispose()
rmSync(dir, { recursive: true, force: true })
printTable('The audit log: the call path, writing, and a loop that never yields', rows)
writeResults('audit', figures)
