import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { compileValidator, formatIssues } from '../src'
import { messagesOf } from './helpers/issue-messages'
import { seeded } from './helpers/seeded-values'

const strings = ['', 'a', 'hello', 'staging', 'prod', 'dev', '2020-01-01', 'not a date', 'x'.repeat(12), 'Ab1', '__proto__', 'constructor']
const numbers = [0, -0, 1, 2, 3, -1, 0.5, 0.01, 0.07, 0.3, 1.5, 7, 10, 11, 100, 1e21, -3.25]
const junk: (() => unknown)[] = [
  () => null, () => undefined, () => 3, () => '3', () => true, () => [], () => ({}), () => [1, 'a'],
  () => JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}'),
  () => JSON.parse('{"constructor": {"prototype": {"polluted": 1}}, "toString": 1}'),
  () => new Date(0),
]

function generator(seed: number) {
  const { next, pick } = seeded(seed)
  const anyValue = (depth = 0): unknown => {
    const r = next()
    if (r < 0.2) return pick(strings)
    if (r < 0.4) return pick(numbers)
    if (r < 0.5) return next() < 0.5
    if (r < 0.6 || depth > 2) return pick(junk)()
    if (r < 0.8) return Array.from({ length: Math.floor(next() * 3) }, () => anyValue(depth + 1))
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 3) }, () => [pick(strings), anyValue(depth + 1)]))
  }

  /** Mostly values the schema accepts, with a wrong value, null, undefined or an extra key now and then. */
  const gen = (schema: Schema, depth = 0): unknown => {
    if (next() < 0.12) return next() < 0.5 ? pick(junk)() : anyValue(depth)
    switch (schema.type) {
      case 'string': return pick(strings)
      case 'number': return pick(numbers)
      case 'boolean': return next() < 0.5
      case 'const': return next() < 0.8 ? schema.value : anyValue(depth)
      case 'any': return anyValue(depth)
      case 'union': case 'intersect': {
        if (schema.type === 'intersect' && schema.list!.every((inner) => inner.type === 'object')) {
          return Object.assign({}, ...schema.list!.map((inner) => gen(inner, depth)))
        }
        return gen(pick(schema.list!), depth)
      }
      case 'transform': return gen(schema.inner!, depth)
      case 'lazy': return depth > 3 ? undefined : gen(schema.builder!(), depth + 1)
      case 'is': return next() < 0.5 ? new Date(Math.floor(next() * 1e12)) : anyValue(depth)
      case 'bitset': {
        const names = Object.keys(schema.bits!)
        return next() < 0.5 ? Math.floor(next() * 16) : names.filter(() => next() < 0.5).concat(next() < 0.1 ? [3 as any] : [])
      }
      case 'array': return Array.from({ length: Math.floor(next() * 4) }, () => gen(schema.inner!, depth + 1))
      case 'tuple': return Array.from({ length: Math.floor(next() * (schema.list!.length + 2)) }, (_, i) => {
        return i < schema.list!.length ? gen(schema.list![i]!, depth + 1) : anyValue(depth + 1)
      })
      case 'dict': return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick(strings), gen(schema.inner!, depth + 1)]))
      case 'object': {
        const result: any = {}
        for (const [key, inner] of Object.entries(schema.dict!)) {
          if (next() < 0.75) result[key] = gen(inner, depth + 1)
        }
        if (next() < 0.15) result[pick(strings)] = anyValue(depth + 1)
        if (next() < 0.05) return Object.assign(JSON.parse('{"__proto__": {"polluted": true}}'), result)
        return result
      }
      default: return anyValue(depth)
    }
  }
  return gen
}

/** A copy that keeps own `__proto__` keys, dates and holes, because schemastery mutates its input. */
function copy(value: any): any {
  if (Array.isArray(value)) return value.map(copy)
  if (value instanceof Date) return new Date(value.valueOf())
  if (value === null || typeof value !== 'object') return value
  const result: any = {}
  for (const key of Object.keys(value)) {
    Object.defineProperty(result, key, { value: copy(value[key]), enumerable: true, writable: true, configurable: true })
  }
  return result
}

/**
 * Deep equality over own enumerable keys, `undefined` values included. Prototypes are not
 * compared (schemastery may swap an output's prototype through a `__proto__` key), and
 * jest's equality would trip on own `constructor` keys.
 */
function same(a: any, b: any): boolean {
  if (Object.is(a, b)) return true
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.valueOf() === b.valueOf()
  if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b)
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => Object.hasOwn(b, key) && same(a[key], b[key]))
}

