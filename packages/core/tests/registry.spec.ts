import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, DoguError, ToolRegistry } from '../src'

const tool = (name: string, extra: object = {}) => defineTool({ name, description: `${name} tool`, run: () => name, ...extra })

describe('ToolRegistry', () => {
  it('defines, lists in name order and disposes', () => {
    const changes: string[] = []
    const registry = new ToolRegistry({ emit: (name: string) => { changes.push(name) } })
    const owner = { name: 'a' }
    const disposeB = registry.define(tool('b'), owner)
    registry.define(tool('a'), owner)
    expect(registry.list().map((t) => t.name)).toEqual(['a', 'b'])
    expect(registry.version).toBe(2)
    disposeB()
    disposeB()
    expect(registry.has('b')).toBe(false)
    expect(registry.version).toBe(3)
    expect(changes).toEqual(['tools/changed', 'tools/changed', 'tools/changed'])
  })

  it('lets an owner replace its own tool, and refuses another live owner', () => {
    const registry = new ToolRegistry()
    const first = { name: 'weather' }
    const second = { name: 'forecast' }
    const disposeOld = registry.define(tool('weather'), first)
    const replacement = defineTool({ name: 'weather', description: 'v2', run: () => 'v2' })
    registry.define(replacement, first)
    expect(registry.get('weather')).toBe(replacement)
    // The old disposer must not remove the replacement.
    disposeOld()
    expect(registry.get('weather')).toBe(replacement)

    let error: unknown
    try {
      registry.define(tool('weather'), second)
    } catch (e) {
      error = e
    }
    expect(DoguError.is(error, 'NAME_CONFLICT')).toBe(true)
    expect((error as Error).message).toBe('tool "weather" is already defined by plugin "weather"; plugin "forecast" cannot define it too')
  })

  it('frees a name when its owner is disposed', () => {
    const registry = new ToolRegistry()
    const first = { name: 'one' }
    registry.define(tool('x'), first)
    registry.define(tool('y'), first)
    expect(registry.disposeOwner(first)).toBe(2)
    expect(registry.disposeOwner(first)).toBe(0)
    registry.define(tool('x'), { name: 'two' })
    expect(registry.ownerOf('x')).toBe('plugin "two"')
  })

  it('accepts plain options and checks them like defineTool', () => {
    const registry = new ToolRegistry()
    registry.define({ name: 'plain', description: 'd', args: Schema.object({}), run: () => 'x' })
    expect(registry.get('plain')?.traits.effect).toBe('exec')
    expect(() => registry.define({ name: 'bad name', description: '', run: () => '' })).toThrow(DoguError)
  })

  it('filters by include and exclude globs', () => {
    const registry = new ToolRegistry()
    for (const name of ['fs_read', 'fs_write', 'web_search', 'deploy']) registry.define(tool(name))
    expect(registry.filter({ include: ['fs_*'] }).map((t) => t.name)).toEqual(['fs_read', 'fs_write'])
    expect(registry.filter({ exclude: ['fs_*', 'deploy'] }).map((t) => t.name)).toEqual(['web_search'])
    expect(registry.filter({ include: ['*'], exclude: ['*_write'] }).map((t) => t.name)).toEqual(['deploy', 'fs_read', 'web_search'])
  })
})
