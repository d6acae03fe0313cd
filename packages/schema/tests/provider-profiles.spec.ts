import { toStrictJsonSchema } from 'openai/lib/transform'
import { describe, expect, it } from 'vitest'
import { convertToDialect } from '../src/dialects'
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
      const loosenedAt = fixture.loosens?.[dialect]
      it(`${dialect}: ${fixture.name} keeps the documented rules${loosenedAt ? `, loosened at ${loosenedAt}` : ''}`, () => {
        const conversion = convertToDialect(toJsonSchema(fixture.schema), dialect)
        // A non-strict OpenAI tool is ordinary JSON Schema: strict mode's rules do not apply to it.
        if (conversion.strict !== false) expect(RULES[dialect](conversion.schema)).toEqual([])
        const paths = conversion.loosened.map((loosening) => loosening.path)
        if (loosenedAt) expect(paths.some((path) => path.startsWith(loosenedAt))).toBe(true)
      })
    }
  }

  it('openai: exactly the shapes strict mode cannot state go out non-strict', () => {
    const nonStrict = fixtures.filter((fixture) => convertToDialect(toJsonSchema(fixture.schema), 'openai').strict === false)
    expect(nonStrict.map((fixture) => fixture.name)).toEqual(['constants', 'tuples', 'dicts', 'any and loose'])
  })

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
      const { schema: output, strict } = convertToDialect(toJsonSchema(fixture.schema), 'openai')
      if (!strict) continue
      expect([fixture.name, toStrictJsonSchema(output as any)]).toEqual([fixture.name, output])
      checked++
    }
    expect(checked).toBe(fixtures.length - 4)
  })
})
