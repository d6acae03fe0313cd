import Ajv2020 from 'ajv/dist/2020'
import type Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { toDialect } from '../src/dialects'
import type { JsonSchema } from '../src/json-schema'
import { toJsonSchema } from '../src/to-json-schema'
import { fixtures } from './helpers/schema-fixtures'
import { schemasteryAccepts } from './helpers/schemastery-accepts'
import { seeded, valueFor } from './helpers/seeded-values'

// Proof (a): schemastery and a JSON Schema validator agree on accept/reject.
// Proof (b): every document we export is valid JSON Schema 2020-12.

// multipleOfPrecision: JSON numbers are decimals, and 0.07 is a multiple of 0.01 (as
// schemastery, which shifts decimals, agrees); plain float division would say otherwise.
// validateFormats: false — in 2020-12 `format` is an annotation unless a vocabulary asserts it.
const ajv = new Ajv2020({ strict: true, strictTuples: false, strictTypes: false, strictRequired: false, validateFormats: false, multipleOfPrecision: 9 })
const RUNS = 400

function disagreements(schema: Schema, json: JsonSchema, values: unknown[]) {
  const validate = ajv.compile(json)
  return values
    .map(value => ({ value, schemastery: schemasteryAccepts(schema, value), jsonSchema: validate(value) }))
    .filter(result => result.schemastery !== result.jsonSchema)
}

describe('schemastery and JSON Schema agree', () => {
  for (const [index, fixture] of fixtures.entries()) {
    it(`${fixture.name}: hand-picked values`, () => {
      const json = toJsonSchema(fixture.schema)
      expect(disagreements(fixture.schema, json, fixture.samples)).toEqual([])
    })

    it(`${fixture.name}: ${RUNS} seeded random values`, () => {
      const json = toJsonSchema(fixture.schema)
      const random = seeded(0x5eed + index)
      // the root is never nullish: tool arguments are always sent (see docs/schema-conversion.md)
      const values = Array.from({ length: RUNS }, () => valueFor(fixture.schema, random)).filter(value => value != null)
      const results = values.map(value => schemasteryAccepts(fixture.schema, value))
      expect(disagreements(fixture.schema, json, values)).toEqual([])
      // both outcomes occur, or the comparison would prove little
      expect(results.filter(Boolean).length).toBeGreaterThanOrEqual(20)
      expect(results.filter(result => !result).length).toBeGreaterThanOrEqual(20)
    })
  }
})

describe('exported documents are JSON Schema 2020-12', () => {
  for (const fixture of fixtures) {
    it(fixture.name, () => {
      const json = toJsonSchema(fixture.schema)
      expect(json.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
      expect(ajv.validateSchema(json), JSON.stringify(ajv.errors)).toBe(true)
      // every fixture converts to every dialect now (docs/schema-conversion.md)
      for (const dialect of ['json', 'openai', 'anthropic', 'gemini'] as const) {
        const output = toDialect(json, dialect)
        expect(ajv.validateSchema(output), `${dialect}: ${JSON.stringify(ajv.errors)}`).toBe(true)
      }
    })
  }
})
