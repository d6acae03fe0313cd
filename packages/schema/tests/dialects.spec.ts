import { toStrictJsonSchema } from 'openai/lib/transform'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { checkToolName, DIALECT_LIMITS, toDialect } from '../src/dialects'
import type { Dialect, JsonSchema } from '../src/json-schema'
import { toJsonSchema } from '../src/to-json-schema'
import { schemaErrorOf } from './helpers/catch-error'

const deploy = toJsonSchema(Schema.object({
  env: Schema.union(['staging', 'prod']).required().description('target'),
  note: Schema.string().max(80),
  retries: Schema.natural().max(5).default(3),
  when: Schema.date(),
  tags: Schema.array(Schema.string()),
}))

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

describe('toDialect', () => {
  it('json: an unchanged copy', () => {
    const output = toDialect(deploy, 'json')
    expect(output).toEqual(deploy)
    expect(output).not.toBe(deploy)
  })

  it('does not touch its input', () => {
    const input = deepFreeze(structuredClone(deploy))
    for (const dialect of ['json', 'openai', 'anthropic', 'gemini'] as const) toDialect(input, dialect)
    expect(input).toEqual(deploy)
  })

  it('openai: every key required, optional ones nullable, objects closed, unsupported keywords dropped', () => {
    expect(toDialect(deploy, 'openai')).toEqual({
      type: 'object',
      properties: {
        env: { type: 'string', enum: ['staging', 'prod'], description: 'target' },
        note: { type: ['string', 'null'] },
        retries: { type: ['integer', 'null'], minimum: 0, maximum: 5 },
        when: { type: ['string', 'null'], format: 'date-time' },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
      },
      required: ['env', 'note', 'retries', 'when', 'tags'],
      additionalProperties: false,
    })
  })

  it('anthropic: 2020-12 without $schema, optional values omitted rather than null', () => {
    expect(toDialect(deploy, 'anthropic')).toEqual({
      type: 'object',
      properties: {
        env: { type: 'string', enum: ['staging', 'prod'], description: 'target' },
        note: { type: 'string', maxLength: 80 },
        retries: { type: 'integer', minimum: 0, maximum: 5, default: 3 },
        when: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['env'],
    })
  })

  it('gemini: the OpenAPI subset with propertyOrdering', () => {
    expect(toDialect(deploy, 'gemini')).toEqual({
      type: 'object',
      properties: {
        env: { type: 'string', enum: ['staging', 'prod'], description: 'target' },
        note: { type: 'string' },
        retries: { type: 'integer', minimum: 0, maximum: 5 },
        when: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['env'],
      propertyOrdering: ['env', 'note', 'retries', 'when', 'tags'],
    })
  })

  it('openai: null joins a typed anyOf branch, and an optional $ref becomes a nullable copy of its target', () => {
    // a union has no default, so these links may be absent (a bare object's default {} would recurse forever)
    const leaf: Schema = Schema.lazy(() => Schema.object({ value: Schema.number(), next: Schema.union([leaf]) }))
    const output = toDialect(toJsonSchema(Schema.object({
      limit: Schema.union([Schema.const('auto'), Schema.number()]),
      list: Schema.object({ head: Schema.union([leaf]) }),
    })), 'openai')
    expect(output.properties).toEqual({
      limit: { anyOf: [{ type: ['string', 'null'], enum: ['auto', null] }, { type: 'number' }] },
      list: {
        type: ['object', 'null'],
        properties: {
          head: {
            type: ['object', 'null'],
            properties: { value: { type: ['number', 'null'] }, next: { anyOf: [{ $ref: '#/$defs/head' }, { type: 'null' }] } },
            required: ['value', 'next'],
            additionalProperties: false,
          },
        },
        required: ['head'],
        additionalProperties: false,
      },
    })
    // the openai package's own strict transformer has nothing to change
    expect(toStrictJsonSchema(output as any)).toEqual(output)
  })

  it('gemini: const becomes a string enum, a numeric enum keeps only its type, a required nullable becomes nullable', () => {
    const input: JsonSchema = {
      type: 'object',
      properties: {
        version: { type: 'string', const: '1.0' },
        level: { type: 'number', enum: [1, 2, 3] },
        nick: { type: ['string', 'null'] },
      },
      required: ['version', 'level', 'nick'],
      additionalProperties: false,
    }
    expect(toDialect(input, 'gemini')).toEqual({
      type: 'object',
      properties: {
        version: { type: 'string', enum: ['1.0'] },
        level: { type: 'number' },
        nick: { type: 'string', nullable: true },
      },
      required: ['version', 'level', 'nick'],
      propertyOrdering: ['version', 'level', 'nick'],
    })
  })

  it('gemini: a non-recursive $ref is inlined', () => {
    const input: JsonSchema = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/point', description: 'start' } },
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
    }
    expect(toDialect(input, 'gemini')).toEqual({
      type: 'object',
      properties: { a: { type: 'object', properties: { x: { type: 'number' } }, description: 'start', propertyOrdering: ['x'] } },
      propertyOrdering: ['a'],
    })
  })
})

describe('toDialect: refusals name the path', () => {
  const cases: [string, Schema | JsonSchema, Dialect, string][] = [
    ['openai: a dict', Schema.object({ options: Schema.object({ env: Schema.dict(String) }) }), 'openai', '$.options.env'],
    ['openai: a tuple', Schema.object({ pair: Schema.tuple([String, Number]) }), 'openai', '$.pair'],
    ['openai: any', Schema.object({ data: Schema.any() }), 'openai', '$.data'],
    ['openai: required any', Schema.object({ data: Schema.any().required() }), 'openai', '$.data'],
    ['openai: an object constant', Schema.object({ shape: Schema.const({ a: 1 }) }), 'openai', '$.shape'],
    ['openai: never', Schema.object({ gone: Schema.never() }), 'openai', '$.gone'],
    ['openai: a root that is not an object', Schema.array(String), 'openai', '$'],
    ['openai: an allOf that cannot merge', Schema.object({ x: Schema.intersect([Schema.string(), Schema.string().min(1)]) }), 'openai', '$.x'],
    ['anthropic: a root union', Schema.union([Schema.object({ a: String }), Schema.object({ b: String })]), 'anthropic', '$'],
    ['gemini: a union of shapes', Schema.object({ v: Schema.union([Schema.string(), Schema.number()]) }), 'gemini', '$.v'],
    ['gemini: a bitset', Schema.object({ perms: Schema.bitset({ r: 1 }) }), 'gemini', '$.perms'],
    ['gemini: a dict', Schema.object({ env: Schema.dict(String) }), 'gemini', '$.env'],
    ['gemini: recursion', Schema.object({ list: Schema.array(Schema.lazy(() => node)) }), 'gemini', '$.list[*].children[*]'],
    ['gemini: an array without items', { type: 'object', properties: { a: { type: 'array' } } }, 'gemini', '$.a'],
    ['any dialect: an unknown keyword', { type: 'object', properties: { a: { type: 'string', 'x-secret': true } } }, 'openai', '$.a'],
  ]
  const node: Schema = Schema.object({ name: Schema.string().required(), children: Schema.array(Schema.lazy(() => node)) })

  it.each(cases)('%s', (_, schema, dialect, path) => {
    const json = typeof schema === 'function' ? toJsonSchema(schema as Schema) : schema as JsonSchema
    expect(schemaErrorOf(() => toDialect(json, dialect))).toEqual({ code: 'DIALECT_REFUSED', path })
  })

  it('an unknown dialect', () => {
    expect(schemaErrorOf(() => toDialect(deploy, 'mistral' as Dialect))).toEqual({ code: 'DIALECT_REFUSED', path: '$' })
  })

  it('openai: more than 10 levels of nested objects', () => {
    let schema: Schema = Schema.object({ leaf: Schema.string() })
    for (let level = 0; level < 9; level++) schema = Schema.object({ inner: schema.required() })
    expect(() => toDialect(toJsonSchema(schema), 'openai')).not.toThrow()
    expect(schemaErrorOf(() => toDialect(toJsonSchema(Schema.object({ inner: schema.required() })), 'openai')))
      .toEqual({ code: 'DIALECT_REFUSED', path: '$.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner' })
  })

  it('openai: more properties or enum values than the whole schema may have', () => {
    const wide = Schema.object(Object.fromEntries(Array.from({ length: 5001 }, (_, index) => [`p${index}`, Schema.boolean()])))
    expect(schemaErrorOf(() => toDialect(toJsonSchema(wide), 'openai'))).toEqual({ code: 'DIALECT_REFUSED', path: '$' })
    const choices = Schema.object({ pick: Schema.union(Array.from({ length: 1001 }, (_, index) => `v${index}`)).required() })
    expect(schemaErrorOf(() => toDialect(toJsonSchema(choices), 'openai'))).toEqual({ code: 'DIALECT_REFUSED', path: '$' })
  })
})

describe('checkToolName', () => {
  it.each([
    ['deploy', ['json', 'openai', 'anthropic', 'gemini'], []],
    ['a'.repeat(64), ['json', 'openai', 'anthropic', 'gemini'], []],
    ['a'.repeat(65), [], ['json', 'openai', 'anthropic', 'gemini']],
    ['fs.read', ['gemini'], ['json', 'openai', 'anthropic']],
    ['1st', ['json', 'openai', 'anthropic'], ['gemini']],
    ['', [], ['json', 'openai', 'anthropic', 'gemini']],
    ['run tool', [], ['json', 'openai', 'anthropic', 'gemini']],
  ] as const)('%s', (name, accepted, refused) => {
    for (const dialect of accepted) expect(checkToolName(name, dialect)).toBeUndefined()
    for (const dialect of refused) expect(schemaErrorOf(() => checkToolName(name, dialect))).toEqual({ code: 'INVALID_NAME', path: '$' })
  })

  it('the limits table is frozen', () => {
    expect(Object.isFrozen(DIALECT_LIMITS)).toBe(true)
    expect(Object.isFrozen(DIALECT_LIMITS.openai)).toBe(true)
    expect(DIALECT_LIMITS.openai).toMatchObject({ maxToolNameLength: 64, maxDepth: 10, maxProperties: 5000, maxEnumValues: 1000, rootObject: true })
  })
})