const fixtures: Record<string, Schema> = {
  'string': Schema.string(),
  'required string': Schema.string().required(),
  'string with pattern and length': Schema.string().pattern(/^[a-z]+$/).min(2).max(5),
  'string with global pattern': Schema.string().pattern(/a/g),
  'number': Schema.number(),
  'number in range with step': Schema.number().min(-1).max(10).step(0.5),
  'natural': Schema.natural(),
  'percent': Schema.percent(),
  'number with step from min': Schema.number().min(1).step(2),
  'boolean with false default': Schema.boolean().default(false),
  'const': Schema.const('staging'),
  'union of consts': Schema.union(['staging', 'prod', 3, true]),
  'required union of consts with default': Schema.union(['a', 'b']).default('b'),
  'union general': Schema.union([Schema.string(), Schema.number().max(5), Schema.object({ a: Schema.number() })]),
  'union of objects': Schema.union([
    Schema.object({ kind: Schema.const('a').required(), x: Schema.number().required() }),
    Schema.object({ kind: Schema.const('b').required(), y: Schema.string().default('y') }),
  ]),
  'array': Schema.array(Schema.number()).min(1).max(3),
  'array with defaulted inner': Schema.array(Schema.string().default('d')).min(2),
  'array of objects': Schema.array(Schema.object({ path: Schema.string().required(), mode: Schema.union(['r', 'w']).default('r') })),
  'tuple': Schema.tuple([Schema.string(), Schema.number().default(0), Schema.boolean().required()]),
  'dict': Schema.dict(Schema.number().default(1)),
  'dict with key pattern': Schema.dict(Schema.boolean(), Schema.string().pattern(/^[a-z]+$/)),
  'any': Schema.any(),
  'any with default': Schema.any().default({ nested: [1] }),
  'date': Schema.date(),
  'bitset': Schema.bitset({ read: 1, write: 2, exec: 4 }),
  'object with bitset': Schema.object({ perm: Schema.bitset({ read: 1, write: 2 }).default(1) }),
  'union over bitset objects': Schema.union([Schema.object({ p: Schema.bitset({ a: 1 }) }), Schema.object({ p: Schema.number() })]),
  'object with falsy defaults': Schema.object({
    zero: Schema.number().default(0),
    empty: Schema.string().default(''),
    no: Schema.boolean().default(false),
    list: Schema.array(Schema.number()),
    inner: Schema.object({ deep: Schema.string().default('d') }),
  }),
  'object with required and loose': Schema.object({
    name: Schema.string().required(),
    count: Schema.natural().max(10).default(3),
    mode: Schema.union(['fast', 'slow']).loose().default('fast'),
  }),
  'object with prototype names': Schema.object({ toString: Schema.string(), constructor: Schema.any(), value: Schema.number() }),
  'nested deploy': Schema.object({
    env: Schema.union(['staging', 'prod']).required(),
    replicas: Schema.natural().min(1).default(1),
    tags: Schema.dict(Schema.string()),
    steps: Schema.array(Schema.tuple([Schema.string().required(), Schema.number()])),
    when: Schema.date(),
  }),
  'intersect of objects': Schema.intersect([
    Schema.object({ a: Schema.number().default(1) }),
    Schema.object({ b: Schema.string().required() }),
  ]),
  'intersect of union and object': Schema.intersect([
    Schema.object({ kind: Schema.union(['x', 'y']).default('x') }),
    Schema.union([Schema.object({ kind: Schema.const('x'), n: Schema.number() }), Schema.object({ kind: Schema.const('y'), s: Schema.string() })]),
  ]),
  'transform': Schema.object({ n: Schema.transform(Schema.string(), (value) => value.length) }),
  'preserving transform': Schema.transform(Schema.number(), (value) => value * 2, true),
  'is': Schema.is(Date),
  'lazy recursion': (() => {
    const node: Schema = Schema.lazy(() => Schema.object({ name: Schema.string().required(), children: Schema.array(node) }))
    return node
  })(),
  'never in object': Schema.object({ gone: Schema.never(), here: Schema.number() }),
  'function': Schema.function(),
  'object constant': Schema.const({ a: 1 } as any),
  'regExp': Schema.regExp(),
}

