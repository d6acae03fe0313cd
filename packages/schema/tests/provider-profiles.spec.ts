import { toStrictJsonSchema } from 'openai/lib/transform'
import { describe, expect, it } from 'vitest'
import { toDialect } from '../src/dialects'
import { SchemaError } from '../src/errors'
import { toJsonSchema } from '../src/to-json-schema'
import { geminiRules, openaiRules } from './helpers/provider-rules'
import { fixtures } from './helpers/schema-fixtures'

// Proof (c): the openai and gemini output keeps the rules the providers document, and the
// openai output passes the openai package's own strict-schema transformer unchanged. The
// corpus tier checks the same output against third-party provider profiles
// (provider-profiles.corpus.spec.ts).

const RULES = { openai: openaiRules, gemini: geminiRules }

describe('provider output', () => {
  for (const dialect of ['openai', 'gemini'] as const) {
    for (const fixture of fixtures) {
      const refusedAt = fixture.refuses?.[dialect]
      it(`${dialect}: ${fixture.name} ${refusedAt ? `is refused at ${refusedAt}` : 'keeps the documented rules'}`, () => {
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
        expect(RULES[dialect](toDialect(json, dialect))).toEqual([])
      })
    }
  }

  it('the rules find what plain JSON Schema breaks', () => {
    const json = toJsonSchema(fixtures.find((fixture) => fixture.name === 'tool arguments')!.schema)
    expect(openaiRules(json)).toEqual([
      '/ uses $schema',
      '/ is an object without additionalProperties: false',
      '/ does not require exactly its properties',
      '/properties/retries uses default',
      '/properties/dryRun uses default',
    ])
    expect(geminiRules(json)).toEqual([
      '/ uses $schema',
      '/properties/retries has type ["integer","null"]',
      '/properties/tags has type ["array","null"]',
      '/properties/dryRun has type ["boolean","null"]',
    ])
  })

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
