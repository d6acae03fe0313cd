import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, repairArguments, ToolRegistry, type ToolRegistryOptions, type ToolResult } from '../src'
import { findDuplicateKey } from '../src/duplicate-key'

// A key written twice is ambiguous: `JSON.parse` keeps the last value, and the model may have
// meant the first. Each test sends the text that would slip past one part of the check.

const session = { id: 's1', userId: 'u1' }

function setup(options: ToolRegistryOptions = {}) {
  const registry = new ToolRegistry(options)
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'weather',
    description: 'Weather for a city',
    args: Schema.object({ city: Schema.string().required(), when: Schema.string(), meta: Schema.dict(Schema.any()) }),
    traits: { effect: 'read' },
    run: (args) => {
      runs.push(args)
      return 'sunny'
    },
  }))
  registry.define(defineTool({
    name: 'tag',
    description: 'Tag things',
    args: Schema.object({ labels: Schema.dict(Schema.string()) }),
    traits: { effect: 'read' },
    run: (args) => {
      runs.push(args)
      return 'tagged'
    },
  }))
  const call = (args: string | Record<string, unknown>, name = 'weather', dialect?: 'gemini'): Promise<ToolResult> =>
    registry.toolset({ session, dialect }).execute([{ id: 'c1', name, arguments: args }]).then(([result]) => result)
  return { call, runs }
}

const refusal = (key: string, path: string) => `Arguments have a duplicate key ${key} at ${path}: which of its values was meant cannot be known. Send each key once.`

