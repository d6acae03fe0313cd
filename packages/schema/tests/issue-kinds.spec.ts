import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { compileValidator, type IssueKind, issueMessage, type ValidationIssue } from '../src'

const flags = Schema.bitset({ read: 1, write: 2 })

/** One input per problem kind, with the issue it must give. */
const CASES: [IssueKind, Schema, unknown, Omit<ValidationIssue, 'message'>][] = [
  ['required', Schema.object({ a: Schema.string().required() }), {}, { path: '$.a', kind: 'required', params: { property: true } }],
  ['type', Schema.object({ a: Schema.number() }), { a: 'x' }, { path: '$.a', kind: 'type', params: { expected: { type: 'number' }, got: { type: 'string', text: '"x"' } } }],
  ['enum', Schema.union(['a', 'b']), 'c', { path: '$', kind: 'enum', params: { options: ['"a"', '"b"'], got: { type: 'string', text: '"c"' } } }],
  ['flag', flags, ['read', 2], { path: '$[1]', kind: 'flag', params: { options: ['"read"', '"write"'], got: { type: 'number', text: '2' } } }],
  ['pattern', Schema.string().pattern(/^\d+$/), 'ab', { path: '$', kind: 'pattern', params: { pattern: '/^\\d+$/', got: { type: 'string', text: '"ab"' } } }],
  ['max', Schema.number().max(3), 4, { path: '$', kind: 'max', params: { limit: 3, got: { type: 'number', text: '4' } } }],
  ['min', Schema.number().min(3), 2, { path: '$', kind: 'min', params: { limit: 3, got: { type: 'number', text: '2' } } }],
  ['step', Schema.number().min(1).step(2), 2, { path: '$', kind: 'step', params: { step: 2, from: 1, got: { type: 'number', text: '2' } } }],
  ['max_length', Schema.string().max(2), 'abc', { path: '$', kind: 'max_length', params: { limit: 2, unit: 'characters', got: { type: 'number', text: '3' } } }],
  ['min_length', Schema.array(Schema.string()).min(1), [], { path: '$', kind: 'min_length', params: { limit: 1, unit: 'items', got: { type: 'number', text: '0' } } }],
  ['property_name', Schema.dict(Schema.number(), Schema.union(['x', 'y'])), { z: 1 }, {
    path: '$', kind: 'property_name', params: { name: '"z"', problem: { kind: 'enum', params: { options: ['"x"', '"y"'], got: { type: 'string', text: '"z"' } } } },
  }],
  ['unknown_field', Schema.dict(Schema.never()), { a: [1, 2] }, { path: '$.a', kind: 'unknown_field', params: { got: { type: 'array', items: 2 } } }],
  ['convert', Schema.transform(Schema.string(), () => { throw new Error('boom') }, true), 'x', { path: '$', kind: 'convert', params: { error: 'boom', got: { type: 'string', text: '"x"' } } }],
  ['other', Schema.object({ p: Schema.union([Schema.object({ q: flags })]) }), { p: { q: 'x' } }, { path: '$.p', kind: 'other', params: { message: 'expected { q?: bitset } but got {"q":"x"}' } }],
]

describe('validation issues: kind and params', () => {
  it.each(CASES)('%s: the issue names its kind and parameters, and its message is their English', (_, schema, input, expected) => {
    const result = compileValidator(schema)(input)
    expect(result.ok).toBe(false)
    const [issue] = (result as { issues: ValidationIssue[] }).issues
    const { message, ...detail } = issue!
    expect(detail).toEqual(expected)
    expect(message).toBe(issueMessage(issue!))
  })

  it('covers every kind', () => {
    const kinds: Record<IssueKind, true> = {
      required: true, type: true, enum: true, flag: true, pattern: true, max: true, min: true, step: true,
      max_length: true, min_length: true, property_name: true, unknown_field: true, convert: true, other: true,
    }
    expect(new Set(CASES.map(([kind]) => kind))).toEqual(new Set(Object.keys(kinds)))
  })

  it('words a value of each type as the model reads it', () => {
    const validate = compileValidator(Schema.object({ a: Schema.string() }))
    const got = (value: unknown) => (validate({ a: value }) as { issues: ValidationIssue[] }).issues[0]!.message
    expect(got(3)).toBe('expected a string, got number 3')
    expect(issueMessage({ kind: 'type', params: { expected: { type: 'string' }, got: { type: 'null' } } })).toBe('expected a string, got null')
    expect(got(true)).toBe('expected a string, got boolean true')
    expect(got([1])).toBe('expected a string, got an array of 1 items')
    expect(got({})).toBe('expected a string, got an object')
    expect(got(new Date(0))).toBe('expected a string, got a Date')
    expect(got(10n)).toBe('expected a string, got 10')
    expect(issueMessage({ kind: 'type', params: { expected: { type: 'string' }, got: { type: 'secret' } } })).toBe('expected a string, got ••••')
  })
})
