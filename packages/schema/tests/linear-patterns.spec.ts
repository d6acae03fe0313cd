import { describe, expect, it } from 'vitest'
import { compileLinearPattern, compileValidator, fromJsonSchema, type JsonSchema, linearPatternRefusal, type Loosening } from '../src'

// A backtracking engine needs about 2^n steps to refuse n `a`s and a `!` under `^(a+)+$`:
// 30 characters take seconds, 10 000 would never finish. The linear engine takes moments,
// so each test finishing at all (within the generous timeout) is the evidence.
const EVIL = '^(a+)+$'
const LONG = 'a'.repeat(10_000)
const TIMEOUT = 60_000

function importTool(json: JsonSchema) {
  const loosened: Loosening[] = []
  const schema = fromJsonSchema(json, { onLoosen: (loosening) => loosened.push(loosening) })
  return { validate: compileValidator(schema), loosened }
}

describe('imported patterns run on a linear-time engine', () => {
  it('refuses and accepts long arguments under a catastrophic pattern', () => {
    const { validate, loosened } = importTool({ type: 'object', properties: { name: { type: 'string', pattern: EVIL } }, required: ['name'] })
    expect(validate({ name: `${LONG}!` })).toMatchObject({ ok: false, issues: [{ path: '$.name', message: expect.stringContaining('must match the pattern /^(a+)+$/u') }] })
    expect(validate({ name: LONG })).toEqual({ ok: true, value: { name: LONG } })
    expect(validate({ name: 'a'.repeat(30) + '!' })).toMatchObject({ ok: false })
    expect(loosened).toEqual([])
  }, TIMEOUT)

  it('checks lengths (in code points) and the pattern together', () => {
    const { validate } = importTool({ type: 'string', minLength: 2, maxLength: 20_000, pattern: EVIL })
    expect(validate(`${LONG}!`).ok).toBe(false)
    expect(validate(LONG).ok).toBe(true)
    expect(validate('a').ok).toBe(false)
    expect(validate('a'.repeat(20_001)).ok).toBe(false)
    const emoji = importTool({ type: 'string', maxLength: 2, pattern: '^.+$' }).validate
    expect(emoji('😀😀').ok).toBe(true)
    expect(emoji('😀😀😀').ok).toBe(false)
  }, TIMEOUT)

  it('guards every place a pattern sits: items, anyOf branches, nested objects', () => {
    const { validate } = importTool({
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'string', pattern: EVIL } },
        either: { anyOf: [{ type: 'string', pattern: '(x+x+)+y' }, { type: 'number' }] },
        deep: { type: 'object', properties: { inner: { type: ['string', 'null'], pattern: '^(\\w+\\s?)*$' } } },
      },
    })
    expect(validate({ list: ['aaa', `${LONG}!`] }).ok).toBe(false)
    expect(validate({ list: [LONG] }).ok).toBe(true)
    expect(validate({ either: 'x'.repeat(10_000) }).ok).toBe(false)
    expect(validate({ either: `${'x'.repeat(10_000)}y` }).ok).toBe(true)
    expect(validate({ deep: { inner: `${'word '.repeat(3_000)}!` } }).ok).toBe(false)
    expect(validate({ deep: { inner: 'two words' } }).ok).toBe(true)
  }, TIMEOUT)

  it('guards key patterns: patternProperties, additionalProperties and propertyNames', () => {
    const keyed = importTool({ type: 'object', patternProperties: { [EVIL]: { type: 'number' } }, additionalProperties: false }).validate
    expect(keyed({ [LONG]: 1 }).ok).toBe(true)
    expect(keyed({ [LONG]: 'not a number' }).ok).toBe(false)
    // The long key matches no pattern, so additionalProperties: false refuses it.
    expect(keyed({ [`${LONG}!`]: 1 }).ok).toBe(false)
    const named = importTool({ type: 'object', propertyNames: { pattern: EVIL } }).validate
    expect(named({ [LONG]: 1 }).ok).toBe(true)
    expect(named({ [`${LONG}!`]: 1 }).ok).toBe(false)
    const listed = importTool({ type: 'object', propertyNames: { enum: ['a', 'b'] } }).validate
    expect(listed({ a: 1, b: 2 }).ok).toBe(true)
    expect(listed({ c: 1 }).ok).toBe(false)
  }, TIMEOUT)

  it('imports a schema whose enum or default meets a catastrophic pattern', () => {
    const { validate } = importTool({
      type: 'object',
      properties: {
        mode: { type: 'string', pattern: EVIL, enum: [`${LONG}!`, LONG] },
        name: { type: 'string', pattern: EVIL, default: `${LONG}!` },
      },
    })
    expect(validate({ mode: LONG }).ok).toBe(true)
    expect(validate({ mode: `${LONG}!` }).ok).toBe(false)
    // The default breaks the pattern, so it is not filled in.
    expect(validate({})).toEqual({ ok: true, value: {} })
  }, TIMEOUT)
})