describe('a key written twice in valid JSON', () => {
  it('is refused before validation, naming the key and its path, with repair on or off; the tool does not run', async () => {
    for (const repair of [true, false]) {
      const { call, runs } = setup({ repair })
      const result = await call('{"city":"Paris","city":"London"}')
      expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments', content: refusal('"city"', '$.city') })
      expect(result.repaired).toBeUndefined()
      expect(runs).toEqual([])
    }
  })

  it('is found at any depth, inside arrays too, and its path says where', async () => {
    const { call, runs } = setup()
    expect((await call('{"city":"x","meta":{"a":{"b":{"c":1,"c":2}}}}')).content).toBe(refusal('"c"', '$.meta.a.b.c'))
    expect((await call('{"city":"x","meta":{"items":[{"id":"1"},{"id":"2","id":"3"}]}}')).content).toBe(refusal('"id"', '$.meta.items[1].id'))
    expect((await call('{"city":"x","meta":{"rows":[[1],[2,{"k":1,"k":2}]]}}')).content).toBe(refusal('"k"', '$.meta.rows[1][1].k'))
    expect((await call('{"city":"x","meta":{"a.b":1,"a.b":2}}')).content).toBe(refusal('"a.b"', '$.meta["a.b"]'))
    expect(runs).toEqual([])
  })

  it('treats a key spelled with escapes as the key it decodes to', async () => {
    const { call, runs } = setup()
    expect((await call('{"city":"Paris","\\u0063ity":"London"}')).content).toBe(refusal('"city"', '$.city'))
    expect((await call('{"\\u0063\\u0069\\u0074\\u0079":"Paris","city":"London"}')).content).toBe(refusal('"city"', '$.city'))
    expect((await call('{"city":"x","meta":{"a/b":1,"a\\/b":2}}')).content).toBe(refusal('"a/b"', '$.meta["a/b"]'))
    expect((await call('{"city":"x","meta":{"😀":1,"\\ud83d\\ude00":2}}')).content).toBe(refusal('"😀"', '$.meta["😀"]'))
    expect((await call('{"city":"x","meta":{"a\\"b":1,"a\\u0022b":2}}')).content).toBe(refusal('"a\\"b"', '$.meta["a\\"b"]'))
    expect(runs).toEqual([])
  })

  it('does not take keys that differ for JSON.parse as one: case, composed and decomposed letters, sibling objects', async () => {
    const { call, runs } = setup()
    for (const text of [
      '{"city":"x","meta":{"a":1,"A":2,"\\u0041a":3}}',
      '{"city":"x","meta":{"é":1,"e\\u0301":2}}',
      '{"city":"x","meta":{"a":{"id":1},"b":{"id":2},"c":[{"id":3},{"id":4}]}}',
      '{"city":"x","meta":{"city":"y"}}',
    ]) {
      const result = await call(text)
      expect(result.status, text).toBe('ok')
      expect(runs.pop()).toEqual(JSON.parse(text))
    }
  })

  it('is not fooled by strings: a key-like text inside a value, colons and escaped quotes or backslashes in values', async () => {
    const { call, runs } = setup()
    // A string that spells members is not members.
    for (const text of [
      '{"city":"{\\"city\\":1,\\"city\\":2}"}',
      '{"city":"07:30 at https://example.com:8080","when":"a:b:c"}',
      '{"city":"C:\\\\","when":"\\":\\""}',
      '{"city":"\\\\\\"","meta":{"k":"\\\\"}}',
    ]) {
      const result = await call(text)
      expect(result.status, text).toBe('ok')
      expect(runs.pop()).toMatchObject(JSON.parse(text))
    }
    // The same strings beside a real duplicate: an escaped quote or a backslash before a
    // closing quote must not make the scan lose track of where strings end.
    expect((await call('{"city":"C:\\\\","city":"D:\\\\"}')).content).toBe(refusal('"city"', '$.city'))
    expect((await call('{"city":"\\":\\"","when":"x","city":"y"}')).content).toBe(refusal('"city"', '$.city'))
    expect((await call('{"city":"a long value with an escaped quote \\" and a colon : past the first characters","city":"y"}')).content).toBe(refusal('"city"', '$.city'))
    // Past the first characters a string's end is found with indexOf: an even run of
    // backslashes before a quote ends it, an odd one does not.
    expect((await call('{"city":"a value longer than sixteen characters: C:\\\\","city":"y"}')).content).toBe(refusal('"city"', '$.city'))
    expect((await call('{"city":"a value longer than sixteen characters: \\\\\\"","when":"x","city":"y"}')).content).toBe(refusal('"city"', '$.city'))
    expect(await call('{"city":"a value longer than sixteen characters: C:\\\\","when":"07:30"}')).toMatchObject({ status: 'ok' })
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ city: 'a value longer than sixteen characters: C:\\', when: '07:30' })
  })

  it('compares the keys of a large object in a set: a repeat after the 30th key is found, 1,000 distinct keys pass', async () => {
    const { call, runs } = setup()
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`)
    expect((await call(`{"city":"x","meta":{${keys.join(',')},"k3":"again"}}`)).content).toBe(refusal('"k3"', '$.meta.k3'))
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`key:${i}`, `value:${i}`]))
    expect(await call(JSON.stringify({ city: 'x', meta: many }))).toMatchObject({ status: 'ok' })
    expect(runs).toEqual([{ city: 'x', meta: many }])
  })

  it('finds a duplicate nested deeper than the key count walks', async () => {
    const { call } = setup()
    const deep = `${'{"a":'.repeat(80)}{"k":1,"k":2}${'}'.repeat(80)}`
    const result = await call(`{"city":"x","meta":${deep}}`)
    expect(result.content).toBe(refusal('"k"', `$.meta${'.a'.repeat(80)}.k`))
  })

  it('is found even when Object.prototype has gained an enumerable key (which would pad a key count)', () => {
    const proto = Object.prototype as Record<string, unknown>
    proto.polluted = 1
    try {
      expect(findDuplicateKey('{"a":1,"a":2}', JSON.parse('{"a":1,"a":2}'))).toEqual({ key: 'a', path: '$.a' })
      expect(findDuplicateKey('{"a":1,"b":2}', JSON.parse('{"a":1,"b":2}'))).toBeUndefined()
    } finally {
      delete proto.polluted
    }
  })

  it('shows a long key cut, in the message and the path', async () => {
    const { call } = setup()
    const key = 'k'.repeat(300)
    const shown = `"${'k'.repeat(40)}…"`
    expect((await call(`{"city":"x","meta":{"${key}":1,"${key}":2}}`)).content).toBe(refusal(shown, `$.meta[${shown}]`))
  })

  it('is found inside a field a dialect sends JSON-encoded, its path under the field', async () => {
    const { call, runs } = setup()
    const result = await call({ labels: '{"env":"prod","env":"dev"}' }, 'tag', 'gemini')
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments', content: refusal('"env"', '$.labels.env') })
    expect(await call({ labels: '{"env":"prod","zone":"a:b"}' }, 'tag', 'gemini')).toMatchObject({ status: 'ok' })
    expect(runs).toEqual([{ labels: { env: 'prod', zone: 'a:b' } }])
  })
})

describe('a key written twice in text that needs a repair', () => {
  it('is refused by the repair, with the key and its path, whatever the repair had to change', async () => {
    const { call, runs } = setup()
    for (const [text, path] of [
      [`{'city': 'Paris', 'city': 'London'}`, '$.city'],
      ['{city: "Paris", "city": "London"}', '$.city'],
      ['{"city":"Paris","city":"London",}', '$.city'],
      ['```json\n{"city":"Paris","city":"London"}\n```', '$.city'],
      [JSON.stringify('{"city":"Paris","city":"London"}'), '$.city'],
      ['{"city"："Paris"，"city"："London"}', '$.city'],
      ['{"city":"Paris","city":"London"', '$.city'],
      [`{'city': 'x', 'meta': {'ok': True, 'ok': False}}`, '$.meta.ok'],
      [`{'city': 'a', '\\u0063ity': 'b'}`, '$.city'],
    ]) {
      const result = await call(text)
      expect(result, text).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      const key = path.split('.').pop()
      expect(result.content, text).toContain(`They cannot be repaired without guessing: the key "${key}" is written twice at ${path}, so which of its values was meant cannot be known.`)
    }
    expect(runs).toEqual([])
  })

  it('is refused by repairArguments itself', () => {
    expect(repairArguments(`{'a': 1, 'b': {'c': 1, 'c': 2}}`)).toEqual({ error: 'the key "c" is written twice at $.b.c, so which of its values was meant cannot be known' })
    expect(repairArguments(`{'a': 1, 'b': {'c': 1, 'd': 2}}`)).toMatchObject({ value: { a: 1, b: { c: 1, d: 2 } } })
  })
})
