import Ajv2020 from 'ajv/dist/2020'
import { toStrictJsonSchema } from 'openai/lib/transform'
import { describe, expect, it } from 'vitest'
import { compileValidator, convertToDialect, decodeEncoded, type Dialect, type DialectConversion, type JsonSchema, SchemaError, toJsonSchema } from '../src'
import { acceptsValue, dialectShape, pathExists } from './dialect-shape'
import { shapes } from './fixtures/real-world-shapes'
import { geminiRules, openaiRules } from './helpers/provider-rules'
import { schemasteryAccepts } from './helpers/schemastery-accepts'

// Proof that every schema reaches every provider (issue 11), on the real-world shapes corpus:
// - every shape that converts to 2020-12 converts to every dialect;
// - each output keeps its provider's rules; strict OpenAI outputs pass the openai package's
//   own strict transformer unchanged (the corpus tier adds the third-party profiles);
// - no output rejects a value schemastery accepts, sent in the dialect's shape (OpenAI
//   strict: null for every absent key; encoded fields as JSON text), and decoding that value
//   gives one schemastery accepts;
// - the pipeline (decode, then the compiled validator) still rejects what schemastery rejects;
// - every loosened or encoded path names a spot of the schema.

const DIALECTS: Dialect[] = ['json', 'openai', 'anthropic', 'gemini']
const metaAjv = new Ajv2020({ strict: false })

/** What a provider would say of the output, by the rules written from its references. */
function providerProblems(dialect: Dialect, conversion: DialectConversion): string[] {
  const { schema } = conversion
  const problems: string[] = []
  if (dialect !== 'json' && (schema.type !== 'object' || ['anyOf', 'oneOf', 'allOf'].some(key => key in schema))) {
    problems.push('/ is not one object')
  }
  if (dialect === 'openai' && conversion.strict) problems.push(...openaiRules(schema))
  if (dialect === 'openai') problems.push(...arraysWithoutItems(schema, ''))
  if (dialect === 'gemini') problems.push(...geminiRules(schema), ...emptyObjects(schema, ''))
  if (!metaAjv.validateSchema(schema)) problems.push(`not JSON Schema 2020-12: ${metaAjv.errorsText()}`)
  return problems
}

// OpenAI refuses an array without items, strict or not.
function arraysWithoutItems(node: unknown, at: string): string[] {
  if (!node || typeof node !== 'object') return []
  if (Array.isArray(node)) return node.flatMap((child, i) => arraysWithoutItems(child, `${at}/${i}`))
  const schema = node as JsonSchema
  const own = [schema.type].flat().includes('array') && schema.items === undefined ? [`${at || '/'} is an array without items`] : []
  return [...own, ...Object.entries(schema).filter(([key]) => !['enum', 'const', 'default', 'examples'].includes(key))
    .flatMap(([key, child]) => arraysWithoutItems(child, `${at}/${key}`))]
}

// Gemini refuses an object without properties ("should be non-empty for OBJECT type"); only the root may be one.
function emptyObjects(schema: JsonSchema, at: string): string[] {
  const problems: string[] = []
  if (at && schema.type === 'object' && !Object.keys(schema.properties ?? {}).length) problems.push(`${at} is an object without properties`)
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) problems.push(...emptyObjects(child, `${at}/properties/${key}`))
  if (schema.items) problems.push(...emptyObjects(schema.items as JsonSchema, `${at}/items`))
  return problems
}

describe('the real-world shapes', () => {
  it('are at least 30, with valid and invalid values', () => {
    expect(shapes.length).toBeGreaterThanOrEqual(30)
    expect(shapes.reduce((sum, shape) => sum + shape.valid.length, 0)).toBeGreaterThanOrEqual(60)
    expect(shapes.reduce((sum, shape) => sum + shape.invalid.length, 0)).toBeGreaterThanOrEqual(60)
  })

  it.each(shapes.map(shape => [shape.name, shape] as const))('%s: schemastery and the compiled validator take the valid values and refuse the invalid ones', (_, shape) => {
    const validate = compileValidator(shape.schema)
    for (const value of shape.valid) expect([value, schemasteryAccepts(shape.schema, value), validate(value).ok]).toEqual([value, true, true])
    for (const value of shape.invalid) expect([value, schemasteryAccepts(shape.schema, value), validate(value).ok]).toEqual([value, false, false])
  })
})