describe('patterns the linear engine cannot run', () => {
  it.each([
    ['a backreference', '^(a+)\\1$'],
    ['a named backreference', '^(?<x>a)\\k<x>$'],
    ['a lookahead', '^(?=.*\\d).+$'],
    ['a negative lookahead', '^(?!admin).*$'],
    ['a lookbehind', '(?<=a)b'],
    ['a count over 1000', '^a{1,5000}$'],
  ])('leaves %s unenforced and reports it as loosened', (_, pattern) => {
    const { validate, loosened } = importTool({ type: 'object', properties: { x: { type: 'string', pattern, maxLength: 10 } } })
    expect(loosened).toEqual([{ path: '$.properties.x.pattern', rule: expect.stringContaining(`matches /${pattern}/ (not enforced`) }])
    // Not enforced: a value the pattern refuses passes, and nothing runs it on the backtracking engine.
    expect(validate({ x: '!' }).ok).toBe(true)
    // The rest of the schema still holds.
    expect(validate({ x: 'x'.repeat(11) }).ok).toBe(false)
    expect(validate({ x: 3 }).ok).toBe(false)
  })

  it('drops a key pattern it cannot run, and the additionalProperties that depends on it', () => {
    const { validate, loosened } = importTool({
      type: 'object',
      properties: { id: { type: 'number' } },
      patternProperties: { '^(?!x)': { type: 'number' }, '^n_': { type: 'number' } },
      additionalProperties: false,
    })
    expect(loosened).toEqual([
      { path: '$.patternProperties["^(?!x)"]', rule: expect.stringContaining('not enforced') },
      { path: '$.additionalProperties', rule: expect.stringContaining('not enforced') },
    ])
    expect(validate({ id: 1, n_a: 2, other: 'anything' }).ok).toBe(true)
    expect(validate({ n_a: 'not a number' }).ok).toBe(false)
    expect(validate({ id: 'not a number' }).ok).toBe(false)
  })

  it('still refuses a pattern that is not a valid regexp at all', () => {
    expect(() => fromJsonSchema({ type: 'string', pattern: '(' })).toThrow(/not a valid unicode regexp/)
  })
})

describe('compileLinearPattern', () => {
  it('reads ECMAScript syntax', () => {
    const cases: [string, string, boolean][] = [
      ['^\\p{Letter}+$', 'héllo', true],
      ['^\\p{Letter}+$', '123', false],
      ['^\\p{Lu}\\p{Ll}+$', 'Ab', true],
      ['^\\p{Script=Greek}+$', 'πα', true],
      ['^\\u{1F600}$', '😀', true],
      ['^\\u00e9$', 'é', true],
      ['^a\\/b$', 'a/b', true],
      ['^(?<year>\\d{4})-\\d{2}$', '2024-05', true],
      ['^[^a]$', '😀', true],
      ['\\\\p{L}', '\\p{L}', true],
      ['^\\d+$', '12a', false],
    ]
    for (const [source, text, expected] of cases) {
      expect({ source, text, result: compileLinearPattern(source)?.test(text) }).toEqual({ source, text, result: expected })
    }
  })

  it('finishes on catastrophic patterns', () => {
    for (const source of [EVIL, '^(a|a)*$', '^(a|aa)+$', '^(.*a){12}$', '^(\\w+\\s?)*$']) {
      expect({ source, result: compileLinearPattern(source)!.test(`${LONG}!`) }).toEqual({ source, result: false })
    }
  }, TIMEOUT)

  it('gives undefined for what it cannot run', () => {
    expect(compileLinearPattern('(a)\\1')).toBeUndefined()
    expect(compileLinearPattern('(?=a)')).toBeUndefined()
  })

  it('finds every match as UTF-16 ranges, as matchAll does', () => {
    const text = '😀 sk-abc, sk-d 😀sk-'
    for (const source of ['sk-\\w+', '\\b', 'x*', '😀']) {
      const expected = [...text.matchAll(new RegExp(source, 'gu'))].map((match) => [match.index, match.index + match[0].length])
      expect({ source, ranges: compileLinearPattern(source)!.ranges(text) }).toEqual({ source, ranges: expected })
    }
    expect(compileLinearPattern('sk-\\w+')!.ranges('none here')).toEqual([])
    expect(compileLinearPattern(EVIL)!.ranges(`${LONG}!`)).toEqual([])
  }, TIMEOUT)
})

describe('linearPatternRefusal', () => {
  it('says why a pattern is refused, and nothing for one that compiles', () => {
    expect(linearPatternRefusal('sk-\\w+')).toBeUndefined()
    const unsupported = 'which the linear-time engine (RE2) cannot run: it has no backreferences, no lookaround and no repetition counts over 1000'
    expect(linearPatternRefusal('(?=a)b')).toBe(`uses lookaround ((?=), ${unsupported}`)
    expect(linearPatternRefusal('(?<!x)y')).toBe(`uses lookaround ((?<!), ${unsupported}`)
    expect(linearPatternRefusal('(?<=Bearer )\\w+')).toBe(`uses lookaround ((?<=), ${unsupported}`)
    expect(linearPatternRefusal('[(?=](a)\\1')).toBe(`uses a backreference (\\1), ${unsupported}`)
    expect(linearPatternRefusal('(?<n>a)\\k<n>')).toBe(`uses a backreference (\\k<…>), ${unsupported}`)
    expect(linearPatternRefusal('a{1,5000}')).toMatch(/^is not supported \(invalid repeat count: `\{1,5000\}`\)/)
    expect(linearPatternRefusal('(a')).toBe('is not a valid regular expression: Invalid regular expression: /(a/u: Unterminated group')
  })
})
