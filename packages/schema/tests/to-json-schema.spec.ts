import Ajv2020 from 'ajv/dist/2020'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { compileValidator } from '../src/compile-validator'
import type { JsonSchema } from '../src/json-schema'
import { fromJsonSchema } from '../src/from-json-schema'
import { toJsonSchema } from '../src/to-json-schema'
import { schemaErrorOf } from './helpers/catch-error'

/** The converted body, after checking the `$schema` header every document carries. */
function convert(schema: Schema, locale?: string): JsonSchema {
  const { $schema, ...body } = toJsonSchema(schema, { locale })
  expect($schema).toBe('https://json-schema.org/draft/2020-12/schema')
  return body
}

/** The JSON Schema of one optional property `v`. */
function property(schema: Schema) {
  return (convert(Schema.object({ v: schema })).properties as any).v
}

describe('toJsonSchema: scalars', () => {
  it.each([
    ['string', Schema.string(), { type: 'string' }],
    ['string bounds and pattern', Schema.string().min(1.5).max(8).pattern(/^[a-z]+$/), { type: 'string', pattern: '^[a-z]+$', minLength: 2, maxLength: 8 }],
    ['datetime role', Schema.string().role('datetime'), { type: 'string', format: 'date-time' }],
    ['number', Schema.number().min(-1).max(1), { type: 'number', minimum: -1, maximum: 1 }],
    ['natural', Schema.natural(), { type: 'integer', minimum: 0 }],
    ['percent', Schema.percent(), { type: 'number', minimum: 0, maximum: 1, multipleOf: 0.01 }],
    ['integer step', Schema.number().step(2), { type: 'integer', multipleOf: 2 }],
    ['decimal step from an aligned min', Schema.number().min(1).step(0.5), { type: 'number', minimum: 1, multipleOf: 0.5 }],
    ['boolean', Schema.boolean(), { type: 'boolean' }],
    ['const', Schema.const('1.0'), { type: 'string', const: '1.0' }],
    ['object const', Schema.const({ a: 1 }), { const: { a: 1 } }],
    ['any', Schema.any(), {}],
    ['never', Schema.never(), { not: {} }],
    ['date', Schema.date(), { type: 'string', format: 'date-time' }],
    ['regExp', Schema.regExp(), { type: 'string', format: 'regex' }],
    ['transform: its input side', Schema.transform(Schema.string().min(1), value => value.length), { type: 'string', minLength: 1 }],
    ['bitset: a number or names', Schema.bitset({ read: 1, write: 2 }), {
      anyOf: [{ type: 'number' }, { type: 'array', items: { type: 'string', examples: ['read', 'write'] } }],
    }],
  ])('%s', (_, schema, expected) => {
    expect(convert(schema)).toEqual(expected)
  })
})

