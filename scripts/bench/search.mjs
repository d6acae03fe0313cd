// `yarn bench:search`: tool retrieval quality, "no match" answers, latency and context
// economy of search mode, on public corpora (tool-retrieval/ and tool-retrieval-zh/ in
// ../shared/corpora, or in DOGU_CORPORA), against a plain BM25, the same BM25 over Chinese
// character unigrams + bigrams, and MiniSearch, measured in the same run. The search module
// is bundled from src with esbuild first, so the bench never runs a stale build
// (DOGU_SEARCH_MODULE=path benches another bundle; SEARCH_BENCH_SETS=a,b runs some sets).
import { build } from 'esbuild'
import { encode } from 'gpt-tokenizer'
import MiniSearch from 'minisearch'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { corpora as corporaFolder, corpusPath } from '../corpora.mjs'
import { median, printTable, root, writeResults } from './harness.mjs'

// The corpora are external: a clone without them says so and skips this bench, so `yarn
// bench` still runs the others; DOGU_REQUIRE_CORPORA=1 makes it a failure.
const { missing, required } = corporaFolder()
if (missing) {
  console.log(required ? `corpus tier required (DOGU_REQUIRE_CORPORA=1), but ${missing}` : `corpus tier did not run: ${missing}`)
  process.exit(required ? 1 : 0)
}
const corpora = corpusPath('tool-retrieval')
const corporaZh = corpusPath('tool-retrieval-zh')
const search = await loadSearchModule()
const { ToolSearchIndex, NO_MATCH_THRESHOLD, createToolSearchTool, isNoMatch, toJsonSchema } = search

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
  return JSON.parse(readFileSync(path.isAbsolute(file) ? file : path.join(corpora, file), 'utf8'))
}

