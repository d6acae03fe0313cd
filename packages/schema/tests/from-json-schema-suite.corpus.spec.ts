import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { corpusPath } from '../../../scripts/corpora.mjs'
import { runSuite, type SuiteCase } from './helpers/json-schema-suite'

// Corpus tier (docs/testing.md): the official JSON Schema Test Suite, read from the corpora
// folder at test time, never copied here.
const root = corpusPath('json-schema', 'test-suite', 'draft2020-12')
const groups = readdirSync(root).filter((name) => name.endsWith('.json')).sort()
  .map((file): [string, SuiteCase[]] => [file, JSON.parse(readFileSync(path.join(root, file), 'utf8'))])

describe('fromJsonSchema against the JSON Schema Test Suite (draft 2020-12)', () => {
  it('agrees with every test of every case it supports, exactly (nullAsAbsent: false)', () => {
    const { counts, refusals, disagreements } = runSuite(groups, false)
    console.info(`exact mode: ${counts.supported} cases supported (${counts.tests} tests), ${counts.refused} refused ${JSON.stringify(refusals)}, ${counts.remote} skipped (remote $ref)`)
    expect(disagreements).toEqual([])
    expect(counts).toEqual({ supported: 168, refused: 162, remote: 53, tests: 646 })
  })

  it('differs in the default mode only where null stands for an absent value', () => {
    const { counts, disagreements } = runSuite(groups, true)
    expect(counts).toEqual({ supported: 176, refused: 154, remote: 53, tests: 678 })
    console.info(`default mode: ${counts.supported} cases supported (${counts.tests} tests), ${disagreements.length} null-as-absent differences`)
    expect(disagreements).toEqual([
      // each is a required property whose schema allows null, which this mode makes optional
      'allOf.json / allOf with base schema / mismatch second allOf: expected invalid',
      'items.json / items and subitems / wrong sub-item: expected invalid',
      'required.json / required validation / non-present required property is invalid: expected invalid',
      'required.json / required with escaped characters / object with some properties missing is invalid: expected invalid',
    ])
  })
})