describe('compileValidator parity with schemastery', () => {
  for (const [name, schema] of Object.entries(fixtures)) {
    it(name, () => {
      const validate = compileValidator(schema)
      const gen = generator(name.length * 7919 + 17)
      const mismatches: string[] = []
      let accepted = 0, rejected = 0
      for (let i = 0; i < 400; i++) {
        const input = gen(schema)
        let expected: { ok: boolean; value?: any }
        try {
          expected = { ok: true, value: schema(copy(input)) }
        } catch {
          expected = { ok: false }
        }
        const actual = validate(copy(input))
        const show = () => `${i}: ${JSON.stringify(input)} -> ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`
        if (actual.ok !== expected.ok) {
          mismatches.push(show())
        } else if (actual.ok) {
          accepted++
          if (!same(actual.value, expected.value)) mismatches.push(show())
        } else {
          rejected++
          if (!actual.issues.length) mismatches.push(show())
        }
      }
      expect(mismatches).toEqual([])
      // the generator must exercise both verdicts for every fixture that can reject
      expect(accepted).toBeGreaterThan(0)
      if (!['any', 'any with default'].includes(name)) expect(rejected).toBeGreaterThan(0)
    })
  }
})

describe('compileValidator issues', () => {
  const deploy = Schema.object({
    env: Schema.union(['staging', 'prod']).required(),
    count: Schema.natural().max(10),
    name: Schema.string().required(),
    files: Schema.array(Schema.object({ path: Schema.string().required() })),
  })

  it('reports every bad path in one pass', () => {
    const result = compileValidator(deploy)({ env: 'dev', count: '3', files: [{ path: 'a' }, { path: 1 }, {}] })
    expect(result).toEqual({
      ok: false,
      issues: [
        { path: '$.env', message: 'must be one of "staging", "prod" (got "dev")', kind: 'enum', params: { options: ['"staging"', '"prod"'], got: { type: 'string', text: '"dev"' } } },
        { path: '$.count', message: 'expected a number, got string "3"', kind: 'type', params: { expected: { type: 'number' }, got: { type: 'string', text: '"3"' } } },
        { path: '$.name', message: 'missing required property', kind: 'required', params: { property: true } },
        { path: '$.files[1].path', message: 'expected a string, got number 1', kind: 'type', params: { expected: { type: 'string' }, got: { type: 'number', text: '1' } } },
        { path: '$.files[2].path', message: 'missing required property', kind: 'required', params: { property: true } },
      ],
    })
  })

  it('formats issues as one message', () => {
    const result = compileValidator(deploy)({ env: 'dev', count: '3', name: 'x' })
    expect(result.ok).toBe(false)
    expect(formatIssues((result as any).issues)).toBe([
      'Invalid arguments:',
      '- $.env: must be one of "staging", "prod" (got "dev")',
      '- $.count: expected a number, got string "3"',
    ].join('\n'))
  })

  it('phrases number, string and array limits', () => {
    const validate = compileValidator(Schema.object({
      n: Schema.natural().max(5),
      p: Schema.percent(),
      s: Schema.string().pattern(/^\d+$/),
      t: Schema.string().max(3),
      a: Schema.array(Schema.any()).min(1),
      'odd key': Schema.boolean(),
    }))
    expect(messagesOf(validate({ n: 1.5, p: 1.2, s: 'abc', t: 'abcd', a: [], 'odd key': 'yes' }))).toEqual({
      ok: false,
      issues: [
        { path: '$.n', message: 'expected an integer, got 1.5' },
        { path: '$.p', message: 'expected a number <= 1, got 1.2' },
        { path: '$.s', message: 'must match the pattern /^\\d+$/ (got "abc")' },
        { path: '$.t', message: 'expected at most 3 characters, got 4' },
        { path: '$.a', message: 'expected at least 1 items, got 0' },
        { path: '$["odd key"]', message: 'expected a boolean, got string "yes"' },
      ],
    })
  })

  it('names the issues of the one union branch that fits the value kind', () => {
    const validate = compileValidator(Schema.union([Schema.string(), Schema.object({ n: Schema.number().required() })]))
    expect(messagesOf(validate({ n: 'x' }))).toEqual({ ok: false, issues: [{ path: '$.n', message: 'expected a number, got string "x"' }] })
    expect(messagesOf(validate(true))).toEqual({ ok: false, issues: [{ path: '$', message: 'expected string | { n: number }, got boolean true' }] })
  })

  it('turns a schemastery fallback error into one issue with its path', () => {
    const validate = compileValidator(Schema.object({ p: Schema.union([Schema.object({ q: Schema.bitset({ a: 1 }) })]) }))
    expect(messagesOf(validate({ p: { q: 'x' } }))).toEqual({ ok: false, issues: [{ path: '$.p', message: 'expected { q?: bitset } but got {"q":"x"}' }] })
    expect(messagesOf(compileValidator(Schema.date())('soon'))).toEqual({ ok: false, issues: [{ path: '$', message: 'expected a valid datetime, got string "soon"' }] })
  })
})

