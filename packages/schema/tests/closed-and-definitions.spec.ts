import Ajv2020 from 'ajv/dist/2020'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { closed, compileValidator, convertToDialect, definition, fromJsonSchema, SchemaError, toJsonSchema } from '../src'
import { messagesOf } from './helpers/issue-messages'
import type { JsonSchema } from '../src/json-schema'
import { schemaErrorOf } from './helpers/catch-error'
import { schemasteryAccepts } from './helpers/schemastery-accepts'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'
const ajv = new Ajv2020({ strict: false })

// The tool the MCP conformance scenario json-schema-2020-12 lists, as its server publishes it.
const conformance: JsonSchema = {
  $schema: DRAFT,
  type: 'object',
  $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
}

const address = definition('address', Schema.object({ street: Schema.string(), city: Schema.string() }))
const args = closed(Schema.object({ name: Schema.string(), address }))

/** The three verdicts a value gets: schemastery's, Dogu's validator's, and ajv's on the exported document. */
function verdicts(schema: Schema, value: unknown) {
  return [schemasteryAccepts(schema, value), compileValidator(schema)(value).ok, ajv.validate(toJsonSchema(schema), value)]
}

describe('the conformance tool written in schemastery', () => {
  it('is listed with $schema, $defs.address and additionalProperties: false', () => {
    expect(toJsonSchema(args)).toEqual({
      $schema: DRAFT,
      type: 'object',
      properties: {
        name: { type: ['string', 'null'] },
        address: { anyOf: [{ $ref: '#/$defs/address' }, { type: 'null' }] },
      },
      additionalProperties: false,
      $defs: { address: { type: 'object', properties: { street: { type: ['string', 'null'] }, city: { type: ['string', 'null'] } } } },
    })
  })

  it('accepts and refuses the same values in schemastery, the validator and JSON Schema', () => {
    const cases: [unknown, boolean][] = [
      [{}, true],
      [{ name: 'n', address: { street: 's', city: 'c' } }, true],
      // the definition itself is open, as the scenario's is
      [{ address: { city: 'c', zip: '1' } }, true],
      [{ name: 'n', age: 3 }, false],
      [{ extra: null }, false],
      [{ address: { city: 1 } }, false],
    ]
    for (const [value, expected] of cases) expect([value, verdicts(args, value)]).toEqual([value, [expected, expected, expected]])
  })

  it('names an unknown key in words a model can act on', () => {
    expect(messagesOf(compileValidator(args)({ name: 'n', age: 3 }))).toEqual({
      ok: false, issues: [{ path: '$.age', message: 'unknown property: not allowed here (got number 3)' }],
    })
  })
})

describe('round trips', () => {
  it('a closed object exported, imported and exported again is the same schema', () => {
    const nested = closed(Schema.object({
      path: Schema.string().required().description('Where'),
      options: closed(Schema.object({ recursive: Schema.boolean(), depth: Schema.natural().max(9) })).description('How'),
      'odd key': Schema.array(closed(Schema.object({ a: Schema.string().required() }))),
    })).description('Arguments')
    const exported = toJsonSchema(nested)
    expect(exported).toMatchObject({ additionalProperties: false, description: 'Arguments', properties: { options: { additionalProperties: false, description: 'How' } } })
    const again = toJsonSchema(fromJsonSchema(exported))
    expect(again).toEqual(exported)
    expect(toJsonSchema(fromJsonSchema(again))).toEqual(exported)
  })

  it('the conformance tool imported keeps its definition and stays closed, and exports the same again', () => {
    const imported = fromJsonSchema(conformance)
    const exported = toJsonSchema(imported)
    expect(exported).toEqual(toJsonSchema(args))
    expect(toJsonSchema(fromJsonSchema(exported))).toEqual(exported)
    expect([verdicts(imported, { name: 'n', age: 3 }), verdicts(imported, { address: { street: 's' } })]).toEqual([[false, false, false], [true, true, true]])
  })

  it('a recursive definition keeps its name through the round trip; draft-07 definitions come back as $defs', () => {
    const json: JsonSchema = {
      type: 'object',
      properties: { root: { $ref: '#/definitions/node' } },
      required: ['root'],
      definitions: { node: { type: 'object', properties: { label: { type: 'string' }, next: { $ref: '#/definitions/node' } }, required: ['label'], additionalProperties: false } },
    }
    const exported = toJsonSchema(fromJsonSchema(json))
    expect(exported).toEqual({
      $schema: DRAFT,
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
      $defs: {
        node: {
          type: 'object',
          properties: { label: { type: 'string' }, next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } },
          required: ['label'],
          additionalProperties: false,
        },
      },
    })
    expect(toJsonSchema(fromJsonSchema(exported))).toEqual(exported)
  })
})

