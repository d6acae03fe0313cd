import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileValidator, fromJsonSchema, SchemaError } from '../src'

const root = path.resolve(import.meta.dirname, '../../../../shared/corpora/json-schema/test-suite/draft2020-12')

interface SuiteCase {
  description: string
  schema: any
  tests: { description: string; data: unknown; valid: boolean }[]
}

const files = readdirSync(root).filter((name) => name.endsWith('.json')).sort()

function hasRemoteRef(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasRemoteRef)
  if (!schema || typeof schema !== 'object') return false
  return Object.entries(schema).some(([key, value]) => (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) || hasRemoteRef(value))
}

function verdict(schema: (data: unknown) => unknown, data: unknown) {
  try {
    schema(structuredClone(data))
    return true
  } catch {
    return false
  }
}

/** Runs the suite through the converter; every case it accepts must agree with every test in it. */
function run(nullAsAbsent: boolean) {
  const counts = { supported: 0, refused: 0, remote: 0, tests: 0 }
  const refusals = new Map<string, number>()
  const disagreements: string[] = []
  for (const file of files) {
    const cases: SuiteCase[] = JSON.parse(readFileSync(path.join(root, file), 'utf8'))
    for (const suiteCase of cases) {
      if (hasRemoteRef(suiteCase.schema)) {
        counts.remote++
        continue
      }
      let schema
      try {
        schema = fromJsonSchema(suiteCase.schema, { nullAsAbsent })
      } catch (error) {
        if (!SchemaError.is(error)) throw error
        counts.refused++
        const keyword = error.path.replace(/\[\d+\]/g, '').split('.').pop()!
        refusals.set(keyword, (refusals.get(keyword) ?? 0) + 1)
        continue
      }
      counts.supported++
      const validate = compileValidator(schema)
      for (const test of suiteCase.tests) {
        counts.tests++
        const valid = verdict(schema, test.data)
        if (valid !== test.valid) {
          disagreements.push(`${file} / ${suiteCase.description} / ${test.description}: expected ${test.valid ? 'valid' : 'invalid'}`)
        }
        // the compiled validator must agree with schemastery on these converted schemas too
        if (validate(structuredClone(test.data)).ok !== valid) {
          disagreements.push(`${file} / ${suiteCase.description} / ${test.description}: compiled validator differs`)
        }
      }
    }
  }
  return { counts, refusals: Object.fromEntries(refusals), disagreements }
}

describe('fromJsonSchema against the JSON Schema Test Suite (draft 2020-12)', () => {
  it('agrees with every test of every case it supports, exactly (nullAsAbsent: false)', () => {
    const { counts, refusals, disagreements } = run(false)
    console.info(`exact mode: ${counts.supported} cases supported (${counts.tests} tests), ${counts.refused} refused ${JSON.stringify(refusals)}, ${counts.remote} skipped (remote $ref)`)
    expect(disagreements).toEqual([])
    expect(counts).toEqual({ supported: 158, refused: 172, remote: 53, tests: 602 })
  })

  it('differs in the default mode only where null stands for an absent value', () => {
    const { counts, disagreements } = run(true)
    expect(counts).toEqual({ supported: 166, refused: 164, remote: 53, tests: 634 })
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
