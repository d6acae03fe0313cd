// bash tool cost: per-call overhead of `bash` against a bare child_process.spawn of the
// same `bash -c command`, and throughput and peak memory while `yes` floods the pipe.
// These figures depend on the machine, so they live here and not in the tests, which
// check only what holds by construction (fixed head and tail, capped progress messages).
// Needs the built packages (`node scripts/build.mjs`).
import { spawn } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { ToolRegistry } from '../../packages/core/lib/index.js'
import { createShellTool, ProcessTable } from '../../packages/shell/lib/index.js'
import { compare, formatNs, printTable, writeResults } from './harness.mjs'

const workspace = realpathSync(tmpdir())
const processes = new ProcessTable()
const tool = createShellTool({ workspace, processes })
const registry = new ToolRegistry()
registry.define(tool)
registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
const toolset = registry.toolset({ session: { id: 'bench' } })

const call = (progress = () => {}) => ({
  id: 'b', name: 'bash', session: { id: 'bench' }, signal: new AbortController().signal, deadline: Infinity,
  progress, ask: async () => {}, deny(reason) { throw new Error(reason) },
})

// The same spawn the tool makes (own process group, both pipes drained), minus everything
// else: cwd checks, bounded buffers, progress, group termination checks, formatting.
function bare(command) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: workspace, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []
    child.stdout.on('data', (chunk) => out.push(chunk))
    child.stderr.on('data', (chunk) => out.push(chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out).toString() }))
  })
}

const signed = (ns) => (ns < 0 ? '-' : '+') + formatNs(Math.abs(ns))
const options = { iterations: 40, rounds: 9 }
const rows = []
const figures = { overhead: {} }
for (const command of ['true', 'echo hi']) {
  const check = await tool.run({ command, timeout: 10_000 }, call())
  if (check.data.status !== 'exited' || check.data.exitCode !== 0) throw new Error(`bench command failed: ${command}`)
  const [viaPipeline] = await toolset.execute([{ id: 'x', name: 'bash', arguments: { command } }])
  if (viaPipeline.status !== 'ok') throw new Error(`pipeline call failed: ${viaPipeline.content}`)
  const direct = await compare(() => tool.run({ command, timeout: 10_000 }, call()), () => bare(command), options)
  const pipeline = await compare(() => toolset.execute([{ id: 'x', name: 'bash', arguments: { command } }]), () => bare(command), options)
  rows.push(
    { command, path: 'tool.run', dogu: formatNs(direct.subjectNs), 'bare spawn': formatNs(direct.baselineNs), overhead: signed(direct.subjectNs - direct.baselineNs), ratio: direct.ratio.toFixed(2) + '×' },
    { command, path: 'toolset.execute', dogu: formatNs(pipeline.subjectNs), 'bare spawn': formatNs(pipeline.baselineNs), overhead: signed(pipeline.subjectNs - pipeline.baselineNs), ratio: pipeline.ratio.toFixed(2) + '×' },
  )
  figures.overhead[command] = {
    toolRunNs: direct.subjectNs, bareSpawnNs: direct.baselineNs, toolRunRatio: direct.ratio,
    pipelineNs: pipeline.subjectNs, pipelineBareSpawnNs: pipeline.baselineNs, pipelineRatio: pipeline.ratio,
  }
}
// The noise floor: the bare spawn against itself, measured the same way.
const control = await compare(() => bare('true'), () => bare('true'), options)
rows.push({ command: 'true', path: 'control: bare vs bare', dogu: formatNs(control.subjectNs), 'bare spawn': formatNs(control.baselineNs), overhead: signed(control.subjectNs - control.baselineNs), ratio: control.ratio.toFixed(2) + '×' })
figures.controlRatio = control.ratio
printTable('bash per call vs a bare spawn of the same `bash -c` (median of rounds)', rows)

// Throughput and peak memory while `yes` writes as fast as it can.
const seconds = Number(process.env.DOGU_BENCH_SHELL_SECONDS ?? 10)
// Without --expose-gc (`yarn bench` passes it) the baseline holds garbage: say so.
if (!globalThis.gc) console.warn('no gc(): run with node --expose-gc for a clean memory baseline')
globalThis.gc?.()
const before = process.memoryUsage()
let peakRss = before.rss
let peakHeap = before.heapUsed
let samples = 0
const sampler = setInterval(() => {
  const { rss, heapUsed } = process.memoryUsage()
  peakRss = Math.max(peakRss, rss)
  peakHeap = Math.max(peakHeap, heapUsed)
  samples++
}, 20)
const messages = []
const flood = await tool.run({ command: 'yes', timeout: seconds * 1000 }, call((message) => messages.push(message.length)))
clearInterval(sampler)
const MB = 1024 * 1024
const memory = {
  seconds,
  gcForced: Boolean(globalThis.gc),
  samples,
  status: flood.data.status,
  bytesDrained: flood.data.stdout.bytes,
  throughputMBps: flood.data.stdout.bytes / MB / (flood.data.durationMs / 1000),
  keptTextChars: flood.text.length,
  progressMessages: messages.length,
  largestProgressMessageChars: Math.max(0, ...messages),
  baselineRssMB: before.rss / MB,
  peakRssGrowthMB: (peakRss - before.rss) / MB,
  peakHeapGrowthMB: (peakHeap - before.heapUsed) / MB,
}
printTable(`Memory while \`yes\` runs for ${seconds}s`, [{
  drained: `${(memory.bytesDrained / MB).toFixed(0)} MB`,
  throughput: `${memory.throughputMBps.toFixed(0)} MB/s`,
  'result text': `${memory.keptTextChars} chars`,
  progress: `${memory.progressMessages} msgs, ≤ ${memory.largestProgressMessageChars} chars`,
  'RSS growth (peak)': `${memory.peakRssGrowthMB.toFixed(1)} MB`,
  'heap growth (peak)': `${memory.peakHeapGrowthMB.toFixed(1)} MB`,
}])
figures.memory = memory
await processes.dispose()
writeResults('shell', figures)