describe('toJsonSchema: structures', () => {
  it('object: required keys, falsy defaults, descriptions; unknown keys stay allowed', () => {
    expect(convert(Schema.object({
      name: Schema.string().required().description('who'),
      count: Schema.number().default(0),
      quiet: Schema.boolean().default(false),
      prefix: Schema.string().default(''),
      old: Schema.string().deprecated(),
    }))).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'who' },
        count: { type: ['number', 'null'], default: 0 },
        quiet: { type: ['boolean', 'null'], default: false },
        prefix: { type: ['string', 'null'], default: '' },
        old: { type: ['string', 'null'], deprecated: true },
      },
      required: ['name'],
    })
  })

  it('object: a nested object whose default {} misses required keys is itself required', () => {
    expect(convert(Schema.object({
      server: Schema.object({ host: Schema.string().required() }),
      extra: Schema.object({ note: Schema.string() }),
      preset: Schema.object({ host: Schema.string().required() }).default({ host: 'h' }),
    }))).toEqual({
      type: 'object',
      properties: {
        server: { type: 'object', properties: { host: { type: 'string' } }, required: ['host'] },
        extra: { type: ['object', 'null'], properties: { note: { type: ['string', 'null'] } } },
        preset: { type: ['object', 'null'], properties: { host: { type: 'string' } }, required: ['host'], default: { host: 'h' } },
      },
      required: ['server'],
    })
  })

  it('object: any() required means "anything but null"', () => {
    expect(convert(Schema.object({ a: Schema.any().required(), b: Schema.any(), c: Schema.never() }))).toEqual({
      type: 'object',
      properties: { a: { not: { type: 'null' } }, b: {}, c: { type: 'null' } },
      required: ['a'],
    })
  })

  it('array: items admit null unless required; min is skipped when items have a default', () => {
    // its default [] is too short, so absence is an error too: no null, and (in an object) required
    expect(property(Schema.array(Schema.string()).min(1).max(3))).toEqual({
      type: 'array', items: { type: ['string', 'null'] }, minItems: 1, maxItems: 3,
    })
    expect(property(Schema.array(String))).toEqual({ type: ['array', 'null'], items: { type: 'string' } })
    expect(property(Schema.array(Schema.string().default('x')).min(2))).toEqual({
      type: ['array', 'null'], items: { type: ['string', 'null'], default: 'x' },
    })
  })

  it('tuple: prefixItems, minItems up to the last required element, extra items allowed', () => {
    expect(convert(Schema.tuple([Schema.string(), Schema.number().required(), Schema.string()]))).toEqual({
      type: 'array',
      prefixItems: [{ type: ['string', 'null'] }, { type: 'number' }, { type: ['string', 'null'] }],
      minItems: 2,
    })
  })

  it('dict: additionalProperties, and propertyNames from the key schema', () => {
    expect(convert(Schema.dict(Schema.number(), Schema.union(['a', 'b'])))).toEqual({
      type: 'object',
      additionalProperties: { type: ['number', 'null'] },
      propertyNames: { type: 'string', enum: ['a', 'b'] },
    })
    expect(convert(Schema.dict(Boolean))).toEqual({ type: 'object', additionalProperties: { type: 'boolean' } })
  })
})

describe('toJsonSchema: combinators', () => {
  it('union of constants: an enum; with other branches: anyOf with the enum in place', () => {
    expect(convert(Schema.union(['a', 'b', 'a']))).toEqual({ type: 'string', enum: ['a', 'b'] })
    expect(convert(Schema.union([1, 'auto']))).toEqual({ enum: [1, 'auto'] })
    expect(convert(Schema.union([Schema.number(), 'auto', 'none', Schema.boolean()]))).toEqual({
      anyOf: [{ type: 'number' }, { type: 'string', enum: ['auto', 'none'] }, { type: 'boolean' }],
    })
  })

  it('union: a required union refuses null even when its branches are optional', () => {
    expect(property(Schema.union([Schema.string(), Schema.number()]).required())).toEqual({
      anyOf: [{ type: 'string' }, { type: 'number' }],
    })
    expect(property(Schema.union([Schema.string(), Schema.number()]))).toEqual({
      anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }],
    })
  })

  it('intersect: plain objects merge into one; anything else is allOf', () => {
    expect(convert(Schema.intersect([
      Schema.object({ a: Schema.string().required() }).description('part one'),
      Schema.object({ b: Schema.number() }),
    ]))).toEqual({
      type: 'object', properties: { a: { type: 'string' }, b: { type: ['number', 'null'] } }, required: ['a'],
    })
    expect(convert(Schema.intersect([Schema.string(), Schema.string().min(2)]))).toEqual({
      allOf: [{ type: 'string' }, { type: 'string', minLength: 2 }],
    })
  })

  it('loose: any non-null value passes (schemastery falls back to the default)', () => {
    expect(property(Schema.number().loose().default(1).description('n'))).toEqual({ description: 'n', default: 1 })
  })

  it('lazy: a recursive schema goes to $defs, named after where it first appears', () => {
    const node: Schema = Schema.lazy(() => Schema.object({ name: Schema.string().required(), children: Schema.array(node) }))
    expect(toJsonSchema(Schema.object({ tree: node }))).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { tree: { $ref: '#/$defs/tree' } },
      required: ['tree'],
      $defs: {
        tree: {
          type: 'object',
          properties: { name: { type: 'string' }, children: { type: ['array', 'null'], items: { $ref: '#/$defs/tree' } } },
          required: ['name'],
        },
      },
    })
  })

  it('lazy: recursion through the root refers to "#"; a non-recursive lazy is inlined', () => {
    const node: Schema = Schema.lazy(() => Schema.object({ next: Schema.array(node), value: Schema.lazy(() => Schema.number()) }))
    expect(convert(node)).toEqual({
      type: 'object',
      properties: {
        next: { type: ['array', 'null'], items: { anyOf: [{ $ref: '#' }, { type: 'null' }] } },
        value: { type: ['number', 'null'] },
      },
    })
  })
})

