import { describe, expect, it } from 'vitest'
import { jsonChanges } from '../src/json-changes'

describe('jsonChanges: how a person edited a call, by path', () => {
  it('lists changed, added and removed fields, nested and in arrays', () => {
    expect(jsonChanges(
      { path: 'src/a.ts', limit: 5, force: true, opts: { depth: 1, tags: ['a', 'b'] } },
      { path: 'src/b.ts', limit: 5, opts: { depth: 2, tags: ['a', 'c', 'd'] }, dryRun: true },
    )).toEqual([
      '$.path: "src/a.ts" → "src/b.ts"',
      '- $.force',
      '$.opts.depth: 1 → 2',
      '$.opts.tags[1]: "b" → "c"',
      '+ $.opts.tags[2]: "d"',
      '+ $.dryRun: true',
    ])
  })

  it('says nothing for equal values, and one change where the type changes', () => {
    expect(jsonChanges({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual([])
    expect(jsonChanges({ a: [1] }, { a: { 0: 1 } })).toEqual(['$.a: [1] → {"0":1}'])
    expect(jsonChanges(1, '1')).toEqual(['$: 1 → "1"'])
  })

  it('quotes keys that are not identifiers, and cuts long values', () => {
    expect(jsonChanges({ 'a b': 1 }, { 'a b': 2 })).toEqual(['$["a b"]: 1 → 2'])
    const [line] = jsonChanges({ text: 'x' }, { text: 'y'.repeat(500) })
    expect(line.length).toBeLessThan(150)
    expect(line).toMatch(/^\$\.text: "x" → "y+…$/)
  })
})
