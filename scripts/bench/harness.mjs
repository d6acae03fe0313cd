// Shared measuring helpers for `yarn bench`: every figure is a median over rounds, and
// every comparison is a ratio against a baseline measured in the same run.
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '../..')

/** DOGU_BENCH_QUICK=1: few rounds of few iterations, to check that a bench runs, not to measure. */
const quick = !!process.env.DOGU_BENCH_QUICK
const shortened = (options) => (quick ? { ...options, iterations: Math.min(options.iterations ?? 20_000, 500), rounds: Math.min(options.rounds ?? 9, 3) } : options)

/** Median nanoseconds per iteration of an async or sync function. */
export async function measure(fn, options = {}) {
  const { iterations = 20_000, rounds = 9, warmup = 2 } = quick ? { ...options, iterations: Math.min(options.iterations ?? 20_000, 500) } : options
  const samples = []
  for (let round = 0; round < rounds + warmup; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) await fn(i)
    const elapsed = Number(process.hrtime.bigint() - start) / iterations
    if (round >= warmup) samples.push(elapsed)
  }
  return median(samples)
}

/** Median nanoseconds per iteration of a synchronous function (no await overhead). */
export function measureSync(fn, options = {}) {
  const { iterations = 20_000, rounds = 9, warmup = 2 } = quick ? { ...options, iterations: Math.min(options.iterations ?? 20_000, 500) } : options
  const samples = []
  for (let round = 0; round < rounds + warmup; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) fn(i)
    const elapsed = Number(process.hrtime.bigint() - start) / iterations
    if (round >= warmup) samples.push(elapsed)
  }
  return median(samples)
}

/** Measures two functions in alternating rounds so drift hits both alike. */
export async function compare(subject, baseline, options = {}) {
  const { subject: subjectNs, baseline: baselineNs } = await compareAll({ baseline, subject }, options)
  return { subjectNs, baselineNs, ratio: subjectNs / baselineNs }
}

export function median(values) {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function formatNs(ns) {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`
  return `${ns.toFixed(0)} ns`
}

/** Prints rows as an aligned table. */
export function printTable(title, rows) {
  console.log(`\n${title}`)
  if (!rows.length) return
  const keys = Object.keys(rows[0])
  const widths = keys.map((key) => Math.max(key.length, ...rows.map((row) => String(row[key]).length)))
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i])).join('  ')
  console.log(line(keys))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const row of rows) console.log(line(keys.map((key) => row[key])))
}

/**
 * The machine's load (1, 5 and 15 minute averages) and its CPU count: ratios of one run hold
 * on a loaded machine, absolute times do not. Printed by the benches and kept in every results file.
 */
export function machineLoad() {
  return { loadavg: loadavg().map((value) => Math.round(value * 100) / 100), cpus: cpus().length }
}

export function printLoad(when) {
  const { loadavg: [one, five, fifteen], cpus: count } = machineLoad()
  console.log(`machine load ${when}: ${one} / ${five} / ${fifteen} (1 / 5 / 15 min) on ${count} CPUs`)
}

/** Writes a bench's figures to bench-results/<name>.json, with the load at its end. */
export function writeResults(name, figures) {
  const file = resolve(root, 'bench-results', `${name}.json`)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAtEnd: machineLoad(), ...figures }, null, 2) + '\n')
  console.log(`\nfigures written to ${file}`)
}

/**
 * Measures several functions in alternating rounds (each round runs every case once, in
 * turn), so drift hits them all alike. Returns the median ns per case, keyed as given.
 */
export async function compareAll(cases, options = {}) {
  options = shortened(options)
  const { rounds = 9 } = options
  const samples = Object.fromEntries(Object.keys(cases).map((key) => [key, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [key, fn] of Object.entries(cases)) {
      samples[key].push(await measure(fn, { ...options, rounds: 1, warmup: round ? 0 : 2 }))
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]))
}

/**
 * What `subject` costs over `baseline`, for differences of a few hundred nanoseconds that
 * drift between rounds would swamp. Each round measures baseline, subject, subject,
 * baseline, so a drift within the round cancels. On a shared VM noise only ever adds time,
 * so the figure is the difference of the two fastest rounds (`deltaNs`); the median of the
 * per-round differences is kept beside it (`medianDeltaNs`).
 */
export async function pairedDelta(baseline, subject, options = {}) {
  const { rounds = 15, iterations = 20_000 } = shortened(options)
  const deltas = []
  const base = []
  const subj = []
  for (let round = 0; round < rounds; round++) {
    const warmup = round ? 0 : 2
    const b1 = await measure(baseline, { iterations, rounds: 1, warmup })
    const s1 = await measure(subject, { iterations, rounds: 1, warmup })
    const s2 = await measure(subject, { iterations, rounds: 1, warmup: 0 })
    const b2 = await measure(baseline, { iterations, rounds: 1, warmup: 0 })
    deltas.push((s1 + s2 - b1 - b2) / 2)
    base.push(b1, b2)
    subj.push(s1, s2)
  }
  return { deltaNs: Math.min(...subj) - Math.min(...base), medianDeltaNs: median(deltas), baselineNs: Math.min(...base), subjectNs: Math.min(...subj) }
}
