import Ajv2020 from 'ajv/dist/2020'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { definition, type JsonSchema, toJsonSchema, withoutAbsentNull } from '../src'
import { shapes } from './fixtures/real-world-shapes'
import { fixtures } from './helpers/schema-fixtures'
import { schemasteryAccepts } from './helpers/schemastery-accepts'
import { seeded, valueFor } from './helpers/seeded-values'

// withoutAbsentNull: what MCP's tools/list serves. An optional property is its own type, not
// required; every value schemastery accepts, with its absent-meaning nulls left out, still
// passes; nothing passes that the exact 2020-12 document refuses.

const ajv = new Ajv2020({ strict: false, validateFormats: false, multipleOfPrecision: 9 })

// A value as a client that leaves optional properties out sends it: no key holding null, at any depth (array items keep theirs).
function leftOut(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(leftOut)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== null).map(([key, inner]) => [key, leftOut(inner)]))
}

// Every type array under `properties` that holds null, with its path.
function nullTypes(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return []
  if (Array.isArray(schema)) return schema.flatMap((item, i) => nullTypes(item, `${at}/${i}`))
  const node = schema as JsonSchema
  const own = Array.isArray(node.type) && node.type.includes('null') && /\/properties\/[^/]+$/.test(at) ? [at] : []
  return [...own, ...Object.entries(node).filter(([key]) => !['enum', 'const', 'default', 'examples'].includes(key)).flatMap(([key, child]) => nullTypes(child, `${at}/${key}`))]
}

describe('withoutAbsentNull', () => {
  it('serves an optional property as its own type, not required, and leaves the rest as it was', () => {
    const address = definition('address', Schema.object({ street: Schema.string(), city: Schema.string() }))
    const json = toJsonSchema(Schema.object({
      city: Schema.string().required(),
      days: Schema.natural().max(7).default(1),
      unit: Schema.union(['c', 'f']).default('c').description('Unit'),
      either: Schema.union([String, Number]),
      home: address,
      ids: Schema.array(Schema.natural()),
      env: Schema.dict(Schema.number()),
      payload: Schema.any(),
      nothing: Schema.const(null),
      nested: Schema.object({ depth: Schema.number(), name: Schema.string().required() }),
    }))
    const frozen = JSON.stringify(json)
    expect(withoutAbsentNull(json)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 0, maximum: 7, default: 1 },
        unit: { type: 'string', enum: ['c', 'f'], description: 'Unit', default: 'c' },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        home: { $ref: '#/$defs/address' },
        // items and dict values cannot be left out: their null stays
        ids: { type: 'array', items: { type: ['integer', 'null'], minimum: 0 } },
        env: { type: 'object', additionalProperties: { type: ['number', 'null'] } },
        // any value, null included; and a property that takes only null keeps it
        payload: {},
        nothing: { type: 'null' },
        nested: { type: 'object', properties: { depth: { type: 'number' }, name: { type: 'string' } }, required: ['name'] },
      },
      required: ['city', 'nested'],
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    })
    // a copy: the toolset's document is shared, and frozen there
    expect(JSON.stringify(json)).toBe(frozen)
  })

  it('keeps what sits under not, and a property named __proto__', () => {
    const json: JsonSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":["string","null"]}},"not":{"type":"object","properties":{"x":{"type":["string","null"]}}}}')
    const result = withoutAbsentNull(json)
    expect(Object.keys(result.properties as object)).toEqual(['__proto__'])
    expect(Object.getOwnPropertyDescriptor(result.properties, '__proto__')!.value).toEqual({ type: 'string' })
    expect(result.not).toEqual({ type: 'object', properties: { x: { type: ['string', 'null'] } } })
  })

  const all = [...fixtures.map(({ name, schema }) => ({ name, schema })), ...shapes.map(({ name, schema }) => ({ name, schema }))]

  it.each(all.map((entry, index) => [entry.name, entry, index] as const))('%s: no optional property admits null, every valid value left out that way passes, nothing passes that the exact document refuses', (_, { schema }, index) => {
    const json = toJsonSchema(schema)
    const served = withoutAbsentNull(json)
    expect(nullTypes(served)).toEqual([])
    const exact = ajv.compile(json)
    const narrowed = ajv.compile(served)
    const random = seeded(0xab5e + index)
    const values = Array.from({ length: 200 }, () => valueFor(schema, random)).filter(value => value != null)
    for (const value of values) {
      const sent = leftOut(value)
      if (schemasteryAccepts(schema, value) && exact(sent)) expect([value, narrowed(sent)]).toEqual([value, true])
      if (narrowed(value)) expect([value, exact(value)]).toEqual([value, true])
    }
  })
})
