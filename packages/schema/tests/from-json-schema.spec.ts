import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { compileValidator, fromJsonSchema, SchemaError } from '../src'
import { messagesOf } from './helpers/issue-messages'

function refusal(run: () => unknown) {
  try {
    run()
  } catch (error) {
    if (SchemaError.is(error)) return { code: error.code, path: error.path }
    throw error
  }
  return undefined
}

describe('fromJsonSchema', () => {
  const tool = fromJsonSchema({
    type: 'object',
    properties: {
      env: { enum: ['staging', 'prod'], description: 'target' },
      replicas: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
      tags: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 2 },
    },
    required: ['env'],
  })

  it('converts a tool schema: required, enum, integer bounds, default, arrays', () => {
    expect(tool({ env: 'prod' })).toEqual({ env: 'prod', replicas: 2 })
    expect(tool({ env: 'prod', replicas: null })).toEqual({ env: 'prod', replicas: 2 })
    expect(tool.dict!.env!.meta.description).toBe('target')
    expect(messagesOf(compileValidator(tool)({ replicas: 1.5, tags: ['a', '', 'c'] }))).toEqual({
      ok: false,
      issues: [
        { path: '$.env', message: 'missing required property' },
        { path: '$.replicas', message: 'expected an integer, got 1.5' },
        { path: '$.tags', message: 'expected at most 2 items, got 3' },
        { path: '$.tags[1]', message: 'must match the pattern /^(?=[\\s\\S]{1,}$)/u (got "")' },
      ],
    })
  })

  it('drops a default the schema itself rejects, since JSON Schema only annotates with it', () => {
    const schema = fromJsonSchema({ properties: { n: { type: 'integer', default: 'x' } } })
    expect(schema({})).toEqual({})
  })

  it('counts string length in code points', () => {
    const schema = fromJsonSchema({ type: 'string', maxLength: 2 })
    expect(() => schema('\u{1F4A9}\u{1F4A9}')).not.toThrow()
    expect(() => schema('abc')).toThrow()
  })

  it('follows local $ref recursively through Schema.lazy', () => {
    const schema = fromJsonSchema({
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' }, v: { type: 'number' } } } },
      $ref: '#/$defs/node',
    })
    expect(schema({ v: 1, next: { v: 2, next: {} } })).toEqual({ v: 1, next: { v: 2, next: {} } })
    expect(() => schema({ next: { next: { v: 'x' } } })).toThrow()
    expect(messagesOf(compileValidator(schema)({ next: { next: { v: 'x' } } }))).toEqual({
      ok: false,
      issues: [{ path: '$.next.next.v', message: 'expected a number, got string "x"' }],
    })
  })

  it('rejects additional properties through a strict dict of the undeclared keys', () => {
    const schema = fromJsonSchema({ type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false })
    expect(schema({ a: 1 })).toEqual({ a: 1 })
    expect(() => schema({ a: 1, b: 2 })).toThrow()
  })

  it('reads Dogu\'s own forms: not null (a required any), not {} (never), Gemini\'s nullable', () => {
    const schema = fromJsonSchema({
      type: 'object',
      properties: {
        data: { not: { type: 'null' } },
        computed: { anyOf: [{ type: 'boolean' }, { not: { type: 'null' } }] },
        gone: { not: {} },
        nick: { type: 'string', nullable: true },
      },
      required: ['data', 'nick'],
    })
    const validate = compileValidator(schema)
    expect(validate({ data: 0, computed: 'x', nick: null })).toEqual({ ok: true, value: { data: 0, computed: 'x', nick: null } })
    expect(validate({ data: [], nick: 'n' }).ok).toBe(true)
    expect(validate({ data: null }).ok).toBe(false)
    expect(validate({ data: 1, gone: 1 }).ok).toBe(false)
    expect(validate({ data: 1, nick: 1 }).ok).toBe(false)
  })

  it('checks property names: a pattern, lengths or a list of names', () => {
    const schema = fromJsonSchema({ type: 'object', additionalProperties: { type: 'number' }, propertyNames: { pattern: '^x-', maxLength: 4 } })
    expect(schema({ 'x-a': 1 })).toEqual({ 'x-a': 1 })
    expect(() => schema({ 'x-abc': 1 })).toThrow()
    expect(() => schema({ a: 1 })).toThrow()
    const listed = fromJsonSchema({ type: 'object', properties: { a: { type: 'string' } }, propertyNames: { enum: ['a', 'b'] } })
    expect(listed({ a: 'x', b: 2 })).toEqual({ a: 'x', b: 2 })
    expect(() => listed({ c: 1 })).toThrow()
    expect(() => fromJsonSchema({ type: 'object', propertyNames: false })({ a: 1 })).toThrow()
    expect(refusal(() => fromJsonSchema({ propertyNames: { type: 'number' } }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.propertyNames' })
  })

  it('treats null as absent by default and exactly with nullAsAbsent: false', () => {
    const json = { type: 'object', properties: { a: { type: 'string' } } }
    expect(fromJsonSchema(json)({ a: null })).toEqual({ a: null })
    expect(() => fromJsonSchema(json, { nullAsAbsent: false })({ a: null })).toThrow()
    expect(fromJsonSchema(json, { nullAsAbsent: false })({})).toEqual({})
  })

  it('takes oneOf as a union only when its branches are disjoint', () => {
    expect(fromJsonSchema({ oneOf: [{ type: 'string' }, { type: 'number' }] })(3)).toBe(3)
    expect(refusal(() => fromJsonSchema({ oneOf: [{ type: 'number' }, { minimum: 2 }] }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.oneOf' })
  })

  it('refuses what schemastery cannot express, with a code and the path', () => {
    expect(refusal(() => fromJsonSchema({ properties: { a: { not: { type: 'string' } } } }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.properties.a.not' })
    expect(refusal(() => fromJsonSchema({ type: 'number', exclusiveMinimum: 0 }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.exclusiveMinimum' })
    expect(refusal(() => fromJsonSchema({ $ref: 'https://example.com/s.json' }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.$ref' })
    expect(refusal(() => fromJsonSchema({ properties: { constructor: { type: 'number' } } }))).toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.properties.constructor' })
    expect(refusal(() => fromJsonSchema({ type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'] }, { nullAsAbsent: false })))
      .toEqual({ code: 'UNSUPPORTED_KEYWORD', path: '$.required' })
    expect(refusal(() => fromJsonSchema({ type: 'wat' }))).toEqual({ code: 'INVALID_SCHEMA', path: '$.type' })
    expect(refusal(() => fromJsonSchema({ $ref: '#/$defs/missing' }))).toEqual({ code: 'INVALID_SCHEMA', path: '$.$ref' })
  })

  it('makes integers exclusive bounds inclusive', () => {
    const schema = fromJsonSchema({ type: 'integer', exclusiveMinimum: 0.5, exclusiveMaximum: 3 })
    expect([0, 1, 2, 3].map((n) => compileValidator(schema)(n).ok)).toEqual([false, true, true, false])
    expect(schema).toBeInstanceOf(Schema)
  })
})
