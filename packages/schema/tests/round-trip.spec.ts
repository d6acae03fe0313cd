import Ajv2020 from 'ajv/dist/2020'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { convertToDialect, fromJsonSchema, toDialect, toJsonSchema } from '../src'
import type { Dialect, JsonSchema } from '../src/json-schema'
import { dialectShape } from './dialect-shape'
import { shapes } from './fixtures/real-world-shapes'
import { schemasteryAccepts } from './helpers/schemastery-accepts'

const ajv = new Ajv2020({ strict: false, validateFormats: false })
const dialects: Dialect[] = ['openai', 'anthropic', 'gemini', 'json']

const tool = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema =>
  ({ type: 'object', properties, ...required.length ? { required } : {} })

// Property schemas as MCP servers publish them, each with values that must pass or fail.
const cases: [name: string, json: JsonSchema, valid: unknown[], invalid: unknown[]][] = [
  ['optional string enum', tool({ mode: { type: 'string', enum: ['fast', 'full'] } }), [{}, { mode: 'fast' }], [{ mode: 'slow' }, { mode: 1 }]],
  ['required string enum', tool({ mode: { type: 'string', enum: ['fast', 'full'] } }, ['mode']), [{ mode: 'full' }], [{}, { mode: 'slow' }]],
  ['integer enum', tool({ level: { type: 'integer', enum: [1, 2, 3] } }, ['level']), [{ level: 2 }], [{ level: 4 }, { level: '2' }]],
  ['optional integer enum', tool({ level: { type: 'integer', enum: [0, 10] } }), [{}, { level: 10 }], [{ level: 5 }]],
  ['number enum', tool({ ratio: { type: 'number', enum: [0.5, 1] } }), [{ ratio: 0.5 }], [{ ratio: 2 }]],
  ['boolean enum', tool({ confirm: { type: 'boolean', enum: [true] } }, ['confirm']), [{ confirm: true }], [{ confirm: false }]],
  ['string const', tool({ kind: { type: 'string', const: 'search' } }, ['kind']), [{ kind: 'search' }], [{ kind: 'fetch' }]],
  ['enum with description and default',
    tool({ sort: { type: 'string', enum: ['asc', 'desc'], description: 'Sort order', default: 'asc' } }), [{}, { sort: 'desc' }], [{ sort: 'up' }]],
  ['required enum with description',
    tool({ sort: { type: 'string', enum: ['asc', 'desc'], description: 'Sort order' } }, ['sort']), [{ sort: 'asc' }], [{}]],
  ['enum with string constraints every value meets',
    tool({ code: { type: 'string', minLength: 2, maxLength: 2, enum: ['en', 'fr'] } }, ['code']), [{ code: 'fr' }], [{ code: 'de' }]],
  ['nullable enum', tool({ state: { type: ['string', 'null'], enum: ['open', 'closed', null] } }), [{}, { state: 'open' }], [{ state: 'merged' }]],
  ['nested object with an enum',
    tool({ filter: tool({ state: { type: 'string', enum: ['open', 'closed'] }, label: { type: 'string' } }, ['state']) }, ['filter']),
    [{ filter: { state: 'open' } }], [{ filter: { state: 'merged' } }, { filter: {} }]],
  ['array of enum items',
    tool({ fields: { type: 'array', items: { type: 'string', enum: ['id', 'name', 'email'] }, description: 'Fields to return' } }),
    [{}, { fields: ['id', 'email'] }], [{ fields: ['id', 'phone'] }]],
  ['enum inside anyOf', tool({ limit: { anyOf: [{ type: 'string', enum: ['all'] }, { type: 'integer', minimum: 1 }] } }), [{ limit: 'all' }, { limit: 3 }], [{ limit: 'none' }, { limit: 0 }]],
  ['oneOf of described constants',
    tool({ scope: { oneOf: [{ const: 'user', description: 'Only mine' }, { const: 'org', description: 'Everyone' }] } }, ['scope']), [{ scope: 'org' }], [{ scope: 'all' }]],
  // zod-based MCP servers close every object
  ['a closed object (zod)',
    { ...tool({ path: { type: 'string' }, recursive: { type: 'boolean' } }, ['path']), additionalProperties: false },
    [{ path: 'a' }, { path: 'a', recursive: true }], [{}, { path: 'a', extra: 1 }, { path: 1 }]],
  ['closed objects nested in an array (zod)',
    { ...tool({ edits: { type: 'array', items: { ...tool({ oldText: { type: 'string' }, newText: { type: 'string' } }, ['oldText', 'newText']), additionalProperties: false } } }, ['edits']), additionalProperties: false },
    [{ edits: [] }, { edits: [{ oldText: 'a', newText: 'b' }] }], [{ edits: [{ oldText: 'a' }] }, { edits: [{ oldText: 'a', newText: 'b', more: 1 }] }]],
  ['a record of strings (zod z.record)',
    { ...tool({ env: { type: 'object', additionalProperties: { type: 'string' } } }), additionalProperties: false },
    [{}, { env: { A: 'b' } }], [{ env: { A: 1 } }, { other: 1 }]],
  ['plain scalars under a draft-07 $schema',
    { ...tool({ query: { type: 'string', description: 'Search text' }, page: { type: 'integer', minimum: 1, default: 1 }, exact: { type: 'boolean' } }, ['query']), $schema: 'http://json-schema.org/draft-07/schema#' },
    [{ query: 'x' }, { query: 'x', page: 2, exact: true }], [{}, { query: 'x', page: 0 }]],
]

