import Schema from 'schemastery'
import { closed, definition } from '../../src'

/** A schema every proof runs on, with hand-picked values and where each dialect must loosen it. */
export interface Fixture {
  name: string
  schema: Schema
  /** Edge values checked beside the random ones. */
  samples: unknown[]
  /** Dialects expected to refuse it, with the path they name. */
  /** Where a dialect states less than the exact schema: some loosening sits at or under this path. */
  loosens?: Partial<Record<'openai' | 'gemini' | 'anthropic', string>>
}

// a named definition used twice (one copy with its own description) inside a closed object
const address = definition('address', Schema.object({ street: Schema.string().required(), city: Schema.string() }))

// a recursive definition whose objects are closed
const category: Schema = definition('category', Schema.lazy(() => closed(Schema.object({
  title: Schema.string().required(),
  sub: Schema.array(category),
}))))

const tree: Schema = Schema.lazy(() => Schema.object({
  name: Schema.string().required(),
  children: Schema.array(tree),
}))

export const fixtures: Fixture[] = [
  {
    name: 'tool arguments',
    schema: Schema.object({
      env: Schema.union(['staging', 'prod']).required().description('target'),
      retries: Schema.natural().max(5).default(3),
      tags: Schema.array(String),
      dryRun: Schema.boolean().default(false),
    }),
    samples: [{ env: 'prod' }, { env: 'dev' }, {}, { env: 'prod', retries: 6 }, { env: 'prod', retries: 2.5 }, { env: 'prod', tags: [null] }, { env: 'prod', dryRun: null }],
  },
  {
    name: 'strings',
    schema: Schema.object({
      plain: Schema.string(),
      needed: Schema.string().required(),
      word: Schema.string().pattern(/^[a-z]+\d*$/),
      short: Schema.string().min(2).max(5),
      when: Schema.date(),
      empty: Schema.string().default(''),
    }),
    samples: [{ needed: '' }, { needed: 'x', word: 'abc1' }, { needed: 'x', word: 'ABC' }, { needed: 'x', short: 'a' }, { needed: 'x', short: 'abcdef' }, { needed: 'x', when: '2024-01-02T03:04:05Z' }, { needed: 'x', when: 5 }],
  },
  {
    name: 'numbers',
    schema: Schema.object({
      n: Schema.number(),
      ranged: Schema.number().min(-1).max(1),
      half: Schema.number().step(0.5),
      fives: Schema.number().min(10).step(5),
      count: Schema.natural(),
      ratio: Schema.percent(),
      whole: Schema.number().step(1).required(),
      zero: Schema.number().default(0),
    }),
    samples: [{ whole: 1 }, { whole: 1.5 }, { whole: 1, ratio: 0.07 }, { whole: 1, ratio: 0.005 }, { whole: 1, fives: 5 }, { whole: 1, fives: 15 }, { whole: 1, count: -1 }, { whole: 1, half: 1.5 }, { whole: 1, half: 1.25 }],
  },
  {
    name: 'constants',
    schema: Schema.object({
      version: Schema.const('1.0').required(),
      answer: Schema.const(42),
      flag: Schema.const(true),
      shape: Schema.const({ a: 1 }),
    }),
    samples: [{ version: '1.0' }, { version: '1.1' }, { version: '1.0', answer: 41 }, { version: '1.0', shape: { a: 1 } }, { version: '1.0', shape: { a: 2 } }],
    loosens: { openai: '$.shape', gemini: '$.shape' },
  },
  {
    name: 'unions',
    schema: Schema.object({
      mode: Schema.union(['fast', 'slow']).default('fast'),
      level: Schema.union([1, 2, 3]),
      limit: Schema.union([Schema.const('auto'), Schema.number().min(0)]),
      either: Schema.union([Schema.string(), Schema.array(String)]),
      shape: Schema.union([
        Schema.object({ kind: Schema.const('a').required(), a: Schema.string() }),
        Schema.object({ kind: Schema.const('b').required(), b: Schema.number() }),
      ]),
    }),
    samples: [{ mode: 'slow' }, { mode: 'medium' }, { level: 4 }, { limit: 'auto' }, { limit: -1 }, { either: ['a'] }, { shape: { kind: 'a', b: 'x' } }, { shape: { kind: 'c' } }],
    loosens: { gemini: '$.limit' },
  },
  {
    name: 'arrays',
    schema: Schema.object({
      ids: Schema.array(Schema.natural()).min(1).max(3),
      objects: Schema.array(Schema.object({ x: Schema.number().required() })).min(1),
      matrix: Schema.array(Schema.array(Number)),
    }),
    samples: [{ ids: [] }, { ids: [1, 2, 3, 4] }, { ids: [null] }, { objects: [] }, { objects: [{}] }, { matrix: [[1], [null]] }],
  },
  {
    name: 'tuples',
    schema: Schema.object({
      pair: Schema.tuple([String, Number]),
      loose: Schema.tuple([Schema.string(), Schema.number().required(), Schema.string()]),
    }),
    samples: [{ pair: ['a', 1] }, { pair: ['a'] }, { pair: ['a', 1, true] }, { loose: [] }, { loose: [null, 1] }, { loose: ['a'] }],
    loosens: { openai: '$.pair', gemini: '$.pair' },
  },
  {
    name: 'dicts',
    schema: Schema.object({
      env: Schema.dict(String),
      picked: Schema.dict(Schema.number(), Schema.union(['a', 'b'])),
      headers: Schema.dict(Boolean, Schema.string().pattern(/^x-/)),
    }),
    samples: [{ env: { a: 'b' } }, { env: { a: 1 } }, { picked: { a: 1, c: 2 } }, { headers: { 'x-a': true } }, { headers: { a: true } }, { headers: { 'x-a': null } }],
    loosens: { openai: '$.env', gemini: '$.env' },
  },
  {
    name: 'nested objects',
    schema: Schema.object({
      server: Schema.object({ host: Schema.string().required(), port: Schema.natural().default(80) }),
      options: Schema.object({ mode: Schema.union(['a', 'b']).required() }).default({ mode: 'a' }),
      extra: Schema.object({ note: Schema.string() }),
    }),
    samples: [{}, { server: { host: 'h' } }, { server: { host: 'h' }, options: {} }, { server: { host: 'h' }, options: null }, { server: { host: 'h' }, extra: null }, { server: null }],
  },
  {
    name: 'intersection',
    schema: Schema.intersect([
      Schema.object({ a: Schema.string().required() }),
      Schema.object({ b: Schema.number() }),
    ]),
    samples: [{ a: 'x' }, { b: 1 }, { a: 'x', b: 'y' }, { a: 'x', c: 1 }],
  },
  {
    name: 'tagged intersection',
    schema: Schema.intersect([
      Schema.object({ type: Schema.union(['x', 'y']).required() }),
      Schema.union([
        Schema.object({ type: Schema.const('x'), x: Schema.number().required() }),
        Schema.object({ type: Schema.const('y'), y: Schema.string().required() }),
      ]),
    ]),
    samples: [{ type: 'x', x: 1 }, { type: 'x', y: 'a' }, { type: 'y', y: 'a' }, { type: 'z' }],
    loosens: { openai: '$', gemini: '$', anthropic: '$' },
  },
  {
    name: 'transforms',
    schema: Schema.object({
      lower: Schema.transform(Schema.string(), value => value.toLowerCase()),
      doubled: Schema.transform(Schema.number().min(0).required(), value => value * 2),
    }),
    samples: [{ doubled: 1 }, { doubled: -1 }, { doubled: 1, lower: 'ABC' }, { doubled: 1, lower: 1 }],
  },
  {
    name: 'bitset',
    schema: Schema.object({ perms: Schema.bitset({ read: 1, write: 2, exec: 4 }) }),
    samples: [{ perms: 3 }, { perms: ['read', 'other'] }, { perms: [1] }, { perms: 'read' }],
    loosens: { gemini: '$.perms' },
  },
  {
    name: 'recursive tree',
    schema: Schema.object({ tree }),
    samples: [{}, { tree: { name: 'a' } }, { tree: { name: 'a', children: [{ name: 'b', children: [] }] } }, { tree: { name: 'a', children: [{}] } }],
    loosens: { gemini: '$.tree.children[*]' },
  },
  {
    name: 'root recursion',
    schema: tree,
    samples: [{ name: 'a' }, { name: 'a', children: [{ name: 'b' }] }, { name: 'a', children: [{ name: 1 }] }, {}],
    loosens: { gemini: '$.children[*]' },
  },
  {
    name: 'any and loose',
    schema: Schema.object({
      anything: Schema.any(),
      something: Schema.any().required(),
      lenient: Schema.number().loose().default(1),
      nothing: Schema.never(),
    }),
    samples: [{ something: 1 }, {}, { something: null }, { something: 'x', lenient: 'x' }, { something: 0, nothing: 1 }],
    loosens: { openai: '$.anything', gemini: '$.anything' },
  },
  {
    name: 'closed object with a shared definition',
    schema: closed(Schema.object({ name: Schema.string(), home: address, work: address.description('Work address') })),
    samples: [{}, { name: 'a', home: { street: 's' } }, { name: 'a', extra: 1 }, { home: { street: 's', more: 1 } }, { work: { city: 'c' } }, { extra: null }],
  },
  {
    name: 'recursive closed definition',
    schema: Schema.object({ root: category, label: Schema.string() }),
    samples: [{ root: { title: 'a' } }, { root: { title: 'a', sub: [{ title: 'b', sub: [] }] } }, { root: { title: 'a', sub: [{ title: 'b', x: 1 }] } }, {}],
    loosens: { gemini: '$.root.sub[*]' },
  },
]
