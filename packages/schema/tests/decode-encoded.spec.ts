import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { compileValidator, convertToDialect, decodeEncoded, SchemaError, toJsonSchema } from '../src'
import { messagesOf } from './helpers/issue-messages'
import { schemaErrorOf } from './helpers/catch-error'

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

describe('decodeEncoded', () => {
  it('parses the JSON text at each path, leaving the input untouched and sharing what it does not reach', () => {
    const input = deepFreeze({ headers: '{"x-a":"1"}', keep: { deep: [1] }, list: ['[1,2]', '"x"'] })
    const output = decodeEncoded(input, ['$.headers', '$.list[*]']) as any
    expect(output).toEqual({ headers: { 'x-a': '1' }, keep: { deep: [1] }, list: [[1, 2], 'x'] })
    expect(output.keep).toBe(input.keep)
    expect(decodeEncoded(input, [])).toBe(input)
  })

  it('walks quoted keys, dict values and tuple positions', () => {
    const input = { 'odd key': { a: '1', b: '{"c":true}' }, pair: ['"s"', '2'], x: { '*': '3' } }
    expect(decodeEncoded(input, ['$["odd key"].*', '$.pair[1]', '$.x["*"]'])).toEqual({
      'odd key': { a: 1, b: { c: true } },
      pair: ['"s"', 2],
      x: { '*': 3 },
    })
  })

  it('skips what is absent or null, and leaves a value that is not a string as it is', () => {
    expect(decodeEncoded({}, ['$.a', '$.b[*]', '$.c.*'])).toEqual({})
    expect(decodeEncoded({ a: null, b: [null, '1'] }, ['$.a', '$.b[*]'])).toEqual({ a: null, b: [null, 1] })
    // the model sent the value itself; the exact validator judges it
    expect(decodeEncoded({ a: { k: 1 }, b: 3 }, ['$.a', '$.b'])).toEqual({ a: { k: 1 }, b: 3 })
    expect(decodeEncoded({ list: 'not an array' }, ['$.list[*]'])).toEqual({ list: 'not an array' })
  })

  it('refuses text that is not JSON, naming the concrete path', () => {
    const error = (() => {
      try {
        decodeEncoded({ rows: ['1', 'hello'] }, ['$.rows[*]'])
      } catch (e) {
        return e
      }
    })()
    expect(SchemaError.is(error, 'INVALID_ENCODING')).toBe(true)
    expect((error as SchemaError).path).toBe('$.rows[1]')
    expect((error as SchemaError).message).toMatch(/^must be a JSON-encoded string \(JSON text, as its description says\), got "hello": .* \(at \$\.rows\[1\]\)$/)
  })

  it('keeps a __proto__ key a key, and pollutes nothing', () => {
    const input = JSON.parse('{"__proto__": "{\\"polluted\\": 1}", "d": {"__proto__": "2"}}')
    const output = decodeEncoded(input, ['$.__proto__', '$.d.*']) as any
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype)
    expect(Object.hasOwn(output, '__proto__')).toBe(true)
    expect(Object.getOwnPropertyDescriptor(output, '__proto__')!.value).toEqual({ polluted: 1 })
    expect(Object.getOwnPropertyDescriptor(output.d, '__proto__')!.value).toBe(2)
    expect(({} as any).polluted).toBe(undefined)
  })

  it('refuses a path it cannot read (a developer error)', () => {
    expect(schemaErrorOf(() => decodeEncoded({}, ['a.b']))).toEqual({ code: 'INVALID_SCHEMA', path: 'a.b' })
    expect(schemaErrorOf(() => decodeEncoded({}, ['$["open']))).toEqual({ code: 'INVALID_SCHEMA', path: '$["open' })
  })

  it('round trip: a Gemini call with encoded fields validates against the exact schema, whose errors name the real rule', () => {
    const schema = Schema.object({
      headers: Schema.dict(Schema.string()),
      limit: Schema.union([Schema.const('auto'), Schema.natural()]).default('auto'),
    })
    const { encoded } = convertToDialect(toJsonSchema(schema), 'gemini')
    expect(encoded).toEqual(['$.headers', '$.limit'])
    const validate = compileValidator(schema)
    expect(validate(decodeEncoded({ headers: '{"a":"b"}', limit: '5' }, encoded))).toEqual({ ok: true, value: { headers: { a: 'b' }, limit: 5 } })
    expect(messagesOf(validate(decodeEncoded({ headers: '{"a":1}' }, encoded)))).toEqual({
      ok: false, issues: [{ path: '$.headers.a', message: 'expected a string, got number 1' }],
    })
  })
})