describe('every dialect, every shape', () => {
  for (const shape of shapes) {
    describe(shape.name, () => {
      const json = toJsonSchema(shape.schema, { locale: shape.locale })
      const validate = compileValidator(shape.schema)

      for (const dialect of DIALECTS) {
        const conversion = convertToDialect(json, dialect)

        it(`${dialect}: keeps the provider rules`, () => {
          expect(providerProblems(dialect, conversion)).toEqual([])
          if (dialect === 'openai') expect(typeof conversion.strict).toBe('boolean')
          else expect(conversion.strict).toBeUndefined()
          if (conversion.strict) expect(toStrictJsonSchema(conversion.schema as any)).toEqual(conversion.schema)
          if (dialect === 'json') expect(conversion).toEqual({ schema: json, loosened: [], encoded: [] })
        })

        it(`${dialect}: accepts every valid value in its shape, and decoding gives a value schemastery accepts`, () => {
          for (const value of shape.valid) {
            const shaped = dialectShape(value, conversion)
            expect([value, acceptsValue(conversion.schema, shaped)]).toEqual([value, { ok: true, errors: undefined }])
            const decoded = decodeEncoded(shaped, conversion.encoded)
            expect([value, schemasteryAccepts(shape.schema, decoded), validate(decoded).ok]).toEqual([value, true, true])
          }
        })

        it(`${dialect}: the pipeline still rejects every invalid value`, () => {
          for (const value of shape.invalid) {
            let verdict: boolean | string
            try {
              verdict = validate(decodeEncoded(dialectShape(value, conversion), conversion.encoded)).ok
            } catch (error) {
              verdict = SchemaError.is(error, 'INVALID_ENCODING') ? 'INVALID_ENCODING' : String(error)
            }
            expect([value, verdict]).not.toEqual([value, true])
          }
        })

        it(`${dialect}: names only paths the schema has, encoded ones never nested`, () => {
          for (const { path, rule } of conversion.loosened) {
            expect([path, pathExists(json, path)]).toEqual([path, true])
            expect(rule.length).toBeGreaterThan(0)
          }
          for (const path of conversion.encoded) {
            expect([path, pathExists(json, path)]).toEqual([path, true])
            expect(conversion.loosened.some(loosening => loosening.path === path)).toBe(true)
            expect(conversion.encoded.filter(other => other !== path && (path.startsWith(`${other}.`) || path.startsWith(`${other}[`)))).toEqual([])
          }
        })
      }
    })
  }
})

describe('coverage', () => {
  it('every shape converts to every dialect: 100% of what 2020-12 converts', () => {
    const converted = Object.fromEntries(DIALECTS.map(dialect => [dialect, shapes.filter(shape => {
      try {
        convertToDialect(toJsonSchema(shape.schema), dialect)
        return true
      } catch {
        return false
      }
    }).length]))
    expect(converted).toEqual({ json: shapes.length, openai: shapes.length, anthropic: shapes.length, gemini: shapes.length })
  })

  it('states what it can: strict OpenAI for the shapes strict mode says, encodings only for gemini', () => {
    const conversions = shapes.map(shape => ({ name: shape.name, ...Object.fromEntries(DIALECTS.map(dialect => [dialect, convertToDialect(toJsonSchema(shape.schema), dialect)])) }))
    const strict = conversions.filter(c => (c as any).openai.strict).map(c => c.name)
    expect(strict).toEqual(expect.arrayContaining([
      'plain tool arguments',
      'conditional config: const discriminator, optional first branch',
      'conditional config: three modes with shared keys',
      'nested intersections',
      'recursive menu (Schema.lazy)',
      'union of objects in a property',
    ]))
    expect(strict).not.toContain('request headers (Schema.dict)')
    expect(strict).not.toContain('Schema.computed boolean with default')
    for (const c of conversions as any[]) {
      expect([c.name, c.openai.encoded, c.anthropic.encoded]).toEqual([c.name, [], []])
    }
  })
})
