import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, DoguError, ToolRegistry } from '../src'

const session = { id: 's1', platform: 'discord' }

function registryWith(...names: string[]) {
  const registry = new ToolRegistry()
  for (const name of names) registry.define(defineTool({ name, description: `${name} tool`, traits: { effect: 'read' }, run: () => name }))
  return registry
}

describe('Toolset', () => {
  it('advertises exactly what it can call, in a stable order', async () => {
    const registry = registryWith('zeta', 'alpha', 'mid')
    const toolset = registry.toolset({ session })
    expect(toolset.names).toEqual(['alpha', 'mid', 'zeta'])
    expect(toolset.definitions('json').map((d) => d.name)).toEqual(toolset.names)
    const results = await toolset.execute(toolset.names.map((name, i) => ({ id: `c${i}`, name, arguments: '{}' })))
    expect(results.map((r) => [r.status, r.content])).toEqual([['ok', 'alpha'], ['ok', 'mid'], ['ok', 'zeta']])
  })

  it('is a snapshot: later changes to the registry do not reach it', async () => {
    const registry = registryWith('a')
    const toolset = registry.toolset({ session })
    registry.define(defineTool({ name: 'b', description: '', traits: { effect: 'read' }, run: () => 'b' }))
    expect(toolset.names).toEqual(['a'])
    const [result] = await toolset.execute([{ id: '1', name: 'b', arguments: {} }])
    expect(result.status).toBe('error')
    expect(result.code).toBe('unknown_tool')
  })

  it('applies include/exclude globs, groups and visibility', () => {
    const registry = new ToolRegistry()
    const def = (name: string, extra: object = {}) => registry.define(defineTool({ name, description: '', run: () => '', ...extra }))
    def('fs_read')
    def('fs_write')
    def('deploy', { groups: ['ops'] })
    def('qq_only', { visibility: (s: any) => s.platform === 'qq' })
    def('broken', { visibility: () => { throw new Error('boom') } })
    expect(registry.toolset({ session }).names).toEqual(['fs_read', 'fs_write'])
    expect(registry.toolset({ session, groups: ['ops'] }).names).toEqual(['deploy', 'fs_read', 'fs_write'])
    expect(registry.toolset({ session: { id: 'q', platform: 'qq' } }).names).toEqual(['fs_read', 'fs_write', 'qq_only'])
    expect(registry.toolset({ session, include: ['fs_*'], exclude: ['*write'] }).names).toEqual(['fs_read'])
  })

  it('never dispatches to a tool the session cannot see', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'secret', description: '', traits: { effect: 'read' }, visibility: () => false, run: () => 'leak' }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'secret', arguments: '{}' }])
    expect(result).toMatchObject({ status: 'error', code: 'unknown_tool' })
    expect(result.content).not.toContain('leak')
  })

  it('caches definitions per dialect while the tools are unchanged', () => {
    const registry = registryWith('a', 'b')
    const first = registry.toolset({ session })
    const second = registry.toolset({ session })
    expect(first.definitions('openai')).toBe(first.definitions('openai'))
    expect(second.definitions('openai')[0]).toBe(first.definitions('openai')[0])
    expect(Object.isFrozen(first.definitions('json'))).toBe(true)
  })

  it('formats definitions for each provider', () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'weather',
      description: 'Weather for a city',
      args: Schema.object({ city: Schema.string().required().description('City name') }),
      traits: { effect: 'read' },
      run: ({ city }) => `${city}: sunny`,
    }))
    const toolset = registry.toolset({ session })
    const [openai] = toolset.definitions('openai')
    expect(openai.type).toBe('function')
    expect(openai.function).toMatchObject({ name: 'weather', description: 'Weather for a city', strict: true })
    expect(openai.function.parameters).toMatchObject({ type: 'object', required: ['city'], additionalProperties: false })
    const [anthropic] = toolset.definitions('anthropic')
    expect(anthropic).toMatchObject({ name: 'weather', input_schema: { type: 'object', required: ['city'] } })
    const [gemini] = toolset.definitions('gemini')
    expect(gemini).toMatchObject({ name: 'weather', parameters: { type: 'object', required: ['city'] } })
    expect(JSON.stringify(gemini.parameters)).not.toContain('additionalProperties')
    const [json] = toolset.definitions('json')
    expect(json.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string', description: 'City name' } } })
    expect(() => toolset.definitions('mistral' as any)).toThrow('unknown dialect "mistral"')
  })

  it('keeps a tool whose schema a provider cannot express, and says what it loosened', () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'tag',
      description: 'Tag things',
      args: Schema.object({ labels: Schema.dict(Schema.string()), point: Schema.tuple([Number, Number]) }),
      traits: { effect: 'read' },
      run: () => '',
    }))
    const toolset = registry.toolset({ session })
    const [openai] = toolset.definitions('openai')
    expect(openai.function.strict).toBe(false)
    expect(Object.keys(openai.function.parameters.properties as object)).toEqual(['labels', 'point'])
    expect(openai.function.parameters).not.toHaveProperty('$schema')
    const [gemini] = toolset.definitions('gemini')
    expect(gemini.description).toBe('Tag things')
    expect(gemini.parameters!.properties).toMatchObject({ labels: { type: 'string' }, point: { type: 'array', items: { type: 'number' } } })
    expect(toolset.loosened('gemini')).toEqual({
      tag: [{ path: '$.labels', rule: 'sent as a JSON-encoded string of an object with any keys, each value a string' }],
    })
    expect(toolset.loosened('openai').tag.map((loosening) => loosening.path)).toEqual(['$.labels', '$.point'])
    expect(toolset.loosened('anthropic')).toEqual({})
    expect(toolset.loosened('json')).toEqual({})
  })

  it('refuses a toolset without a session', () => {
    const registry = registryWith('a')
    expect(() => registry.toolset({} as any)).toThrow(DoguError)
  })
})
