import { toStrictJsonSchema } from 'openai/lib/transform'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { checkToolName, convertToDialect, DIALECT_LIMITS, toDialect } from '../src/dialects'
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

const propertiesOf = (schema: JsonSchema | undefined) => schema!.properties as Record<string, JsonSchema>

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

describe('convertToDialect: what a provider cannot state', () => {
  const node: Schema = Schema.object({ name: Schema.string().required(), children: Schema.array(Schema.lazy(() => node)) })
  const convert = (schema: Schema | JsonSchema, dialect: Dialect) => convertToDialect(typeof schema === 'function' ? toJsonSchema(schema as Schema) : schema as JsonSchema, dialect)

  it('json: an unchanged copy, nothing loosened', () => {
    expect(convertToDialect(deploy, 'json')).toEqual({ schema: deploy, loosened: [], encoded: [] })
  })

  it('openai: a strict schema says strict: true and lists the constraints strict mode drops', () => {
    const result = convertToDialect(deploy, 'openai')
    expect(result.strict).toBe(true)
    expect(result.schema).toEqual(toDialect(deploy, 'openai'))
    expect(result.loosened).toEqual([{ path: '$.note', rule: 'at most 80 characters' }])
    expect(result.encoded).toEqual([])
  })

  it('openai: a dict goes with strict: false, as plain JSON Schema', () => {
    expect(convert(Schema.object({ options: Schema.object({ env: Schema.dict(String) }) }), 'openai')).toEqual({
      schema: { type: 'object', properties: { options: { type: 'object', properties: { env: { type: 'object', additionalProperties: { type: 'string' } } } } } },
      loosened: [{ path: '$.options.env', rule: 'keys are any string, values a string (a dict)' }],
      encoded: [],
      strict: false,
    })
  })

  it('openai: a tuple goes with strict: false, its array given items (OpenAI refuses an array without)', () => {
    expect(convert(Schema.object({ pair: Schema.tuple([String, Number]) }), 'openai')).toEqual({
      schema: {
        type: 'object',
        properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2, items: {} } },
        required: ['pair'],
      },
      loosened: [{ path: '$.pair', rule: 'an array [a string, a number] at least 2 items (a tuple)' }],
      encoded: [],
      strict: false,
    })
  })

  it.each([
    ['any', Schema.object({ data: Schema.any() }), [{ path: '$.data', rule: 'any JSON value' }]],
    ['required any', Schema.object({ data: Schema.any().required() }), [{ path: '$.data', rule: 'any JSON value but null' }]],
    ['an object constant', Schema.object({ shape: Schema.const({ a: 1 }) }), [{ path: '$.shape', rule: 'exactly {"a":1}' }]],
    ['a required never', Schema.object({ must: Schema.never().required() }), [{ path: '$.must', rule: 'no value at all' }]],
    ['an intersection that cannot merge', Schema.object({ x: Schema.intersect([Schema.string().pattern(/a/), Schema.string().pattern(/b/)]).required() }),
      [{ path: '$.x', rule: 'a string matching /a/ and a string matching /b/' }]],
    ['a union with Schema.any() (Koishi\'s computed)', Schema.object({ on: Schema.union([Schema.boolean(), Schema.any()]) }), [{ path: '$.on', rule: 'any JSON value but null' }]],
  ])('openai: %s goes with strict: false', (_, schema, loosened) => {
    const result = convert(schema, 'openai')
    expect([result.strict, result.loosened]).toEqual([false, loosened])
    expect(result.schema).toEqual(toDialect(toJsonSchema(schema), 'anthropic'))
  })

  it('openai: an optional never is left out of the closed object (only absence is valid)', () => {
    expect(toDialect(toJsonSchema(Schema.object({ gone: Schema.never(), a: Schema.string() })), 'openai')).toEqual({
      type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false,
    })
  })

  it('an intersection of one scalar type merges exactly: the tighter constraints', () => {
    const json = toJsonSchema(Schema.object({ x: Schema.intersect([Schema.string().max(5), Schema.string().min(1).max(3)]).required() }))
    expect(toDialect(json, 'anthropic').properties).toEqual({ x: { type: 'string', minLength: 1, maxLength: 3 } })
    expect(convertToDialect(json, 'openai')).toMatchObject({ strict: true, loosened: [{ path: '$.x', rule: 'at most 3 characters; at least 1 character' }] })
  })

  it('a root that takes no object becomes an object with any keys, recorded', () => {
    const result = convert(Schema.array(String), 'anthropic')
    expect(result).toEqual({
      schema: { type: 'object', additionalProperties: {} },
      loosened: [{ path: '$', rule: 'the arguments are an array, each item a string' }],
      encoded: [],
    })
    expect(convert(Schema.any(), 'anthropic')).toEqual({ schema: { type: 'object', additionalProperties: {} }, loosened: [], encoded: [] })
  })

  it('anthropic: a root union of objects is flattened into one, the description saying which keys go together', () => {
    expect(convert(Schema.union([Schema.object({ a: String }), Schema.object({ b: String })]), 'anthropic')).toEqual({
      schema: {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        description: 'One of: an object with a (required); an object with b (required).',
      },
      loosened: [{ path: '$', rule: 'one of: an object with a (required); an object with b (required)' }],
      encoded: [],
    })
  })

  it('the Koishi conditional config is one object in every provider dialect', () => {
    const config = Schema.intersect([
      Schema.object({ mode: Schema.union(['a', 'b']).default('a').description('Mode'), name: Schema.string().required() }),
      Schema.union([
        Schema.object({ mode: Schema.const('a'), token: Schema.string() }),
        Schema.object({ mode: Schema.const('b').required(), url: Schema.string().required() }),
      ]),
    ])
    const rule = 'one of: mode "a" with token; mode "b" with url (required)'
    const json = toJsonSchema(config)
    expect(convertToDialect(json, 'anthropic')).toEqual({
      schema: {
        type: 'object',
        properties: {
          mode: { type: 'string', enum: ['a', 'b'], description: 'Mode', default: 'a' },
          name: { type: 'string' },
          token: { type: 'string' },
          url: { type: 'string' },
        },
        required: ['name'],
        description: `One of: mode "a" with token; mode "b" with url (required).`,
      },
      loosened: [{ path: '$', rule }],
      encoded: [],
    })
    const openai = convertToDialect(json, 'openai')
    expect(openai).toMatchObject({ strict: true, loosened: [{ path: '$', rule }] })
    expect(toStrictJsonSchema(openai.schema as any)).toEqual(openai.schema)
    expect(convertToDialect(json, 'gemini')).toMatchObject({ loosened: [{ path: '$', rule }], encoded: [] })
  })

  it('a branch\'s constant does not narrow a key the other parts allow more widely (the switch of ChatLuna\'s config)', () => {
    const config = Schema.intersect([
      Schema.object({ fwd: Schema.boolean().default(false) }),
      Schema.union([Schema.object({ fwd: Schema.const(true).required(), min: Schema.natural() }), Schema.object({})]),
    ])
    const rule = 'one of: an object with fwd true (required), min; an object with only the shared keys'
    const json = toJsonSchema(config)
    expect(convertToDialect(json, 'anthropic')).toEqual({
      schema: {
        type: 'object',
        properties: { fwd: { type: 'boolean', default: false }, min: { type: 'integer', minimum: 0 } },
        description: 'One of: an object with fwd true (required), min; an object with only the shared keys.',
      },
      loosened: [{ path: '$', rule }],
      encoded: [],
    })
    expect(convertToDialect(json, 'openai')).toMatchObject({
      schema: { properties: { fwd: { type: ['boolean', 'null'] } }, required: ['fwd', 'min'] },
      strict: true,
    })
    expect(propertiesOf(toDialect(json, 'openai')).fwd).not.toHaveProperty('enum')
    expect(convertToDialect(json, 'gemini')).toMatchObject({ schema: { properties: { fwd: { type: 'boolean' } } }, loosened: [{ path: '$', rule }] })
    // the same switch nested in a property (Anthropic keeps the exact allOf there), and a constant on a shared number
    const nested = toJsonSchema(Schema.object({ proxy: config }))
    expect(propertiesOf(propertiesOf(toDialect(nested, 'openai')).proxy).fwd).toEqual({ type: ['boolean', 'null'] })
    expect(propertiesOf(propertiesOf(toDialect(nested, 'gemini')).proxy).fwd).toEqual({ type: 'boolean' })
    const days = toJsonSchema(Schema.intersect([
      Schema.object({ days: Schema.number().min(0).max(365).default(7) }),
      Schema.union([Schema.object({ days: Schema.const(0) }), Schema.object({ batch: Schema.natural() })]),
    ]))
    expect(propertiesOf(toDialect(days, 'anthropic')).days).toEqual({ type: 'number', minimum: 0, maximum: 365, default: 7 })
  })

  it('a constant every branch declares still narrows exactly: the branches\' values, within the shared key', () => {
    const json = toJsonSchema(Schema.intersect([
      Schema.object({ mode: Schema.union(['a', 'b', 'c']).default('a') }),
      Schema.union([Schema.object({ mode: Schema.const('a'), token: String }), Schema.object({ mode: Schema.const('b').required() })]),
    ]))
    expect(propertiesOf(toDialect(json, 'anthropic')).mode).toEqual({ type: 'string', enum: ['a', 'b'], default: 'a' })
  })

  it.each([
    ['a union of kinds', Schema.object({ v: Schema.union([Schema.string(), Schema.number()]) }), '$.v', 'a string or a number'],
    ['a bitset', Schema.object({ perms: Schema.bitset({ r: 1 }) }), '$.perms', 'a number or an array, each item a string'],
    ['a dict', Schema.object({ env: Schema.dict(String) }), '$.env', 'an object with any keys, each value a string'],
    ['an empty object (Gemini refuses an object without properties)', Schema.object({ o: Schema.object({}) }), '$.o', 'an object'],
    ['any', Schema.object({ data: Schema.any().description('Payload') }), '$.data', 'any JSON value'],
    ['an array without items', { type: 'object', properties: { a: { type: 'array' } } }, '$.a', 'an array'],
    ['a mixed enum', Schema.object({ size: Schema.union(['auto', 256]) }), '$.size', 'one of "auto", 256'],
  ])('gemini: %s travels as a JSON-encoded string, its description saying so', (_, schema, path, what) => {
    const result = convert(schema as Schema | JsonSchema, 'gemini')
    const description = path === '$.data' ? `Payload (JSON-encoded string of ${what})` : `(JSON-encoded string of ${what})`
    expect(result.schema.properties).toEqual({ [path.slice(2)]: { type: 'string', description } })
    expect(result.encoded).toEqual([path])
    expect(result.loosened).toEqual([{ path, rule: `sent as a JSON-encoded string of ${what}` }])
  })

  it('gemini: recursion is inlined twice, and deeper levels travel encoded', () => {
    const result = convert(Schema.object({ list: Schema.array(Schema.lazy(() => node)) }), 'gemini')
    const level = (children: JsonSchema) => ({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: children } },
      required: ['name'],
      propertyOrdering: ['name', 'children'],
    })
    expect(result.schema.properties).toEqual({
      list: { type: 'array', items: level(level({ type: 'string', description: '(JSON-encoded string of an object with keys name (required), children)' })) },
    })
    expect(result.encoded).toEqual(['$.list[*].children[*].children[*]'])
  })

  it('gemini: a tuple of one kind is an array (unbounded above, as schemastery ignores extra elements); unions of one kind merge; numeric enums keep their type', () => {
    const result = convert(Schema.object({
      at: Schema.tuple([Schema.number().required(), Schema.number().required()]).required(),
      pick: Schema.union([Schema.union(['a', 'b']), Schema.const('c')]).required(),
      level: Schema.union([1, 2, 3]),
      n: Schema.union([Schema.natural(), Schema.number().max(-5)]),
    }), 'gemini')
    expect(result.schema.properties).toEqual({
      at: { type: 'array', items: { type: 'number' }, minItems: 2 },
      pick: { type: 'string', enum: ['a', 'b', 'c'] },
      level: { type: 'integer' },
      n: { type: 'number' },
    })
    expect(result.loosened).toEqual([
      { path: '$.level', rule: 'one of 1, 2, 3' },
      { path: '$.n', rule: 'one of: an integer at least 0 or a number at most -5' },
    ])
    expect(result.encoded).toEqual([])
  })

  it('gemini: an intersection that cannot merge keeps one part (a superset), recorded', () => {
    const result = convert(Schema.object({ x: Schema.intersect([Schema.string().pattern(/a/), Schema.string().pattern(/b/)]).required() }), 'gemini')
    expect(result.schema.properties).toEqual({ x: { type: 'string' } })
    expect(result.loosened).toEqual([
      { path: '$.x', rule: 'all of: a string matching /a/ and a string matching /b/' },
      { path: '$.x', rule: 'matches /a/' },
    ])
  })

  it('keywords JSON Schema does not define are annotations, dropped by the providers', () => {
    const input: JsonSchema = { type: 'object', properties: { a: { type: 'string', 'x-secret': true } } }
    expect(toDialect(input, 'openai')).toEqual({ type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false })
    expect(toDialect(input, 'anthropic')).toEqual({ type: 'object', properties: { a: { type: 'string' } } })
    expect(toDialect(input, 'json')).toEqual(input)
  })

  it('an unknown dialect, or a schema that is not an object, is still refused', () => {
    expect(schemaErrorOf(() => toDialect(deploy, 'mistral' as Dialect))).toEqual({ code: 'DIALECT_REFUSED', path: '$' })
    expect(schemaErrorOf(() => convertToDialect(true as any, 'anthropic'))).toEqual({ code: 'DIALECT_REFUSED', path: '$' })
  })

  it('openai: more than 10 levels of nested objects go with strict: false', () => {
    let schema: Schema = Schema.object({ leaf: Schema.string() })
    for (let level = 0; level < 9; level++) schema = Schema.object({ inner: schema.required() })
    expect(convertToDialect(toJsonSchema(schema), 'openai').strict).toBe(true)
    expect(convertToDialect(toJsonSchema(Schema.object({ inner: schema.required() })), 'openai')).toMatchObject({
      strict: false,
      loosened: [{ path: '$.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner', rule: 'more than 10 levels of nested objects' }],
    })
  })

  it('openai: more properties or enum values than the whole schema may have go with strict: false', () => {
    const wide = Schema.object(Object.fromEntries(Array.from({ length: 5001 }, (_, index) => [`p${index}`, Schema.boolean()])))
    expect(convertToDialect(toJsonSchema(wide), 'openai')).toMatchObject({ strict: false, loosened: [{ path: '$', rule: 'more than 5000 object properties in all (5001)' }] })
    const choices = Schema.object({ pick: Schema.union(Array.from({ length: 1001 }, (_, index) => `v${index}`)).required() })
    expect(convertToDialect(toJsonSchema(choices), 'openai')).toMatchObject({ strict: false, loosened: [{ path: '$', rule: 'more than 1000 enum values in all (1001)' }] })
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
