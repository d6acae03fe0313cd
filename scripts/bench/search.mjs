// `yarn bench:search`: tool retrieval quality, latency and context economy of search mode,
// on public corpora (tool-retrieval/ in ../shared/corpora, or in DOGU_CORPORA), against a
// plain BM25 and MiniSearch measured in the same run. The search module is bundled from src
// with esbuild first, so the bench never runs a stale build (DOGU_SEARCH_MODULE=path benches
// another bundle).
import { build } from 'esbuild'
import { encode } from 'gpt-tokenizer'
import MiniSearch from 'minisearch'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { corpusPath } from '../corpora.mjs'
import { median, printTable, root, writeResults } from './harness.mjs'

const corpora = corpusPath('tool-retrieval')
const search = await loadSearchModule()
const { ToolSearchIndex, NO_MATCH_THRESHOLD, createToolSearchTool, toJsonSchema } = search

// ---------------------------------------------------------------------------------------
// Corpora, mapped once at the boundary: names to the tool-name rule, BFCL's parameter
// dialect to JSON Schema. Gold names go through the same mapping.

/** `math.factorial` → `math-factorial`: dots become dashes (no BFCL name has a dash, so no
 * two names collide, which `_` would cause: `car.rental` and `car_rental` both exist). */
function toolName(raw) {
  return raw.replace(/\./g, '-').replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64)
}

const BFCL_TYPES = new Map([
  ['dict', 'object'], ['HashMap', 'object'], ['Map', 'object'],
  ['float', 'number'], ['double', 'number'], ['Double', 'number'], ['Float', 'number'],
  ['long', 'integer'], ['int', 'integer'], ['Integer', 'integer'], ['Long', 'integer'], ['short', 'integer'], ['byte', 'integer'],
  ['String', 'string'], ['char', 'string'], ['Boolean', 'boolean'],
  ['Array', 'array'], ['ArrayList', 'array'], ['List', 'array'], ['tuple', 'array'], ['Set', 'array'],
])
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'])

/** BFCL's JSON-Schema-like dialect → JSON Schema; `any` and unknown Java types become `{}`. */
function bfclSchema(schema) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema
  const result = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') {
      const type = BFCL_TYPES.get(value) ?? (JSON_TYPES.has(value) ? value : undefined)
      if (type) result.type = type
    } else if (key === 'properties') {
      result.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, bfclSchema(inner)]))
    } else if (key === 'items' || key === 'additionalProperties') {
      result[key] = bfclSchema(value)
    } else {
      result[key] = value
    }
  }
  return result
}

function readJson(file) {
  return JSON.parse(readFileSync(path.join(corpora, file), 'utf8'))
}

