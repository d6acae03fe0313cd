import { definition, toJsonSchema } from '@dogu/schema'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { shapes } from '../../schema/tests/fixtures/real-world-shapes'
import { defineTool } from '../src'
import { isPlainSchema } from '../src/plain-schema'

// defineTool converts at definition time only the schemas isPlainSchema cannot vouch for:
// a schema it calls plain whose conversion failed would be refused at the first
// definitions() call instead of at defineTool, which is the promise this guards.
const unconvertible: [string, Schema][] = [
  ['a function field', Schema.object({ fn: Schema.function() })],
  ['a class check deep in an array', Schema.object({ list: Schema.array(Schema.object({ when: Schema.is(Date) })) })],
  ['a case-insensitive pattern', Schema.object({ code: Schema.string().pattern(/^[a-z]+$/i) })],
  ['a pattern invalid with the u flag', Schema.object({ code: Schema.string().pattern(/\-/) })],
  ['a step counted from min 1', Schema.object({ odd: Schema.number().min(1).step(2) })],
  ['a constant JSON cannot carry', Schema.object({ big: Schema.const(10n as never) })],
  ['a union holding a function', Schema.object({ pick: Schema.union([Schema.string(), Schema.function()]) })],
  ['a dict inside an intersect keyed by a non-pattern', Schema.intersect([Schema.object({}), Schema.dict(Schema.string(), Schema.union(['a', 'b']).min(1) as never)])],
]

describe('isPlainSchema', () => {
  it('never vouches for a schema whose conversion fails', () => {
    for (const [label, schema] of unconvertible) {
      let failed = false
      try {
        toJsonSchema(schema)
      } catch {
        failed = true
      }
      if (failed) expect(isPlainSchema(schema), label).toBe(false)
    }
    for (const { name, schema } of shapes) {
      if (isPlainSchema(schema)) expect(() => toJsonSchema(schema), name).not.toThrow()
    }
  })

  it('vouches for the flat argument objects most tools declare', () => {
    const args = Schema.object({
      city: Schema.string().required().description('The city'),
      unit: Schema.union(['c', 'f']).default('c'),
      days: Schema.natural().max(14).default(1),
      tags: Schema.array(String),
      extra: Schema.dict(Schema.boolean()),
      point: Schema.tuple([Number, Number]),
    })
    expect(isPlainSchema(args)).toBe(true)
    expect(isPlainSchema(Schema.object({ id: definition('Id', Schema.string()) }))).toBe(false)
    expect(isPlainSchema(Schema.object({ later: Schema.lazy(() => Schema.string()) }))).toBe(false)
  })

  it('leaves defineTool refusing each unconvertible schema at definition time, with its path', () => {
    for (const [label, args] of unconvertible.slice(0, 5)) {
      expect(() => defineTool({ name: 'bad', description: label, args, run: () => 'x' }), label).toThrow(/^tool "bad": /)
    }
    expect(() => defineTool({ name: 'bad', description: '', args: unconvertible[1][1], run: () => 'x' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGS_SCHEMA' }))
  })
})