function readJsonl(file) {
  return readFileSync(path.isAbsolute(file) ? file : path.join(corpora, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
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

/**
 * Requests with no fitting tool. The Chinese corpus ships them, made by removing their
 * tools from the pool; the English sets get the same kind from their own queries: each
 * query with its gold tools left out (the near misses stay).
 */
function goldRemoved(list) {
  return list.map(({ query, gold, tune }) => ({ query, removed: new Set(gold), tune }))
}

const even = (_, i) => i % 2 === 0
const bfclPool = tools('bfcl/pool_tools.json', { bfcl: true })
const seal = tools('seal-tools/tools.json')
const zhQueries = queries(path.join(corporaZh, 'queries.jsonl'), { tune: even })
const sets = [
  {
    id: 'acebench-zh',
    tools: tools(path.join(corporaZh, 'tools.json')),
    queries: zhQueries,
    noTool: readJsonl(path.join(corporaZh, 'irrelevant_queries.jsonl'))
      .map((query, i) => ({ query: query.query, removed: new Set(query.removed.map(toolName)), tune: i % 2 === 0 })),
  },
  { id: 'bfcl-pool', tools: bfclPool, queries: queries('bfcl/pool_queries.jsonl', { tune: even }) },
  { id: 'bfcl-multi-turn', tools: tools('bfcl/mt_pool_tools.json', { bfcl: true }), queries: queries('bfcl/mt_queries.jsonl', { tune: even }) },
  { id: 'seal-tools-dev', tools: seal, queries: queries('seal-tools/queries.jsonl', { filter: (q) => q.split === 'dev', tune: () => true }) },
  { id: 'seal-tools-test', tools: seal, queries: queries('seal-tools/queries.jsonl', { filter: (q) => q.split !== 'dev', tune: () => false }) },
  { id: 'metatool', tools: tools('metatool/tools.json'), queries: queries('metatool/queries_single.jsonl', { tune: even }) },
].filter((set) => !process.env.SEARCH_BENCH_SETS || process.env.SEARCH_BENCH_SETS.split(',').includes(set.id))
for (const set of sets) set.noTool ??= goldRemoved(set.queries)

// ---------------------------------------------------------------------------------------
// Engines: ours, a plain BM25 over name + description (words, or Chinese bigrams), MiniSearch.

/** Identifier-aware but otherwise plain: camelCase split, lowercased, no stemming. */
function plainTokens(text) {
  return text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

const HAN = /\p{Script=Han}/u
/** `plainTokens`, but a run of Chinese characters gives its characters and its bigrams. */
function bigramTokens(text) {
  const terms = []
  for (const word of text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').toLowerCase().match(/\p{Script=Han}+|[\p{L}\p{N}]+/gu) ?? []) {
    if (!HAN.test(word)) {
      terms.push(word)
      continue
    }
    for (let i = 0; i < word.length; i++) {
      terms.push(word[i])
      if (i + 1 < word.length) terms.push(word.slice(i, i + 2))
    }
  }
  return terms
}

// An engine's search: `(query, limit, accept?) => { names, matched }`, where `matched` is
// false when the engine answers "no match". The baselines have no such rule: they answer
// whenever some tool shares a word with the query.
const engines = {
  dogu: {
    build(list) {
      const index = new ToolSearchIndex()
      for (const tool of list) index.add(tool)
      return (query, limit, accept) => {
        const hits = index.search(query, { limit, accept })
        return { names: hits.map((hit) => hit.name), matched: !isNoMatch(hits, NO_MATCH_THRESHOLD, query) }
      }
    },
  },
  bm25: { build: (list) => bm25(list, plainTokens) },
  'bm25-bigram': { build: (list) => bm25(list, bigramTokens) },
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
      return (query, limit, accept) => {
        const names = index.search(query, accept && { filter: (hit) => accept(list[hit.id].name) }).slice(0, limit).map((hit) => list[hit.id].name)
        return { names, matched: names.length > 0 }
      }
    },
  },
}

/** BM25 over name + description (k1 1.2, b 0.75) with the given tokenizer. */
function bm25(list, tokenizer) {
  const k1 = 1.2
  const b = 0.75
  const postings = new Map()
  const lengths = list.map((tool, doc) => {
    const terms = tokenizer(`${tool.name} ${tool.description}`)
    const counts = new Map()
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
    for (const [term, tf] of counts) {
      if (!postings.has(term)) postings.set(term, [])
      postings.get(term).push(doc, tf)
    }
    return terms.length
  })
  const n = list.length
  const names = list.map((tool) => tool.name)
  const average = lengths.reduce((sum, length) => sum + length, 0) / n
  const scores = new Float64Array(n)
  return (query, limit, accept) => {
    const touched = []
    for (const term of new Set(tokenizer(query))) {
      const list = postings.get(term)
      if (!list) continue
      const df = list.length / 2
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
      for (let i = 0; i < list.length; i += 2) {
        const doc = list[i]
        const tf = list[i + 1]
        if (accept && !accept(names[doc])) continue
        if (!scores[doc]) touched.push(doc)
        scores[doc] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[doc] / average))
      }
    }
    const ranked = touched.sort((x, y) => scores[y] - scores[x] || x - y).slice(0, limit).map((doc) => names[doc])
    for (const doc of touched) scores[doc] = 0
    return { names: ranked, matched: ranked.length > 0 }
  }
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
    const { names, matched } = searchFn(query, 10)
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
    return { ...score(names, gold), noMatch: matched ? 0 : 1 }
  })
  const falseMatches = set.noTool.map(({ query, removed }) => ({ falseMatch: searchFn(query, 5, (name) => !removed.has(name)).matched ? 1 : 0 }))
  times.sort((x, y) => x - y)
  const tuned = (list, tune) => list.filter((_, i) => set.queries[i].tune === tune)
  const metric = (key, list = scores) => (list.length ? mean(list.map((item) => item[key])) : null)
  const tunedNoTool = (tune) => falseMatches.filter((_, i) => set.noTool[i].tune === tune)
  return {
    tools: set.tools.length,
    queries: set.queries.length,
    noToolQueries: set.noTool.length,
    r1: metric('r1'),
    r5: metric('r5'),
    r10: metric('r10'),
    ndcg10: metric('ndcg10'),
    mrr: metric('mrr'),
    r5Tuning: metric('r5', tuned(scores, true)),
    r5HeldOut: metric('r5', tuned(scores, false)),
    noMatch: metric('noMatch'),
    noMatchHeldOut: metric('noMatch', tuned(scores, false)),
    falseMatch: metric('falseMatch', falseMatches),
    falseMatchHeldOut: metric('falseMatch', tunedNoTool(false)),
    p50Ms: percentile(times, 0.5),
    p95Ms: percentile(times, 0.95),
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
      'nDCG@10': fixed(result.ndcg10), MRR: fixed(result.mrr),
      'R@5 tuning': fixed(result.r5Tuning), 'R@5 held-out': fixed(result.r5HeldOut),
      'no match': fixed(result.noMatch), 'no match held-out': fixed(result.noMatchHeldOut),
      'false match': fixed(result.falseMatch), 'false match held-out': fixed(result.falseMatchHeldOut),
      'p50 ms': fixed(result.p50Ms, 4), 'p95 ms': fixed(result.p95Ms, 4), 'build ms': fixed(result.buildMs, 1),
    })
  }
}
printTable('Tool retrieval (R@k: share of gold tools in the top k; held-out: queries not used for tuning; no match: answerable queries answered "no match"; false match: no-tool requests answered with tools)', rows)

// ---------------------------------------------------------------------------------------
// No good match: the rule tool_search applies (isNoMatch) at several thresholds. BFCL's
// irrelevance queries are searched against the tools BFCL offered with them (none of which
// is right); every set's answerable queries against its whole pool, and its no-tool
// requests against the pool without their tools.

