import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { corpusPath } from '../../../scripts/corpora.mjs'
import { isNoMatch } from '../src/search/create-tool-search-tool'
import type { SearchDocument } from '../src/search/search-document'
import { ToolSearchIndex } from '../src/search/tool-search-index'

// Corpus tier (docs/testing.md): ACEBench's Chinese tools and requests, read from the
// corpora folder at test time, never copied here. The floors sit a little under what
// `yarn bench search` measures (docs/search-mode.md), so a change that loses Chinese
// recall, or answers "no match" to answerable requests, fails here.
const folder = corpusPath('tool-retrieval-zh')
const jsonl = (file: string) => readFileSync(`${folder}/${file}`, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
const tools: SearchDocument[] = JSON.parse(readFileSync(`${folder}/tools.json`, 'utf8'))
const queries: { query: string; gold: string[] }[] = jsonl('queries.jsonl')

describe('tool_search on ACEBench\'s Chinese requests', () => {
  const index = new ToolSearchIndex()
  for (const tool of tools) index.add(tool)

  it('finds the gold tools of natural Chinese requests and rarely says "no match" to them', () => {
    let recall = 0
    let noMatch = 0
    for (const { query, gold } of queries) {
      const hits = index.search(query, { limit: 5 })
      recall += gold.filter((name) => hits.some((hit) => hit.name === name)).length / gold.length
      if (isNoMatch(hits, undefined, query)) noMatch++
    }
    expect(queries).toHaveLength(261)
    expect(recall / queries.length).toBeGreaterThanOrEqual(0.92)
    expect(noMatch / queries.length).toBeLessThanOrEqual(0.03)
  })

  it('says "no match" to most requests whose tools were removed from the pool', () => {
    const requests: { query: string; removed: string[] }[] = jsonl('irrelevant_queries.jsonl')
    let falseMatch = 0
    for (const { query, removed } of requests) {
      const hits = index.search(query, { limit: 5, accept: (name) => !removed.includes(name) })
      if (!isNoMatch(hits, undefined, query)) falseMatch++
    }
    expect(requests).toHaveLength(34)
    expect(falseMatch / requests.length).toBeLessThanOrEqual(0.5)
  })
})