describe('toJsonSchema: descriptions', () => {
  const schema = Schema.string().description('default text').i18n({ 'zh': '中文', 'en': 'English', 'ja-JP': '日本語' })

  it.each([
    [undefined, 'default text'],
    ['zh', '中文'],
    ['zh-CN', '中文'],
    ['ja-JP', '日本語'],
    ['fr', 'default text'],
  ])('locale %s', (locale, text) => {
    expect(convert(schema, locale)).toEqual({ type: 'string', description: text })
  })

  it('reads a language\'s main locale: en and en-GB read en-US, zh reads zh-CN', () => {
    const koishi = Schema.string().i18n({ 'zh-CN': '中文', 'en-US': 'English', 'ja-JP': '日本語' })
    expect(['en', 'en-GB', 'EN-us', 'zh', 'zh-TW', 'ja', 'fr', undefined].map(locale => convert(koishi, locale).description))
      .toEqual(['English', 'English', 'English', '中文', '中文', '日本語', 'English', 'English'])
    // any other locale of the language comes before the neutral fallback
    expect(convert(Schema.string().i18n({ 'zh-CN': '中文', 'en-AU': 'Aussie' }), 'en-GB').description).toBe('Aussie')
    // the exact locale and the bare language still come first
    expect(convert(Schema.string().i18n({ 'en-US': 'US', 'en': 'plain', 'en-GB': 'GB' }), 'en-GB').description).toBe('GB')
    expect(convert(Schema.string().i18n({ 'en-US': 'US', 'en': 'plain' }), 'en-GB').description).toBe('plain')
  })

  it('falls back to en, then zh, then the first text', () => {
    expect(convert(Schema.string().i18n({ zh: '中文', en: 'English' }), 'fr').description).toBe('English')
    expect(convert(Schema.string().i18n({ de: 'Deutsch', zh: '中文' }), 'fr').description).toBe('中文')
    expect(convert(Schema.string().i18n({ de: 'Deutsch' }), 'fr').description).toBe('Deutsch')
  })

  it('resolves nested i18n messages per property', () => {
    const object = Schema.object({ a: Schema.string() }).i18n({ zh: { a: '甲' }, en: { a: 'A' } })
    expect((convert(object, 'zh').properties as any).a.description).toBe('甲')
    expect((convert(object, 'en').properties as any).a.description).toBe('A')
  })
})

describe('toJsonSchema: dicts inside intersect (strict resolution skips the keys their key schema refuses)', () => {
  it('a key pattern is patternProperties, listed keys are properties', () => {
    expect(convert(Schema.intersect([Schema.dict(Number, Schema.string().pattern(/^x-/))]))).toEqual({
      type: 'object', patternProperties: { '^x-': { type: 'number' } },
    })
    expect(convert(Schema.intersect([Schema.dict(String, Schema.union(['a', 'b']))]))).toEqual({
      type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } },
    })
  })

  it('reads fromJsonSchema\'s closed objects back as additionalProperties: false', () => {
    const closed = { type: 'object', properties: { a: { type: 'string' }, 'b c': { type: 'number' } }, required: ['a'], additionalProperties: false }
    expect(convert(fromJsonSchema(closed))).toEqual({
      type: 'object', properties: { a: { type: 'string' }, 'b c': { type: ['number', 'null'] } }, required: ['a'], additionalProperties: false,
    })
    expect(convert(fromJsonSchema({ type: 'object', patternProperties: { '^x': { type: 'boolean' } }, additionalProperties: { type: 'string' }, propertyNames: { maxLength: 3 } }))).toEqual({
      type: 'object', patternProperties: { '^x': { type: 'boolean' } }, additionalProperties: { type: 'string' }, propertyNames: { pattern: '^(?=[\\s\\S]{0,3}$)' },
    })
  })
})

