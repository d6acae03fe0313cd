import type { Dialect } from '@dogu/schema'
import { describe, expect, it } from 'vitest'
import { defineTool, ToolRegistry } from '../src'
import { dialectOf } from '../src/tool-json-schema'
// The schema package's corpus of real-world shapes and its value shaper: the same proof, run
// here through what users call (definitions, then execute), not through the schema functions.
import { dialectShape } from '../../schema/tests/dialect-shape'
import { shapes } from '../../schema/tests/fixtures/real-world-shapes'

const dialects: Dialect[] = ['json', 'openai', 'anthropic', 'gemini']

// A root that is not an object (a lazy recursive root) is no tool's arguments; defineTool refuses it.
const tools = shapes.flatMap((shape, i) => {
  try {
    return [{ shape, tool: defineTool({ name: `shape_${i}`, description: shape.name, args: shape.schema, traits: { effect: 'read' }, run: (args) => JSON.stringify(args) }) }]
  } catch {
    return []
  }
})

describe('every real-world shape through the pipeline, in every dialect', () => {
  it('defines nearly every shape as a tool', () => {
    expect(tools.length).toBeGreaterThanOrEqual(shapes.length - 2)
  })

  for (const dialect of dialects) {
    it(`${dialect}: runs every valid value sent in the dialect's shape, and refuses every invalid one`, async () => {
      const registry = new ToolRegistry()
      for (const { tool } of tools) registry.define(tool)
      const toolset = registry.toolset({ session: { id: 's1' } })
      expect(toolset.definitions(dialect)).toHaveLength(tools.length)
      const failures: string[] = []
      for (const { shape, tool } of tools) {
        const conversion = dialectOf(tool.args, shape.locale, dialect)
        const calls = [
          ...shape.valid.map((value, i) => ({ id: `valid ${i}`, name: tool.name, arguments: JSON.stringify(dialectShape(value, conversion)) })),
          ...shape.invalid.map((value, i) => ({ id: `invalid ${i}`, name: tool.name, arguments: JSON.stringify(value) })),
        ]
        for (const result of await toolset.execute(calls)) {
          const expected = result.id.startsWith('valid') ? 'ok' : 'error'
          if (result.status !== expected) failures.push(`${shape.name} ${result.id}: ${result.status} ${result.content}`)
        }
      }
      expect(failures).toEqual([])
    })
  }
})