describe('definition()', () => {
  it('puts a schema used twice in $defs once; a copy with its own description carries it beside the $ref', () => {
    const json = toJsonSchema(Schema.object({ home: address.description('Home'), work: address.required() }))
    expect(json).toEqual({
      $schema: DRAFT,
      type: 'object',
      properties: {
        home: { anyOf: [{ $ref: '#/$defs/address' }, { type: 'null' }], description: 'Home' },
        work: { $ref: '#/$defs/address' },
      },
      required: ['work'],
      $defs: { address: { type: 'object', properties: { street: { type: ['string', 'null'] }, city: { type: ['string', 'null'] } } } },
    })
  })

  it('a description every use shares stays in the definition', () => {
    const point = definition('point', Schema.tuple([Number, Number]).description('x, y'))
    expect(toJsonSchema(Schema.object({ from: point, to: point }))).toMatchObject({
      properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } },
      required: ['from', 'to'],
      $defs: { point: { type: 'array', minItems: 2, description: 'x, y' } },
    })
  })

  it('a recursive lazy given a name refers to itself by it', () => {
    const node: Schema = definition('node', Schema.lazy(() => Schema.object({ children: Schema.array(node) })))
    expect(toJsonSchema(Schema.object({ tree: node }))).toMatchObject({
      properties: { tree: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } },
      $defs: { node: { type: 'object', properties: { children: { type: ['array', 'null'], items: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } } } } },
    })
  })

  it('leaves the names it was given to the schemas given them: an unnamed cycle takes another', () => {
    const tree: Schema = Schema.lazy(() => Schema.object({ kids: Schema.array(tree) }))
    const json = toJsonSchema(Schema.object({ tree, other: definition('tree', Schema.string()) }))
    expect(Object.keys(json.$defs as object).sort()).toEqual(['tree', 'tree_2'])
    expect(json.$defs).toMatchObject({ tree: { type: 'string' } })
  })

  it('on the root it is ignored: the arguments stay an object at the root', () => {
    expect(toJsonSchema(definition('args', Schema.object({ q: Schema.string() })))).toEqual({
      $schema: DRAFT, type: 'object', properties: { q: { type: ['string', 'null'] } },
    })
  })

  it('changes no verdict', () => {
    const plain = Schema.object({ street: Schema.string(), city: Schema.string() })
    for (const value of [{}, { city: 'c' }, { city: 1 }, 'x']) {
      expect([value, schemasteryAccepts(address, value), compileValidator(address)(value).ok]).toEqual([value, schemasteryAccepts(plain, value), compileValidator(plain)(value).ok])
    }
  })

  it('refuses one name for two schemas that accept different values, naming both places', () => {
    const error = schemaErrorOf(() => toJsonSchema(Schema.object({ a: address, b: definition('address', Schema.string()) })))
    expect(error).toEqual({ code: 'INVALID_SCHEMA', path: '$.b' })
    expect(() => toJsonSchema(Schema.object({ a: address, b: definition('address', Schema.string()) }))).toThrow(/"address" is given to two schemas .*\$\.a/)
  })

  it('refuses a name that is not a plain identifier, and something that is not a schema', () => {
    for (const name of ['', 'a/b', '1st', 'has space', 'x'.repeat(65)]) {
      expect([name, SchemaError.is(catching(() => definition(name, Schema.string())), 'INVALID_NAME')]).toEqual([name, true])
    }
    expect(SchemaError.is(catching(() => definition('ok', {} as Schema)), 'INVALID_SCHEMA')).toBe(true)
  })
})

describe('closed()', () => {
  it('keeps the object\'s flags, description and own default on the closed schema', () => {
    const schema = closed(Schema.object({ a: Schema.string() }).description('d').default({ a: 'x' }))
    expect(toJsonSchema(Schema.object({ o: schema }))).toMatchObject({
      properties: { o: { type: ['object', 'null'], properties: { a: {} }, additionalProperties: false, description: 'd', default: { a: 'x' } } },
    })
    expect(schema(undefined)).toEqual({ a: 'x' })
    expect(toJsonSchema(Schema.object({ o: closed(Schema.object({ a: Schema.string() }).required()) })).required).toEqual(['o'])
  })

  it('closes a named object under its name, in either order', () => {
    const point = Schema.object({ x: Schema.number().required(), y: Schema.number().required() })
    const expected = { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false }
    for (const named of [closed(definition('point', point)), definition('point', closed(point))]) {
      expect(toJsonSchema(Schema.object({ from: named, to: named }))).toMatchObject({
        properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } },
        $defs: { point: expected },
      })
    }
  })

  it('an object without keys refuses every key', () => {
    const none = closed(Schema.object({}))
    expect(toJsonSchema(none)).toEqual({ $schema: DRAFT, type: 'object', additionalProperties: false })
    expect([verdicts(none, {}), verdicts(none, { a: 1 })]).toEqual([[true, true, true], [false, false, false]])
  })

  it('takes only an object schema', () => {
    for (const schema of [Schema.dict(String), Schema.string(), 'x'] as Schema[]) {
      expect(SchemaError.is(catching(() => closed(schema)), 'INVALID_SCHEMA')).toBe(true)
    }
  })
})

describe('provider dialects', () => {
  const json = toJsonSchema(args)

  it('json: kept as exported', () => {
    expect(convertToDialect(json, 'json').schema).toEqual(json)
  })

  it('anthropic: $defs and $ref kept, the root closed', () => {
    expect(convertToDialect(json, 'anthropic')).toEqual({
      schema: {
        type: 'object',
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
        $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      },
      loosened: [],
      encoded: [],
    })
  })

  it('openai: strict, every object closed', () => {
    const { schema, strict, loosened } = convertToDialect(json, 'openai')
    expect([strict, loosened]).toEqual([true, []])
    expect(schema).toMatchObject({ additionalProperties: false, required: ['name', 'address'], properties: { address: { additionalProperties: false } } })
  })

  it('gemini: the definition inlined, nothing left to refer to', () => {
    expect(convertToDialect(json, 'gemini')).toEqual({
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } }, propertyOrdering: ['street', 'city'] },
        },
        propertyOrdering: ['name', 'address'],
      },
      loosened: [],
      encoded: [],
    })
  })
})

function catching(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
}
