// `yarn bench core`: scale (issue 44). Defining 50,000 tools, each with its own argument
// schema, and `tool_search` over all of them. The tools are synthetic: names, descriptions
// and parameter texts drawn from a 4,000-word vocabulary with a Zipf-like spread (a few words
// common, most rare, as in real catalogs), from a fixed seed. Schemas and options are built
// before the clock starts: they are the user's. Heap figures are read after forced GCs
// (`--expose-gc`, which `yarn bench` passes); without it they are left out.
import Schema from 'schemastery'
import { formatNs, median, printTable } from '../harness.mjs'

const TOOLS = Number(process.env.DOGU_BENCH_SCALE_TOOLS ?? 50_000)
const ROUNDS = process.env.DOGU_BENCH_QUICK ? 1 : 3
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 'de', 'va', 'chi', 'gu', 'ba', 'fe', 'zo', 'ly', 'qua', 'ni', 'sha', 'to']

function random(seed) {
  // mulberry32: a small seeded generator, so every run indexes the same catalog.
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const vocabulary = Array.from({ length: 4000 }, (_, i) => SYLLABLES[i % 20] + SYLLABLES[Math.floor(i / 20) % 20] + (i >= 400 ? SYLLABLES[Math.floor(i / 400) % 20] : ''))

function catalog(count, seed) {
  const next = random(seed)
  const word = () => vocabulary[Math.floor(vocabulary.length * next() ** 2.5)]
  const words = (n) => Array.from({ length: n }, word).join(' ')
  const run = async () => 'ok'
  return Array.from({ length: count }, (_, i) => ({
    name: `${word()}_${word()}_${i}`,
    description: `${words(8)}. ${words(6)}.`,
    args: Schema.object({
      [word()]: Schema.string().required().description(words(5)),
      limit: Schema.natural().max(50).default(10).description('How many results to return'),
      mode: Schema.union([word(), word()]).description(words(3)),
    }),
    traits: { effect: 'read' },
    mode: 'search',
    run,
  }))
}

function heap() {
  if (!globalThis.gc) return undefined
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().heapUsed
}

function timed(fn) {
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  const value = fn()
  const wallNs = Number(process.hrtime.bigint() - start)
  const { user, system } = process.cpuUsage(cpu)
  return { value, wallNs, cpuNs: (user + system) * 1e3 }
}

export async function scale({ ToolRegistry, defineTool }) {
  const rounds = []
  let last
  for (let round = 0; round < ROUNDS; round++) {
    last = undefined
    const options = catalog(TOOLS, 42 + round)
    const before = heap()
    const defined = timed(() => {
      const registry = new ToolRegistry()
      for (const tool of options) registry.define(defineTool(tool))
      return registry
    })
    const registry = defined.value
    const afterDefine = heap()
    // The first toolset with deferred tools builds the registry's search index.
    const indexed = timed(() => registry.toolset({ session: { id: 'scale' }, summary: 'none' }))
    const afterIndex = heap()
    const perTool = (bytes) => (bytes === undefined ? undefined : bytes / TOOLS / 1024)
    rounds.push({
      defineUs: defined.wallNs / TOOLS / 1e3,
      defineCpuUs: defined.cpuNs / TOOLS / 1e3,
      defineKB: before === undefined ? undefined : perTool(afterDefine - before),
      indexUs: indexed.wallNs / TOOLS / 1e3,
      indexKB: before === undefined ? undefined : perTool(afterIndex - afterDefine),
    })
    last = { toolset: indexed.value, options }
  }
  // tool_search through the toolset, as a model calls it: 2–4 words of some tool's text.
  const next = random(7)
  const query = () => {
    const tool = last.options[Math.floor(next() * TOOLS)]
    const words = `${tool.description}`.replace(/\./g, '').split(' ')
    const from = Math.floor(next() * (words.length - 4))
    return words.slice(from, from + 2 + Math.floor(next() * 3)).join(' ')
  }
  const search = async (text) => {
    const start = process.hrtime.bigint()
    const [result] = await last.toolset.execute([{ id: 's', name: 'tool_search', arguments: JSON.stringify({ query: text }) }])
    if (result.status !== 'ok') throw new Error(`tool_search failed: ${result.status} ${result.content}`)
    return Number(process.hrtime.bigint() - start)
  }
  for (let i = 0; i < 50; i++) await search(query())
  const times = []
  for (let i = 0; i < 300; i++) times.push(await search(query()))
  times.sort((a, b) => a - b)
  const pick = (key) => median(rounds.map((round) => round[key]))
  const figures = {
    tools: TOOLS,
    rounds,
    defineUsPerTool: pick('defineUs'),
    defineCpuUsPerTool: pick('defineCpuUs'),
    defineKBPerTool: rounds[0].defineKB === undefined ? null : pick('defineKB'),
    indexUsPerTool: pick('indexUs'),
    indexKBPerTool: rounds[0].indexKB === undefined ? null : pick('indexKB'),
    toolSearchP50Ms: times[times.length >> 1] / 1e6,
    toolSearchP95Ms: times[Math.floor(times.length * 0.95)] / 1e6,
  }
  const kb = (value) => (value === null ? 'run with --expose-gc' : `${value.toFixed(2)} KB`)
  printTable(`Scale: ${TOOLS.toLocaleString('en')} tools, each with its own schema (median of ${ROUNDS} rounds)`, [
    { case: 'define a tool (defineTool + registry.define)', time: `${figures.defineUsPerTool.toFixed(2)} µs (CPU ${figures.defineCpuUsPerTool.toFixed(2)} µs)`, heap: kb(figures.defineKBPerTool), target: '≤ 20 µs, ≤ 3 KB' },
    { case: 'build the search index (first search-mode toolset)', time: `${figures.indexUsPerTool.toFixed(2)} µs`, heap: kb(figures.indexKBPerTool), target: '—' },
    { case: 'tool_search through toolset.execute, p50', time: formatNs(figures.toolSearchP50Ms * 1e6), heap: '', target: '≤ 1 ms' },
    { case: 'tool_search, p95', time: formatNs(figures.toolSearchP95Ms * 1e6), heap: '', target: '—' },
  ])
  return figures
}