describe('compileValidator null and absence', () => {
  const schema = Schema.object({ a: Schema.string().default('x'), b: Schema.number(), c: Schema.string().required() })

  it('treats null as absent by default, as schemastery does', () => {
    expect(compileValidator(schema)({ a: null, b: null, c: 'c' })).toEqual({ ok: true, value: { a: 'x', b: null, c: 'c' } })
    expect(schema({ a: null, b: null, c: 'c' })).toEqual({ a: 'x', b: null, c: 'c' })
    expect(messagesOf(compileValidator(schema)({ c: null }))).toEqual({ ok: false, issues: [{ path: '$.c', message: 'missing required property' }] })
  })

  it('makes null a value with nullAsAbsent: false', () => {
    expect(messagesOf(compileValidator(schema, { nullAsAbsent: false })({ a: null, b: 1, c: null }))).toEqual({
      ok: false,
      issues: [
        { path: '$.a', message: 'expected a string, got null' },
        { path: '$.c', message: 'expected a string, got null' },
      ],
    })
    expect(compileValidator(schema, { nullAsAbsent: false })({ c: 'c' })).toEqual({ ok: true, value: { a: 'x', c: 'c' } })
  })

  it('applies a fresh copy of an object default every time', () => {
    const validate = compileValidator(Schema.object({ o: Schema.any().default({ list: [1] }) }))
    const first = validate({}) as any
    first.value.o.list.push(2)
    expect(validate({})).toEqual({ ok: true, value: { o: { list: [1] } } })
  })
})

describe('compileValidator input safety', () => {
  it('never pollutes a prototype through __proto__, constructor or prototype keys', () => {
    const validate = compileValidator(Schema.object({ a: Schema.number(), d: Schema.dict(Schema.any()) }))
    const input = JSON.parse('{"a": 1, "__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "prototype": 2, "d": {"__proto__": {"polluted": 1}, "k": 1}}')
    const result = validate(input) as any
    expect(result.ok).toBe(true)
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(result.value.d)).toBe(Object.prototype)
    // schemastery's merge skips names that are already reachable on the output, `__proto__` and `constructor` included
    expect(Object.keys(result.value)).toEqual(['a', 'd', 'prototype'])
    expect(Object.keys(result.value.d)).toEqual(['k'])
    expect(({} as any).polluted).toBe(undefined)
  })

  it('does not mutate its input when schemastery resolves a subtree (it writes adapted values back)', () => {
    const upper: Schema = Schema.transform(Schema.string(), (value: string) => value.toUpperCase())
    const node: Schema = Schema.union([Schema.object({ v: upper, next: Schema.lazy(() => node) }), Schema.string()])
    const cases: [string, Schema, unknown, unknown][] = [
      ['a dict with a renaming key schema', Schema.dict(Schema.string(), Schema.transform(Schema.string(), (key: string) => key.toLowerCase())), { A: 'x' }, { a: 'x' }],
      ['a union over a dict of transforms', Schema.union([Schema.object({ h: Schema.dict(upper) }), Schema.string()] as Schema[]), { h: { a: 'x' } }, { h: { a: 'X' } }],
      ['a recursive union with a transform', node, { v: 'a', next: { v: 'b' } }, { v: 'A', next: { v: 'B' } }],
    ]
    for (const [name, schema, input, output] of cases) {
      const before = structuredClone(input)
      // schemastery itself changes the object it is given
      const own = structuredClone(input)
      schema(own)
      expect([name, own]).not.toEqual([name, before])
      expect([name, compileValidator(schema)(input)]).toEqual([name, { ok: true, value: output }])
      expect([name, input]).toEqual([name, before])
    }
  })

  it('does not mutate its input', () => {
    const input = { perm: ['read'], items: [{ x: 1 }] }
    compileValidator(Schema.object({ perm: Schema.bitset({ read: 1 }), items: Schema.array(Schema.object({ x: Schema.number(), y: Schema.number().default(2) })) }))(input)
    expect(input).toEqual({ perm: ['read'], items: [{ x: 1 }] })
  })
})
