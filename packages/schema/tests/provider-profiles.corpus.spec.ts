import { describe, expect, it } from 'vitest'
import { convertToDialect } from '../src/dialects'
import { toJsonSchema } from '../src/to-json-schema'
import { loadProfile, profileExamples, type ProfileName } from './helpers/provider-profiles'
import { openaiRules } from './helpers/provider-rules'
import { fixtures } from './helpers/schema-fixtures'

// Corpus tier (docs/testing.md): the openai and gemini output passes the third-party
// provider profiles, read from the corpora folder at test time, never copied here.

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

  // Gemini's profiles describe structured output, a superset of the function-declaration
  // parameters our own gemini rules describe, so only the openai rules compare here.
  it('our own openai rules give the openai profile\'s verdicts on its examples', () => {
    const { valid, invalid } = profileExamples('openai_202602')
    expect(valid.map(([file, schema]) => [file, openaiRules(schema)])).toEqual(valid.map(([file]) => [file, []]))
    expect(invalid.filter(([, schema]) => !openaiRules(schema).length).map(([file]) => file)).toEqual([])
  })
})

describe('provider output passes the profiles', () => {
  for (const dialect of ['openai', 'gemini'] as const) {
    const checks = PROFILES[dialect].map(name => [name, loadProfile(name)] as const)
    for (const fixture of fixtures) {
      const { schema: output, strict } = convertToDialect(toJsonSchema(fixture.schema), dialect)
      // The openai profiles describe strict mode; a non-strict tool is ordinary JSON Schema.
      if (strict === false) continue
      it(`${dialect}: ${fixture.name}`, () => {
        for (const [name, check] of checks) expect([name, check(output)]).toEqual([name, []])
      })
    }
  }
})