const irrelevant = readJsonl('bfcl/irrelevant_queries.jsonl')
  .map((query, i) => ({ query: query.query, removed: undefined, candidates: new Set(query.candidates.map(toolName)), category: query.category, tune: i % 2 === 0 }))
  .filter((query) => query.candidates.size)
const sweep = sets.map((set) => {
  const index = new ToolSearchIndex()
  for (const tool of set.tools) index.add(tool)
  const answerable = set.queries.map(({ query, gold, tune }) => {
    const hits = index.search(query, { limit: 5 })
    return { query, hits, recall: score(hits.map((hit) => hit.name), gold).r5, tune }
  })
  const noTool = set.noTool.map(({ query, removed, tune }) => ({ query, hits: index.search(query, { limit: 5, accept: (name) => !removed.has(name) }), tune }))
  const extra = set.id === 'bfcl-pool'
    ? irrelevant.map(({ query, candidates, category, tune }) => ({ query, hits: index.search(query, { limit: 5, accept: (name) => candidates.has(name) }), category, tune }))
    : []
  return { id: set.id, answerable, noTool, extra }
})
const noMatchRows = []
for (const threshold of [0.4, 0.5, 0.6, NO_MATCH_THRESHOLD, 0.8, 0.9, 1.0].filter((x, i, all) => all.indexOf(x) === i).sort()) {
  const claimed = (list) => mean(list.map(({ query, hits }) => (isNoMatch(hits, threshold, query) ? 0 : 1)))
  const entry = { threshold }
  const row = { threshold: threshold === NO_MATCH_THRESHOLD ? `${threshold} (default)` : threshold }
  for (const { id, answerable, noTool, extra } of sweep) {
    entry[id] = {
      noMatch: 1 - claimed(answerable),
      noMatchHeldOut: 1 - claimed(answerable.filter((item) => !item.tune)),
      recall5Kept: mean(answerable.map(({ query, hits, recall }) => (isNoMatch(hits, threshold, query) ? 0 : recall))),
      falseMatch: claimed(noTool),
      falseMatchHeldOut: claimed(noTool.filter((item) => !item.tune)),
    }
    row[`${id} no match`] = fixed(entry[id].noMatch)
    row[`${id} false`] = fixed(entry[id].falseMatch)
    if (extra.length) {
      entry[id].irrelevance = claimed(extra.filter((item) => item.category === 'irrelevance'))
      entry[id].liveIrrelevance = claimed(extra.filter((item) => item.category === 'live_irrelevance'))
      entry[id].bfclIrrelevantHeldOut = claimed(extra.filter((item) => !item.tune))
      row['BFCL irrelevance'] = fixed(entry[id].irrelevance)
      row['BFCL live_irrelevance'] = fixed(entry[id].liveIrrelevance)
      row['BFCL irrelevant held-out'] = fixed(entry[id].bfclIrrelevantHeldOut)
    }
  }
  figures.noMatch[threshold] = entry
  noMatchRows.push(row)
}
printTable(`No good match by threshold (no match: answerable queries answered "no match"; false: no-tool requests answered with tools; BFCL: ${irrelevant.length} irrelevance queries against their candidate tools)`, noMatchRows)

// ---------------------------------------------------------------------------------------
// Context economy: tokens of the definitions a model is sent (o200k_base), everything in
// full versus search mode (tool_search with each summary style), plus one search's result.

const tokens = (value) => encode(typeof value === 'string' ? value : JSON.stringify(value)).length
const economyRows = []
const poolQueries = queries('bfcl/pool_queries.jsonl', { tune: even })
for (const count of process.env.SEARCH_BENCH_SETS ? [] : [50, 200, 1000]) {
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
  bm25Bigram: 'as bm25, but a run of Chinese characters gives its characters and bigrams',
  minisearch: 'fields name+description, boost name 2, camelCase split (prefix/fuzzy off: worse and slower)',
  noMatchThreshold: NO_MATCH_THRESHOLD,
}
// A run over some sets only (SEARCH_BENCH_SETS) is for tuning: it keeps the full figures.
if (!process.env.SEARCH_BENCH_SETS) writeResults('search', figures)

async function loadSearchModule() {
  if (process.env.DOGU_SEARCH_MODULE) return import(pathToFileURL(path.resolve(process.env.DOGU_SEARCH_MODULE)).href)
  const outfile = path.join(root, 'node_modules/.cache/dogu-bench/search.mjs')
  // npm dependencies stay external; workspace packages are bundled from their sources.
  const external = ['packages/core', 'packages/schema']
    .flatMap((folder) => Object.keys(JSON.parse(readFileSync(path.join(root, folder, 'package.json'), 'utf8')).dependencies ?? {}))
    .filter((name) => !name.startsWith('@dogu/'))
  await build({
    stdin: {
      contents: "export * from './packages/core/src/search/index.ts'\nexport { isNoMatch } from './packages/core/src/search/create-tool-search-tool.ts'\nexport { toJsonSchema } from '@dogu/schema'\n",
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