describe('toJsonSchema: refusals name the path', () => {
  it.each([
    ['function in an array', Schema.object({ hooks: Schema.array(Schema.function()) }), 'UNSUPPORTED_TYPE', '$.hooks[*]'],
    ['is(Date) alone', Schema.object({ when: Schema.is(Date) }), 'UNSUPPORTED_TYPE', '$.when'],
    ['is(Object) in a union (a JSON value can match it)', Schema.object({ o: Schema.union([Schema.is(Object), Schema.string()]) }), 'UNSUPPORTED_TYPE', '$.o'],
    ['tuple element', Schema.tuple([Schema.string(), Schema.function()]), 'UNSUPPORTED_TYPE', '$[1]'],
    ['dict value, odd key', Schema.object({ 'my map': Schema.dict(Schema.function()) }), 'UNSUPPORTED_TYPE', '$["my map"].*'],
    ['pattern flag i', Schema.object({ options: Schema.object({ mode: Schema.string().pattern(/^a$/i) }) }), 'UNSUPPORTED_CONSTRAINT', '$.options.mode'],
    ['pattern invalid under u', Schema.object({ p: Schema.string().pattern(/\-/) }), 'UNSUPPORTED_CONSTRAINT', '$.p'],
    ['step counted from an unaligned min', Schema.object({ n: Schema.number().min(1).step(2) }), 'UNSUPPORTED_CONSTRAINT', '$.n'],
    ['dict key schema with a length under intersect', Schema.intersect([Schema.dict(String, Schema.string().min(2))]), 'UNSUPPORTED_CONSTRAINT', '$'],
  ])('%s', (_, schema, code, path) => {
    expect(schemaErrorOf(() => toJsonSchema(schema))).toEqual({ code, path })
  })

  it('something that is not a schema', () => {
    expect(schemaErrorOf(() => toJsonSchema({ type: 'string' } as any))).toEqual({ code: 'INVALID_SCHEMA', path: '$' })
  })
})

describe('multipleOf with a decimal step', () => {
  const schema = Schema.number().step(0.1)
  const cases: [number, boolean][] = [[0.7, true], [1.3, true], [-0.2, true], [0.3, true], [0.7000000000000001, false], [0.75, false], [0.30000000000000004, false]]

  it('means decimal division, as JSON Schema defines it: schemastery and the compiled validator agree', () => {
    expect(convert(schema)).toEqual({ type: 'number', multipleOf: 0.1 })
    const validate = compileValidator(schema)
    const verdicts = cases.map(([value]) => {
      let accepted = true
      try {
        schema(value)
      } catch {
        accepted = false
      }
      return [value, accepted, validate(value).ok]
    })
    expect(verdicts).toEqual(cases.map(([value, expected]) => [value, expected, expected]))
  })

  it('is where ajv differs: float division refuses 0.7, and multipleOfPrecision accepts float noise', () => {
    const json = toJsonSchema(schema)
    const plain = new Ajv2020({ strict: false })
    expect([plain.validate(json, 0.7), plain.validate(json, 0.3)]).toEqual([false, false])
    const precise = new Ajv2020({ strict: false, multipleOfPrecision: 9 })
    expect([precise.validate(json, 0.7), precise.validate(json, 0.7000000000000001), precise.validate(json, 0.75)]).toEqual([true, true, false])
  })
})
