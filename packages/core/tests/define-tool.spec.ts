import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, DoguError } from '../src'
import { isTool } from '../src/define-tool'

const run = () => 'ok'

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    return DoguError.is(error) ? error.code : `not a DoguError: ${error}`
  }
}

describe('defineTool', () => {
  it('fills worst-case defaults for undeclared traits', () => {
    const tool = defineTool({ name: 'deploy', description: 'Deploy', run })
    expect(tool.traits).toEqual({ effect: 'exec', parallel: false, timeout: 180_000, background: true, concurrency: Infinity })
    expect(tool.mode).toBe('eager')
    expect(tool.groups).toEqual([])
    expect(isTool(tool)).toBe(true)
    expect(Object.isFrozen(tool)).toBe(true)
  })

  it('makes read tools parallel unless they say otherwise', () => {
    expect(defineTool({ name: 'a', description: '', traits: { effect: 'read' }, run }).traits.parallel).toBe(true)
    expect(defineTool({ name: 'b', description: '', traits: { effect: 'read', parallel: false }, run }).traits.parallel).toBe(false)
    expect(defineTool({ name: 'c', description: '', traits: { effect: 'write' }, run }).traits.parallel).toBe(false)
  })

  it.each([
    ['', 'INVALID_NAME'],
    ['has space', 'INVALID_NAME'],
    ['dotted.name', 'INVALID_NAME'],
    ['x'.repeat(65), 'INVALID_NAME'],
    ['名字', 'INVALID_NAME'],
  ])('rejects the name %j', (name, code) => {
    expect(codeOf(() => defineTool({ name, description: '', run }))).toBe(code)
  })

  it('accepts the longest legal name', () => {
    expect(defineTool({ name: 'a-Z_9'.repeat(12) + 'abcd', description: '', run }).name).toHaveLength(64)
  })

  it('refuses bad definitions with specific codes', () => {
    expect(codeOf(() => defineTool({ name: 'x', description: 'd' } as any))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: 3, run } as any))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', traits: { effect: 'delete' as any }, run }))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', traits: { timeout: 0 }, run }))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', traits: { concurrency: 0 }, run }))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', mode: 'lazy' as any, run }))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', groups: [''], run }))).toBe('INVALID_DEFINITION')
    expect(codeOf(() => defineTool({ name: 'x', description: '', args: Schema.string() as any, run }))).toBe('INVALID_ARGS_SCHEMA')
    expect(codeOf(() => defineTool({ name: 'x', description: '', args: {} as any, run }))).toBe('INVALID_ARGS_SCHEMA')
  })

  it('refuses argument types no model can be told about, naming the path', () => {
    let error: unknown
    try {
      defineTool({ name: 'x', description: '', args: Schema.object({ cb: Schema.object({ fn: Schema.function() }) }), run })
    } catch (e) {
      error = e
    }
    expect(DoguError.is(error, 'INVALID_ARGS_SCHEMA')).toBe(true)
    expect((error as Error).message).toContain('$.cb.fn')
  })
})