function readJsonl(file) {
  return readFileSync(path.join(corpora, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

function tools(file, { bfcl = false } = {}) {
  const list = readJson(file).map((tool) => ({
    name: toolName(tool.name),
    description: tool.description ?? '',
    parameters: bfcl ? bfclSchema(tool.parameters) : tool.parameters ?? { type: 'object', properties: {} },
  }))
  const names = new Set(list.map((tool) => tool.name))
  if (names.size !== list.length) throw new Error(`${file}: ${list.length - names.size} names collide after mapping`)
  return list
}

/** `tune` marks the queries the field weights and the threshold were chosen on. */
function queries(file, { filter = () => true, tune }) {
  return readJsonl(file).filter(filter).map((query, i) => ({
    query: query.query,
    gold: [...new Set(query.gold.map(toolName))],
    tune: tune(query, i),
  }))
}

const even = (_, i) => i % 2 === 0
const bfclPool = tools('bfcl/pool_tools.json', { bfcl: true })
const seal = tools('seal-tools/tools.json')
const sets = [
  { id: 'bfcl-pool', tools: bfclPool, queries: queries('bfcl/pool_queries.jsonl', { tune: even }) },
  { id: 'bfcl-multi-turn', tools: tools('bfcl/mt_pool_tools.json', { bfcl: true }), queries: queries('bfcl/mt_queries.jsonl', { tune: even }) },
  { id: 'seal-tools-dev', tools: seal, queries: queries('seal-tools/queries.jsonl', { filter: (q) => q.split === 'dev', tune: () => true }) },
  { id: 'seal-tools-test', tools: seal, queries: queries('seal-tools/queries.jsonl', { filter: (q) => q.split !== 'dev', tune: () => false }) },
  { id: 'metatool', tools: tools('metatool/tools.json'), queries: queries('metatool/queries_single.jsonl', { tune: even }) },
]

// ---------------------------------------------------------------------------------------
// Engines: ours, a plain BM25 over name + description, MiniSearch.

/** Identifier-aware but otherwise plain: camelCase split, lowercased, no stemming. */
function plainTokens(text) {
  return text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

const engines = {
  dogu: {
    build(list) {
      const index = new ToolSearchIndex()
      for (const tool of list) index.add(tool)
      return (query, limit) => index.search(query, { limit }).map((hit) => hit.name)
    },
  },
  bm25: {
    build(list) {
      const k1 = 1.2
      const b = 0.75
      const postings = new Map()
      const lengths = list.map((tool, doc) => {
        const terms = plainTokens(`${tool.name} ${tool.description}`)
        const counts = new Map()
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
        for (const [term, tf] of counts) {
          if (!postings.has(term)) postings.set(term, [])
          postings.get(term).push(doc, tf)
        }
        return terms.length
      })
      const n = list.length
      const average = lengths.reduce((sum, length) => sum + length, 0) / n
      const scores = new Float64Array(n)
      return (query, limit) => {
        const touched = []
        for (const term of new Set(plainTokens(query))) {
          const list = postings.get(term)
          if (!list) continue
          const df = list.length / 2
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
          for (let i = 0; i < list.length; i += 2) {
            const doc = list[i]
            const tf = list[i + 1]
            if (!scores[doc]) touched.push(doc)
            scores[doc] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[doc] / average))
          }
        }
        const ranked = touched.sort((x, y) => scores[y] - scores[x] || x - y).slice(0, limit).map((doc) => list[doc].name)
        for (const doc of touched) scores[doc] = 0
        return ranked
      }
    },
  },
  minisearch: {
    // A name boost and an identifier-aware tokenizer, so names like `getWeather` are words
    // to it too. Its prefix and fuzzy options ranked worse on Seal-Tools dev (R@5 .88 and
    // .86 versus .90 on a sample) and cost 2–4× the time, so they are off.
    build(list) {
      const index = new MiniSearch({
        fields: ['name', 'description'],
        tokenize: plainTokens,
        searchOptions: { boost: { name: 2 } },
      })
      index.addAll(list.map((tool, id) => ({ id, name: tool.name, description: tool.description })))
      return (query, limit) => index.search(query).slice(0, limit).map((hit) => list[hit.id].name)
    },
  },
}

// ---------------------------------------------------------------------------------------
// Metrics: recall is the share of a query's gold tools found; nDCG and MRR use binary gains.

function score(ranked, gold) {
  const relevant = new Set(gold)
  const recall = (k) => ranked.slice(0, k).filter((name) => relevant.has(name)).length / relevant.size
  let dcg = 0
  let rr = 0
  ranked.slice(0, 10).forEach((name, i) => {
    if (!relevant.has(name)) return
    dcg += 1 / Math.log2(i + 2)
    rr ||= 1 / (i + 1)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2)
  return { r1: recall(1), r5: recall(5), r10: recall(10), ndcg10: dcg / ideal, mrr: rr }
}

function mean(values) {
  return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : NaN
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

function runSet(set, engine) {
  const builds = []
  let searchFn
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint()
    searchFn = engine.build(set.tools)
    builds.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  for (const { query } of set.queries) searchFn(query, 10) // warm-up
  const times = []
  const scores = set.queries.map(({ query, gold }) => {
    const start = process.hrtime.bigint()
    const ranked = searchFn(query, 10)
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
    return score(ranked, gold)
  })
  times.sort((x, y) => x - y)
  const held = scores.filter((_, i) => !set.queries[i].tune)
  const metric = (key, list = scores) => mean(list.map((item) => item[key]))
  return {
    tools: set.tools.length,
    queries: set.queries.length,
    r1: metric('r1'),
    r5: metric('r5'),
    r10: metric('r10'),
    ndcg10: metric('ndcg10'),
    mrr: metric('mrr'),
    r5HeldOut: held.length ? metric('r5', held) : null,
    p50Ms: percentile(times, 0.5),
    p99Ms: percentile(times, 0.99),
    buildMs: median(builds),
  }
}

const figures = { retrieval: {}, noMatch: {}, contextTokens: [] }
const rows = []
const fixed = (value, digits = 3) => (value === null || value === undefined ? '-' : value.toFixed(digits))
for (const set of sets) {
  figures.retrieval[set.id] = {}
  for (const [name, engine] of Object.entries(engines)) {
    if (process.env.SEARCH_BENCH_ENGINES && !process.env.SEARCH_BENCH_ENGINES.split(',').includes(name)) continue
    const result = runSet(set, engine)
    figures.retrieval[set.id][name] = result
    rows.push({
      set: set.id, engine: name, tools: result.tools, queries: result.queries,
      'R@1': fixed(result.r1), 'R@5': fixed(result.r5), 'R@10': fixed(result.r10),
      'nDCG@10': fixed(result.ndcg10), MRR: fixed(result.mrr), 'R@5 held-out': fixed(result.r5HeldOut),
      'p50 ms': fixed(result.p50Ms, 4), 'p99 ms': fixed(result.p99Ms, 4), 'build ms': fixed(result.buildMs, 1),
    })
  }
}
printTable('Tool retrieval (R@k: share of gold tools in the top k; held-out: queries not used for tuning)', rows)

// ---------------------------------------------------------------------------------------
// No good match: BFCL's irrelevance queries against the tools BFCL offered with them (none
// of which is right), versus the pool queries against the whole pool.

const poolIndex = new ToolSearchIndex()
for (const tool of bfclPool) poolIndex.add(tool)
const irrelevant = readJsonl('bfcl/irrelevant_queries.jsonl')
  .map((query, i) => ({ query: query.query, candidates: new Set(query.candidates.map(toolName)), category: query.category, tune: i % 2 === 0 }))
  .filter((query) => query.candidates.size)
const poolQueries = sets[0].queries
// The rule tool_search applies: the best hit scores at least the threshold, or has every
// word of the query. Scores below are folded to 0 when the rule's second half holds.
const confidence = (hit) => (!hit ? 0 : hit.coverage === 1 ? Infinity : hit.score)
const topScores = irrelevant.map(({ query, candidates }) => confidence(poolIndex.search(query, { limit: 1, accept: (name) => candidates.has(name) })[0]))
const poolTop = poolQueries.map(({ query, gold }) => {
  const hits = poolIndex.search(query, { limit: 5 })
  return { top: confidence(hits[0]), recall: score(hits.map((hit) => hit.name), gold).r5 }
})
const noMatchRows = []
for (const threshold of [0.4, 0.5, 0.6, NO_MATCH_THRESHOLD, 0.8, 0.9, 1.0].filter((x, i, all) => all.indexOf(x) === i).sort()) {
  const claims = (list) => mean(list.map((i) => (topScores[i] >= threshold ? 1 : 0)))
  const indices = (filter) => irrelevant.map((query, i) => (filter(query) ? i : -1)).filter((i) => i >= 0)
  const kept = mean(poolTop.map(({ top, recall }) => (top >= threshold ? recall : 0)))
  const entry = {
    threshold,
    falseMatchRate: claims(indices(() => true)),
    falseMatchRateHeldOut: claims(indices((query) => !query.tune)),
    falseMatchRateIrrelevance: claims(indices((query) => query.category === 'irrelevance')),
    falseMatchRateLiveIrrelevance: claims(indices((query) => query.category === 'live_irrelevance')),
    poolRecall5: mean(poolTop.map((item) => item.recall)),
    poolRecall5Kept: kept,
  }
  figures.noMatch[threshold] = entry
  noMatchRows.push({
    threshold: threshold === NO_MATCH_THRESHOLD ? `${threshold} (default)` : threshold,
    'false match': fixed(entry.falseMatchRate),
    'false match held-out': fixed(entry.falseMatchRateHeldOut),
    'irrelevance': fixed(entry.falseMatchRateIrrelevance),
    'live_irrelevance': fixed(entry.falseMatchRateLiveIrrelevance),
    'pool R@5': fixed(entry.poolRecall5),
    'pool R@5 kept': fixed(entry.poolRecall5Kept),
  })
}
printTable(`No good match (${irrelevant.length} BFCL irrelevance queries against their candidate tools; pool R@5 kept: gold still returned above the threshold)`, noMatchRows)

// ---------------------------------------------------------------------------------------
// Context economy: tokens of the definitions a model is sent (o200k_base), everything in
// full versus search mode (tool_search with each summary style), plus one search's result.

const tokens = (value) => encode(typeof value === 'string' ? value : JSON.stringify(value)).length
const economyRows = []
for (const count of [50, 200, 1000]) {
  const deferred = bfclPool.slice(0, count)
  const byName = new Map(deferred.map((tool) => [tool.name, tool]))
  const index = new ToolSearchIndex()
  for (const tool of deferred) index.add(tool)
  const definitionsOf = (names) => names.map((name) => byName.get(name))
  const sent = {}
  for (const summary of ['brief', 'names', 'none']) {
    const tool = createToolSearchTool({ index, tools: deferred, definitionsOf, summary })
    sent[summary] = tokens([{ name: tool.name, description: tool.description, parameters: toJsonSchema(tool.args) }])
  }
  const searchTool = createToolSearchTool({ index, tools: deferred, definitionsOf })
  const resultTokens = mean(poolQueries.slice(0, 200).map(({ query }) => tokens(searchTool.run({ query, limit: 5 }, {}).text)))
  const full = tokens(deferred)
  const entry = { tools: count, full, searchBrief: sent.brief, searchNames: sent.names, searchNone: sent.none, oneSearchResult: Math.round(resultTokens) }
  figures.contextTokens.push(entry)
  economyRows.push({
    tools: count, full,
    'search (brief)': `${sent.brief} (−${((1 - sent.brief / full) * 100).toFixed(0)}%)`,
    'search (names)': `${sent.names} (−${((1 - sent.names / full) * 100).toFixed(0)}%)`,
    'search (none)': `${sent.none} (−${((1 - sent.none / full) * 100).toFixed(0)}%)`,
    'one search result (limit 5)': Math.round(resultTokens),
  })
}
printTable('Context economy: tokens of the tool definitions sent (gpt-tokenizer, o200k_base; BFCL pool tools)', economyRows)

figures.config = {
  nameMapping: 'dots → "-", other characters outside [a-zA-Z0-9_-] → "_"',
  tuning: 'field weights and threshold chosen on seal-tools dev and even-indexed queries of the other sets',
  bm25: 'k1 1.2, b 0.75, name + description, camelCase split, lowercased',
  minisearch: 'fields name+description, boost name 2, camelCase split (prefix/fuzzy off: worse and slower)',
  noMatchThreshold: NO_MATCH_THRESHOLD,
}
writeResults('search', figures)

async function loadSearchModule() {
  if (process.env.DOGU_SEARCH_MODULE) return import(pathToFileURL(path.resolve(process.env.DOGU_SEARCH_MODULE)).href)
  const outfile = path.join(root, 'node_modules/.cache/dogu-bench/search.mjs')
  // npm dependencies stay external; workspace packages are bundled from their sources.
  const external = ['packages/core', 'packages/schema']
    .flatMap((folder) => Object.keys(JSON.parse(readFileSync(path.join(root, folder, 'package.json'), 'utf8')).dependencies ?? {}))
    .filter((name) => !name.startsWith('@dogu/'))
  await build({
    stdin: {
      contents: "export * from './packages/core/src/search/index.ts'\nexport { toJsonSchema } from '@dogu/schema'\n",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    conditions: ['source'],
    external,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
  })
  return import(`${pathToFileURL(outfile).href}?${Date.now()}`)
}