function attempt(run: () => JsonSchema): JsonSchema | Error {
  try {
    return run()
  } catch (error) {
    return error as Error
  }
}

/** What ajv says of `value` under a document, whatever meta-schema it names. */
function verdict(json: JsonSchema, value: unknown): boolean {
  const { $schema: _, ...rest } = json
  return ajv.validate(rest, value) as boolean
}

describe('fromJsonSchema → toJsonSchema → dialect', () => {
  describe.each(cases)('%s', (_, json, valid, invalid) => {
    const back = toJsonSchema(fromJsonSchema(json))

    it.each(dialects)('%s: converts after the round trip whenever it converts directly', (dialect) => {
      const direct = attempt(() => toDialect(json, dialect))
      const round = attempt(() => toDialect(back, dialect))
      if (direct instanceof Error) return
      expect(round).not.toBeInstanceOf(Error)
      // `json` is our own 2020-12 output: it adds `$schema`, and admits null where a value may
      // be absent (schemastery's null-as-absent), so only the provider dialects compare sizes.
      if (dialect !== 'json') expect(JSON.stringify(round).length).toBeLessThanOrEqual(JSON.stringify(direct).length)
    })

    it('accepts and refuses what the original schema does', () => {
      for (const value of valid) expect([value, verdict(json, value), verdict(back, value)]).toEqual([value, true, true])
      for (const value of invalid) expect([value, verdict(json, value), verdict(back, value)]).toEqual([value, false, false])
    })
  })
})

describe('typed enums', () => {
  it('come back from fromJsonSchema as their values, not an intersection with the type', () => {
    const back = toJsonSchema(fromJsonSchema(tool({
      mode: { type: 'string', enum: ['fast', 'full'], description: 'Speed' },
      level: { type: 'integer', enum: [1, 2] },
      ratio: { type: 'number', const: 0.5 },
    }, ['mode', 'ratio'])))
    expect(back).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['fast', 'full'], description: 'Speed' },
        level: { type: ['integer', 'null'], enum: [1, 2, null] },
        ratio: { type: 'number', const: 0.5 },
      },
      required: ['mode', 'ratio'],
    })
  })

  it('gain their type when the original left it out: the one place a round trip grows', () => {
    const json = tool({ mode: { enum: ['a', 'b'] } }, ['mode'])
    const back = toJsonSchema(fromJsonSchema(json))
    const expected = { type: 'object', properties: { mode: { type: 'string', enum: ['a', 'b'] } }, required: ['mode'] }
    // openai and gemini infer the type themselves; anthropic takes 2020-12 as it is
    expect(toDialect(json, 'anthropic')).toEqual({ ...expected, properties: { mode: { enum: ['a', 'b'] } } })
    expect(toDialect(back, 'anthropic')).toEqual(expected)
    expect(toDialect(back, 'gemini')).toEqual(toDialect(json, 'gemini'))
    expect(toDialect(back, 'openai')).toEqual(toDialect(json, 'openai'))
  })

  it('keep the type where it refuses a listed value', () => {
    const schema = fromJsonSchema({ type: 'integer', enum: [1, 1.5] })
    expect(schema(1)).toBe(1)
    expect(() => schema(1.5)).toThrow()
    expect(toJsonSchema(schema)).toMatchObject({ allOf: [{ type: 'integer' }, { type: 'number', enum: [1, 1.5] }] })
  })

  it('toJsonSchema types whole-number constants as integer, and a mix with fractions as number', () => {
    expect(toJsonSchema(Schema.union([1, 2]).required())).toMatchObject({ type: 'integer', enum: [1, 2] })
    expect(toJsonSchema(Schema.union([1, 2.5]).required())).toMatchObject({ type: 'number', enum: [1, 2.5] })
    expect(toJsonSchema(Schema.const(42).required())).toMatchObject({ type: 'integer', const: 42 })
  })
})

// Tools exported over MCP in any dialect can be imported again: fromJsonSchema reads the
// output (OpenAI strict mode's nullable forms, Gemini's `nullable` and encoded strings, the
// `not: { type: 'null' }` of Schema.computed), and the imported schema converts everywhere.
describe('fromJsonSchema reads every dialect output of the real-world shapes back', () => {
  for (const shape of shapes) {
    it.each(dialects)(`${shape.name}: %s`, (dialect) => {
      const conversion = convertToDialect(toJsonSchema(shape.schema), dialect)
      const back = fromJsonSchema(conversion.schema)
      const json = toJsonSchema(back)
      for (const other of dialects) expect(() => convertToDialect(json, other)).not.toThrow()
      for (const value of shape.valid) expect([value, schemasteryAccepts(back, dialectShape(value, conversion))]).toEqual([value, true])
      if (dialect !== 'json') return
      // the 2020-12 document is exact, so its import refuses what the original refuses
      for (const value of shape.invalid) expect([value, schemasteryAccepts(back, value)]).toEqual([value, false])
    })
  }
})
