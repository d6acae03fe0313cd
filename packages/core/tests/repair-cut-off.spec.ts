import { jsonrepair } from 'jsonrepair'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, repairArguments, ToolRegistry } from '../src'

// The cut-off rule: a text cut off after a complete value may get the outermost object's `}`,
// and nothing else. A cut inside an array or a nested object may have lost more elements or
// members, so it is refused with the position of what was left open.

const cutInside = (what: 'array' | 'object', at: number) =>
  `the ${what} at position ${at} is cut off: the text ends inside it, so more ${what === 'array' ? 'elements' : 'members'} may have followed`

describe('closing a cut-off text', () => {
  it('adds the outermost `}` after a complete value, also after inner arrays and objects that were closed', () => {
    for (const [text, value] of [
      ['{"path": "a.py"', { path: 'a.py' }],
      ['{"paths": ["a.py", "b.py"]', { paths: ['a.py', 'b.py'] }],
      ['{"paths": []', { paths: [] }],
      ['{"meta": {"tags": ["a"], "x": {"y": null}}', { meta: { tags: ['a'], x: { y: null } } }],
      ['{"meta": {}', { meta: {} }],
      ['{"on": true, "limit": 5 ', { on: true, limit: 5 }],
    ] as const) {
      const repaired = repairArguments(text)
      expect(repaired, text).toMatchObject({ value, repaired: { steps: ['closing-brackets'] } })
      // One `}` and nothing else was added.
      expect('json' in repaired && repaired.json.replace(/\s/g, ''), text).toBe(`${text.replace(/\s/g, '')}}`)
    }
  })

  it('refuses a cut inside an array, where jsonrepair would close it and run on the elements it saw', () => {
    const text = '{"paths": ["a.py", "b.py"'
    // The attack: the library closes the array and the object, as if the list were whole.
    expect(JSON.parse(jsonrepair(text))).toEqual({ paths: ['a.py', 'b.py'] })
    expect(repairArguments(text)).toEqual({ error: cutInside('array', 10), position: 10 })
  })

  it('refuses a cut inside a nested object, or an array in one, naming the innermost left open', () => {
    for (const [text, error] of [
      ['{"to": "bob", "meta": {"priority": "high"', cutInside('object', 22)],
      ['{"to": "bob", "meta": {"tags": ["a", "b"]', cutInside('object', 22)],
      ['{"meta": {"a": {"b": true}', cutInside('object', 9)],
      ['{"meta": {"items": [{"id": "1"}, {"id": "2"}', cutInside('array', 19)],
      ['{"meta": {"items": [{"id": "1"}', cutInside('array', 19)],
      ['{"days": ["mon"], "label": ["a"', cutInside('array', 27)],
      ['[{"query": "x"}', cutInside('array', 0)],
    ] as const) {
      expect(repairArguments(text), text).toEqual({ error, position: Number(/position (\d+)/.exec(error)![1]) })
    }
  })

  it('refuses it whatever else the text needed: quotes, full-width brackets, Python literals, a comment after the element', () => {
    for (const [text, error] of [
      [`{'days': ['mon'`, cutInside('array', 9)],
      ['{"days"：［"mon"', cutInside('array', 8)],
      [`{'meta': {'urgent': True`, cutInside('object', 9)],
      ['{"days": ["mon" // more to come', cutInside('array', 9)],
    ] as const) {
      expect(repairArguments(text), text).toMatchObject({ error })
    }
  })

  it('gives positions in the text as sent: past a fence, and at the string for a double-encoded object', () => {
    expect(repairArguments('```json\n{"days": ["mon"\n```')).toEqual({ error: cutInside('array', 17), position: 17 })
    expect(repairArguments(JSON.stringify('{"days": ["mon"'))).toEqual({ error: `inside the JSON string at position 0: ${cutInside('array', 9)}`, position: 0 })
  })

  it('keeps the earlier refusals where they apply first: a number, a comma, an opening bracket or a key at the end', () => {
    expect(repairArguments('{"ids": [1, 2')).toMatchObject({ error: 'the number at position 12 ends the text, so it may be cut off' })
    expect(repairArguments('{"ids": ["a",')).toMatchObject({ error: 'the text ends at position 12 after ",", so what followed is missing' })
    expect(repairArguments('{"ids": [')).toMatchObject({ error: 'the text ends at position 8 after "[", so what followed is missing' })
    expect(repairArguments('{"meta": {"a": 1, "b"')).toMatchObject({ error: 'the key at position 18 ends the text without its value' })
  })

  it('never runs the tool on a text cut inside an array; the model reads where', async () => {
    const registry = new ToolRegistry()
    const runs: unknown[] = []
    registry.define(defineTool({
      name: 'remove',
      description: 'Remove files',
      args: Schema.object({ paths: Schema.array(Schema.string()).required() }),
      traits: { effect: 'read' },
      run: (args) => {
        runs.push(args)
        return 'removed'
      },
    }))
    const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'c1', name: 'remove', arguments: '{"paths":["a.py","b.py"' }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain(`They cannot be repaired without guessing: ${cutInside('array', 9)}.`)
    expect(runs).toEqual([])
  })
})
