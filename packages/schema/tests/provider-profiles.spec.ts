import { toStrictJsonSchema } from 'openai/lib/transform'
import { describe, expect, it } from 'vitest'
import { toDialect } from '../src/dialects'
import { SchemaError } from '../src/errors'
import { toJsonSchema } from '../src/to-json-schema'
import { loadProfile, profileExamples, type ProfileName } from './helpers/provider-profiles'
import { fixtures } from './helpers/schema-fixtures'

// Proof (c): the openai and gemini output passes the third-party provider profiles in
// ../shared/corpora, and the openai output passes the openai package's own strict-schema
// transformer unchanged.

const PROFILES: Record<'openai' | 'gemini', ProfileName[]> = {
  openai: ['openai_202602'],
  // 202503 (Gemini 2.0) also demands propertyOrdering on every object
  gemini: ['gemini_202602', 'gemini_202503'],
}

describe('the profile checkers reproduce the corpus verdicts', () => {
  for (const name of ['openai_202602', 'gemini_202602', 'gemini_202503'] as const) {
    const check = loadProfile(name)
    const { valid, invalid } = profileExamples(name)
    it(`${name}: ${valid.length} valid examples pass`, () => {
      expect(valid.map(([file, schema]) => [file, check(schema)])).toEqual(valid.map(([file]) => [file, []]))
    })
    it(`${name}: ${invalid.length} invalid examples fail`, () => {
      expect(invalid.filter(([, schema]) => !check(schema).length).map(([file]) => file)).toEqual([])
    })
  }
})

describe('provider output', () => {
  for (const dialect of ['openai', 'gemini'] as const) {
    const checks = PROFILES[dialect].map(name => [name, loadProfile(name)] as const)
    for (const fixture of fixtures) {
      const refusedAt = fixture.refuses?.[dialect]
      it(`${dialect}: ${fixture.name} ${refusedAt ? `is refused at ${refusedAt}` : 'passes the profiles'}`, () => {
        const json = toJsonSchema(fixture.schema)
        if (refusedAt) {
          let error: unknown
          try {
            toDialect(json, dialect)
          } catch (e) {
            error = e
          }
          expect(SchemaError.is(error, 'DIALECT_REFUSED')).toBe(true)
          expect((error as SchemaError).path).toBe(refusedAt)
          return
        }
        const output = toDialect(json, dialect)
        for (const [name, check] of checks) expect([name, check(output)]).toEqual([name, []])
      })
    }
  }

  it('openai: the openai package transformer leaves every accepted output unchanged', () => {
    let checked = 0
    for (const fixture of fixtures) {
      if (fixture.refuses?.openai) continue
      const output = toDialect(toJsonSchema(fixture.schema), 'openai')
      expect([fixture.name, toStrictJsonSchema(output as any)]).toEqual([fixture.name, output])
      checked++
    }
    expect(checked).toBe(fixtures.filter(fixture => !fixture.refuses?.openai).length)
  })
})
