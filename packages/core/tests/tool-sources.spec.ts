import { describe, expect, it } from 'vitest'
import { DoguError, type ToolSource, ToolRegistry } from '../src'

/** A source whose status the test sets, as an imported MCP server's changes. */
function source(name: string, status: string, extra: Partial<ToolSource> = {}): ToolSource & { status: string } {
  return { name, kind: 'mcp', status, tools: [], ...extra }
}

describe('tool sources', () => {
  it('lists registered sources by kind then name, and forgets a disposed one', () => {
    const registry = new ToolRegistry()
    const b = registry.addSource(source('b', 'connected'))
    registry.addSource(source('a', 'connecting'))
    registry.addSource({ ...source('z', 'connected'), kind: 'another' })
    expect(registry.sources().map((s) => `${s.kind}:${s.name}`)).toEqual(['another:z', 'mcp:a', 'mcp:b'])
    b()
    expect(registry.sources().map((s) => s.name)).toEqual(['z', 'a'])
  })

  it('refuses a second source of the same kind and name', () => {
    const registry = new ToolRegistry()
    registry.addSource(source('docs', 'connected'))
    expect(() => registry.addSource(source('docs', 'connecting'))).toThrow(DoguError)
    expect(() => registry.addSource(source('docs', 'connecting'))).toThrow('a mcp source named "docs" is already registered')
  })

  it('a toolset names the sources it lacks and why, as they were when it was made', () => {
    const registry = new ToolRegistry()
    const tracker = source('tracker', 'needs-authorization', { needsAuthorization: true })
    registry.addSource(tracker)
    registry.addSource(source('files', 'reconnecting', { lastError: 'connect ECONNREFUSED 127.0.0.1:9' }))
    registry.addSource(source('memory', 'connected'))
    registry.addSource(source('old', 'closed'))
    const toolset = registry.toolset({ session: { id: 's' } })
    expect(toolset.unavailable()).toEqual([
      { kind: 'mcp', name: 'files', status: 'reconnecting', reason: 'connect ECONNREFUSED 127.0.0.1:9' },
      { kind: 'mcp', name: 'tracker', status: 'needs-authorization', reason: 'needs authorization by an operator (the console\'s MCP servers view)' },
    ])
    // A snapshot, like the toolset's tools: a later change shows in the next toolset.
    tracker.status = 'connected'
    expect(toolset.unavailable()).toHaveLength(2)
    expect(registry.toolset({ session: { id: 's' } }).unavailable().map((s) => s.name)).toEqual(['files'])
  })
})
