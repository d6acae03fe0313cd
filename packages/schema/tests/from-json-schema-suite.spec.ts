import Ajv2020 from 'ajv/dist/2020'
import { describe, expect, it } from 'vitest'
import { fromJsonSchema, SchemaError } from '../src'
import { runSuite, type SuiteCase } from './helpers/json-schema-suite'

/**
 * Our own cases in the JSON Schema Test Suite's format: each keyword row of
 * docs/schema-validation.md with instances on both sides of it, and each refused keyword.
 * The corpus tier runs the official suite the same way (from-json-schema-suite.corpus.spec.ts).
 */
const CASES: SuiteCase[] = [
  {
    description: 'type',
    schema: { type: 'string' },
    tests: [
      { description: 'a string', data: 'x', valid: true },
      { description: 'a number', data: 1, valid: false },
      { description: 'null', data: null, valid: false },
    ],
  },
  {
    description: 'several types, null among them',
    schema: { type: ['integer', 'null'] },
    tests: [
      { description: 'an integer', data: 3, valid: true },
      { description: 'an integral float', data: 3.0, valid: true },
      { description: 'null', data: null, valid: true },
      { description: 'a fraction', data: 3.5, valid: false },
      { description: 'a string', data: '3', valid: false },
    ],
  },
  {
    description: 'enum of mixed values',
    schema: { enum: ['a', 1, true, null] },
    tests: [
      { description: 'a listed string', data: 'a', valid: true },
      { description: 'a listed number', data: 1, valid: true },
      { description: 'null, listed', data: null, valid: true },
      { description: 'a string not listed', data: 'b', valid: false },
      { description: 'false, not listed', data: false, valid: false },
    ],
  },
  {
    description: 'const object',
    schema: { const: { a: 1 } },
    tests: [
      { description: 'the same object', data: { a: 1 }, valid: true },
      { description: 'another value', data: { a: 2 }, valid: false },
      { description: 'an extra key', data: { a: 1, b: 2 }, valid: false },
    ],
  },
  {
    description: 'anyOf',
    schema: { anyOf: [{ type: 'string', maxLength: 2 }, { type: 'number', minimum: 10 }] },
    tests: [
      { description: 'the first branch', data: 'ab', valid: true },
      { description: 'the second branch', data: 12, valid: true },
      { description: 'neither', data: 5, valid: false },
    ],
  },
  {
    description: 'allOf',
    schema: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } }, required: ['b'] }] },
    tests: [
      { description: 'both', data: { a: 'x', b: 1 }, valid: true },
      { description: 'the first only', data: { a: 'x' }, valid: false },
      { description: 'the second with a wrong type', data: { a: 'x', b: 'y' }, valid: false },
    ],
  },
  {
    description: 'oneOf with branches of distinct types',
    schema: { oneOf: [{ type: 'string' }, { type: 'boolean' }] },
    tests: [
      { description: 'a string', data: 's', valid: true },
      { description: 'a boolean', data: false, valid: true },
      { description: 'a number', data: 0, valid: false },
    ],
  },
  {
    description: 'string length in code points, and a pattern',
    schema: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z\u{1F600}]+$' },
    tests: [
      { description: 'two astral characters (four UTF-16 units)', data: '\u{1F600}\u{1F600}', valid: true },
      { description: 'three letters', data: 'abc', valid: true },
      { description: 'one letter', data: 'a', valid: false },
      { description: 'four letters', data: 'abcd', valid: false },
      { description: 'a character outside the pattern', data: 'aB', valid: false },
    ],
  },
  {
    description: 'number bounds and multipleOf',
    schema: { type: 'number', minimum: 0, maximum: 10, multipleOf: 2.5 },
    tests: [
      { description: 'the lower bound', data: 0, valid: true },
      { description: 'a multiple', data: 7.5, valid: true },
      { description: 'the upper bound', data: 10, valid: true },
      { description: 'not a multiple', data: 3, valid: false },
      { description: 'above the bound', data: 12.5, valid: false },
      { description: 'below the bound', data: -2.5, valid: false },
    ],
  },
  {
    description: 'exclusive bounds on integers',
    schema: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 5 },
    tests: [
      { description: 'just above', data: 1, valid: true },
      { description: 'just below', data: 4, valid: true },
      { description: 'the lower bound', data: 0, valid: false },
      { description: 'the upper bound', data: 5, valid: false },
    ],
  },
  {
    description: 'properties, required, additionalProperties false',
    schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'], additionalProperties: false },
    tests: [
      { description: 'the required one', data: { name: 'a' }, valid: true },
      { description: 'both', data: { name: 'a', age: 3 }, valid: true },
      { description: 'missing the required one', data: { age: 3 }, valid: false },
      { description: 'an extra key', data: { name: 'a', x: 1 }, valid: false },
      { description: 'an optional one of the wrong type', data: { name: 'a', age: 'old' }, valid: false },
      { description: 'an optional one set to null', data: { name: 'a', age: null }, valid: false },
      { description: 'not an object', data: ['name'], valid: false },
    ],
  },
  {
    description: 'patternProperties beside additionalProperties',
    schema: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: { type: 'number' } },
    tests: [
      { description: 'both kinds', data: { 'x-a': 's', n: 1 }, valid: true },
      { description: 'a pattern key of the wrong type', data: { 'x-a': 1 }, valid: false },
      { description: 'another key of the wrong type', data: { n: 's' }, valid: false },
    ],
  },
  {
    description: 'items and array length',
    schema: { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 3 },
    tests: [
      { description: 'one item', data: [1], valid: true },
      { description: 'three items', data: [1, 2, 3], valid: true },
      { description: 'none', data: [], valid: false },
      { description: 'four items', data: [1, 2, 3, 4], valid: false },
      { description: 'an item of the wrong type', data: [1, 'x'], valid: false },
    ],
  },
  {
    description: 'prefixItems',
    schema: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2 },
    tests: [
      { description: 'both positions', data: ['a', 1], valid: true },
      { description: 'more items than positions', data: ['a', 1, true], valid: true },
      { description: 'positions swapped', data: [1, 'a'], valid: false },
      { description: 'too short', data: ['a'], valid: false },
    ],
  },
  {
    description: 'a recursive local $ref',
    schema: {
      $defs: { node: { type: 'object', properties: { value: { type: 'number' }, next: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    },
    tests: [
      { description: 'a chain', data: { value: 1, next: { value: 2, next: {} } }, valid: true },
      { description: 'a bad value deep down', data: { next: { next: { value: 'x' } } }, valid: false },
    ],
  },
  {
    description: 'annotations',
    schema: { type: 'string', format: 'email', title: 'Mail', description: 'where to write', examples: ['a@b.c'], default: 'x' },
    tests: [
      { description: 'any string: format only annotates', data: 'not an email', valid: true },
      { description: 'not a string', data: 1, valid: false },
    ],
  },
  {
    description: 'a required property that may be null',
    schema: { type: 'object', properties: { note: { type: ['string', 'null'] } }, required: ['note'] },
    tests: [
      { description: 'a string', data: { note: 'x' }, valid: true },
      { description: 'null', data: { note: null }, valid: true },
      { description: 'absent', data: {}, valid: false },
    ],
  },
  // Refused: the converter throws, naming the keyword.
  { description: 'not', schema: { not: { type: 'string' } }, tests: [{ description: 'a number', data: 1, valid: true }] },
  { description: 'if/then', schema: { if: { type: 'string' }, then: { minLength: 1 } }, tests: [{ description: 'empty', data: '', valid: false }] },
  { description: 'contains', schema: { type: 'array', contains: { type: 'string' } }, tests: [{ description: 'no string', data: [1], valid: false }] },
  { description: 'uniqueItems', schema: { type: 'array', uniqueItems: true }, tests: [{ description: 'a repeat', data: [1, 1], valid: false }] },
  { description: 'unevaluatedProperties', schema: { type: 'object', unevaluatedProperties: false }, tests: [{ description: 'a key', data: { a: 1 }, valid: false }] },
  { description: 'propertyNames', schema: { type: 'object', propertyNames: { maxLength: 1 } }, tests: [{ description: 'a long name', data: { ab: 1 }, valid: false }] },
  { description: 'oneOf with overlapping branches', schema: { oneOf: [{ type: 'number' }, { minimum: 1 }] }, tests: [{ description: 'both match', data: 2, valid: false }] },
  { description: 'an exclusive bound on a number', schema: { type: 'number', exclusiveMinimum: 0.5 }, tests: [{ description: 'the bound', data: 0.5, valid: false }] },
  { description: 'a property named after Object.prototype', schema: { type: 'object', properties: { constructor: { type: 'string' } } }, tests: [{ description: 'a string', data: { constructor: 'x' }, valid: true }] },
]

describe('fromJsonSchema on our own cases', () => {
  it('the expected verdicts are JSON Schema\'s: ajv (draft 2020-12) gives every one', () => {
    // Formats are annotations in 2020-12 (as in our conversion): not asserted, and not warned about.
    const ajv = new Ajv2020({ strict: false, validateFormats: false })
    const verdicts = CASES.flatMap(({ description, schema, tests }) => {
      const validate = ajv.compile(schema)
      return tests.map((test) => [description, test.description, validate(test.data)])
    })
    expect(verdicts).toEqual(CASES.flatMap(({ description, tests }) => tests.map((test) => [description, test.description, test.valid])))
  })

  it('agrees with every test of every case it supports, exactly (nullAsAbsent: false)', () => {
    const { counts, disagreements } = runSuite([['own', CASES]], false)
    expect(disagreements).toEqual([])
    expect(counts).toEqual({ supported: 17, refused: 9, remote: 0, tests: 64 })
  })

  it('differs in the default mode only where null stands for an absent value', () => {
    const { counts, disagreements } = runSuite([['own', CASES]], true)
    expect(counts).toEqual({ supported: 18, refused: 8, remote: 0, tests: 67 })
    expect(disagreements).toEqual([
      'own / properties, required, additionalProperties false / an optional one set to null: expected invalid',
      'own / a required property that may be null / absent: expected invalid',
    ])
  })

  it('refuses what it cannot express, naming the keyword', () => {
    const refusals = CASES.flatMap(({ description, schema }) => {
      try {
        fromJsonSchema(schema, { nullAsAbsent: false })
        return []
      } catch (error) {
        if (!SchemaError.is(error)) throw error
        return [[description, error.code, error.path]]
      }
    })
    expect(refusals).toEqual([
      // exact mode only: a required property that may be null cannot be told from an absent one
      ['a required property that may be null', 'UNSUPPORTED_KEYWORD', '$.required'],
      ['not', 'UNSUPPORTED_KEYWORD', '$.not'],
      ['if/then', 'UNSUPPORTED_KEYWORD', '$.if'],
      ['contains', 'UNSUPPORTED_KEYWORD', '$.contains'],
      ['uniqueItems', 'UNSUPPORTED_KEYWORD', '$.uniqueItems'],
      ['unevaluatedProperties', 'UNSUPPORTED_KEYWORD', '$.unevaluatedProperties'],
      ['oneOf with overlapping branches', 'UNSUPPORTED_KEYWORD', '$.oneOf'],
      ['an exclusive bound on a number', 'UNSUPPORTED_KEYWORD', '$.exclusiveMinimum'],
      ['a property named after Object.prototype', 'UNSUPPORTED_KEYWORD', '$.properties.constructor'],
    ])
  })
})
