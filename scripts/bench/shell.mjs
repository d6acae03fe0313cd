// bash tool cost: per-call overhead of `bash` against a bare child_process.spawn of the
// same `bash -c command`; the time the bubblewrap sandbox adds to a call (the default
// plugin config against the same tool with `sandbox.mode: off`, p50 in the same run) and
// the sandbox's own memory; throughput and peak memory while `yes` floods the pipe.
// These figures depend on the machine, so they live here and not in the tests, which
// check only what holds by construction (fixed head and tail, capped progress messages).
// Needs the built packages (`node scripts/build.mjs`).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ToolRegistry } from '../../packages/core/lib/index.js'
import { apply, Config, createShellTool, ProcessTable } from '../../packages/shell/lib/index.js'
import { compare, formatNs, median, printTable, writeResults } from './harness.mjs'

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-bench-shell-')))
const processes = new ProcessTable()
// The per-call overhead of the tool itself, without the sandbox (measured below).
const tool = createShellTool({ workspace, processes, sandbox: { mode: 'off' } })
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
printTable('bash (sandbox off) per call vs a bare spawn of the same `bash -c` (median of rounds)', rows)

// The sandbox: the plugin as the README loads it (its config defaults: sandbox auto, no
// network), against the same plugin with the sandbox off, calls interleaved one by one so
// drift hits both alike; p50 and p95 of single calls.
function pluginTool(sandbox) {
  let defined
  apply({ tools: { define: (tool) => { defined = tool; return () => {} } }, effect: () => {} }, Config({ workspace, sandbox }))
  return defined
}
const sandboxed = pluginTool(undefined)
const unsandboxed = pluginTool({ mode: 'off' })
const allowlisted = pluginTool({ network: ['api.example.com'] })
const first = await sandboxed.run({ command: 'true', timeout: 10_000 }, call())
if (first.data.sandbox !== 'full') throw new Error(`the sandbox is ${first.data.sandbox} here: install bubblewrap (apt-get install bubblewrap)`)
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]
async function timed(tool, command) {
  const t0 = process.hrtime.bigint()
  const result = await tool.run({ command, timeout: 10_000 }, call())
  if (result.data.exitCode !== 0) throw new Error(`bench command failed (${result.data.sandbox}): ${result.text}`)
  return Number(process.hrtime.bigint() - t0)
}
const SANDBOX_CALLS = Number(process.env.DOGU_BENCH_SANDBOX_CALLS ?? 200)
const sandboxRows = []
figures.sandbox = {}
for (const command of ['true', 'echo hi']) {
  const samples = { off: [], full: [], allowlist: [] }
  for (let i = 0; i < 10; i++) await timed(sandboxed, command)
  for (let i = 0; i < SANDBOX_CALLS; i++) {
    samples.off.push(await timed(unsandboxed, command))
    samples.full.push(await timed(sandboxed, command))
    if (i % 4 === 0) samples.allowlist.push(await timed(allowlisted, command))
  }
  const p50 = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]))
  const p95 = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, percentile(values, 0.95)]))
  for (const [key, label] of [['full', 'sandbox (network none)'], ['allowlist', 'sandbox + allowlist proxy']]) {
    sandboxRows.push({
      command, config: label, calls: samples[key].length,
      'p50 off': formatNs(p50.off), p50: formatNs(p50[key]), 'p50 added': signed(p50[key] - p50.off),
      'p95 off': formatNs(p95.off), p95: formatNs(p95[key]),
    })
  }
  figures.sandbox[command] = {
    calls: SANDBOX_CALLS, offP50Ns: p50.off, sandboxP50Ns: p50.full, addedP50Ns: p50.full - p50.off,
    offP95Ns: p95.off, sandboxP95Ns: p95.full, allowlistP50Ns: p50.allowlist, allowlistAddedP50Ns: p50.allowlist - p50.off,
  }
}
printTable('What the bubblewrap sandbox adds to a call (plugin defaults vs sandbox off, interleaved; goal ≤ 10 ms at p50)', sandboxRows)

// The sandbox's own memory: bubblewrap's two processes (the monitor outside and the pid
// namespace's init), read from /proc while a command sleeps inside.
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
const sleeping = createShellTool({ workspace, processes }).run({ command: 'sleep 2', timeout: 10_000 }, call())
let sandboxRss
for (let i = 0; i < 100 && !sandboxRss; i++) {
  await new Promise((resolve) => setTimeout(resolve, 20))
  for (const { pid } of processes.list()) {
    const init = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(' ')[0])
    if (init) sandboxRss = { monitorKB: rssKb(pid), initKB: rssKb(init) }
  }
}
await sleeping
if (!sandboxRss) throw new Error('could not find the sandbox\'s processes')
figures.sandbox.rss = { ...sandboxRss, totalKB: sandboxRss.monitorKB + sandboxRss.initKB }
printTable('The sandbox\'s memory (bubblewrap\'s processes, RSS)', [{
  monitor: `${(sandboxRss.monitorKB / 1024).toFixed(2)} MB`,
  'namespace init': `${(sandboxRss.initKB / 1024).toFixed(2)} MB`,
  total: `${((sandboxRss.monitorKB + sandboxRss.initKB) / 1024).toFixed(2)} MB`,
}])

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
rmSync(workspace, { recursive: true, force: true })
writeResults('shell', figures)
