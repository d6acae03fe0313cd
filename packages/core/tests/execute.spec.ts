import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, ToolRegistry, type ToolResult } from '../src'
import { testGate } from './gate'

const session = { id: 's1', userId: 'u1' }

function setup() {
  const events: string[] = []
  const registry = new ToolRegistry({
    emit: (name: string, ...args: any[]) => {
      if (name === 'tools/call-start') events.push(`start ${args[0].name}`)
      if (name === 'tools/call-end') events.push(`end ${args[0].name} ${args[1].status}`)
      if (name === 'tools/call-progress') events.push(`progress ${args[0].name} ${args[1]}`)
    },
  })
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy the current build',
    args: Schema.object({
      env: Schema.union(['staging', 'prod']).required(),
      retries: Schema.natural().max(5).default(2),
      dryRun: Schema.boolean().default(false),
      note: Schema.string(),
    }),
    traits: { effect: 'read' },
    run: (args) => ({ text: `deploy ${args.env} x${args.retries}${args.dryRun ? ' (dry)' : ''}`, data: args }),
  }))
  return { registry, events, toolset: registry.toolset({ session }) }
}

const one = async (toolset: ReturnType<typeof setup>['toolset'], name: string, args: unknown): Promise<ToolResult> =>
  (await toolset.execute([{ id: 'c1', name, arguments: args as any }]))[0]

describe('execute: resolve and validate', () => {
  it('runs a valid call with defaults applied, from a JSON string or an object', async () => {
    const { toolset } = setup()
    const fromString = await one(toolset, 'deploy', '{"env":"prod"}')
    expect(fromString).toMatchObject({ id: 'c1', name: 'deploy', status: 'ok', content: 'deploy prod x2', data: { env: 'prod', retries: 2, dryRun: false } })
    expect(fromString.durationMs).toBeGreaterThanOrEqual(0)
    expect((await one(toolset, 'deploy', { env: 'staging', dryRun: true })).content).toBe('deploy staging x2 (dry)')
  })

  it('treats null for an optional field as absent, so its default applies', async () => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', '{"env":"prod","retries":null,"dryRun":null,"note":null}')
    expect(result.status).toBe('ok')
    expect(result.data).toMatchObject({ retries: 2, dryRun: false })
  })

  it('names the closest tools for an unknown name', async () => {
    const { toolset } = setup()
    const result = await one(toolset, 'deplyo', '{}')
    expect(result).toMatchObject({ status: 'error', code: 'unknown_tool', name: 'deplyo' })
    expect(result.content).toContain('Unknown tool "deplyo". Did you mean "deploy"?')
  })

  it('reports every invalid path in one message', async () => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', '{"env":"dev","retries":9,"dryRun":"yes"}')
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain('$.env')
    expect(result.content).toContain('$.retries')
    expect(result.content).toContain('$.dryRun')
  })

  it.each([
    ['malformed JSON', '{"env": "prod"', 'not valid JSON'],
    ['an array', '["prod"]', 'must be a JSON object, got an array'],
    ['a number', '42', 'must be a JSON object, got number'],
    ['__proto__', '{"env":"prod","__proto__":{"admin":true}}', 'forbidden key at $.__proto__'],
    ['nested constructor', '{"env":"prod","note":{"constructor":{"prototype":1}}}', 'forbidden key at $.note.constructor'],
  ])('turns %s into an error result', async (_, args, message) => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', args)
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain(message)
    expect(({} as any).admin).toBeUndefined()
  })

  it('refuses oversized arguments without parsing them', async () => {
    const registry = new ToolRegistry({ limits: { maxArgumentsLength: 100 } })
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String }), traits: { effect: 'read' }, run: ({ text }) => text }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'echo', arguments: JSON.stringify({ text: 'x'.repeat(200) }) }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toBe('Arguments are too large: 211 characters, at most 100 are accepted.')
  })

  it('keeps string values that merely mention a forbidden word', async () => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', '{"env":"prod","note":"the constructor of __proto__"}')
    expect(result.status).toBe('ok')
  })

  it('accepts missing ids and bad call shapes without throwing', async () => {
    const { toolset } = setup()
    const results = await toolset.execute([{ name: 'deploy', arguments: '{"env":"prod"}' } as any, null as any, { id: 'x' } as any])
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'error'])
    expect(results[0].id).toMatch(/^call_\d+$/)
    expect(results[1].content).toBe('Unknown tool: the call has no tool name.')
  })
})

describe('execute: report', () => {
  it('returns results in call order and emits start/end for each', async () => {
    const { toolset, events } = setup()
    const results = await toolset.execute([
      { id: 'a', name: 'deploy', arguments: '{"env":"prod"}' },
      { id: 'b', name: 'nope', arguments: '{}' },
      { id: 'c', name: 'deploy', arguments: '{"env":"staging"}' },
    ])
    expect(results.map((r) => r.id)).toEqual(['a', 'b', 'c'])
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'ok'])
    expect(events.filter((e) => e.startsWith('start')).length).toBe(3)
    expect(events.filter((e) => e.startsWith('end')).sort()).toEqual(['end deploy ok', 'end deploy ok', 'end nope error'])
  })

  it('hands listeners call info that serializes to what a log needs', async () => {
    const infos: string[] = []
    const registry = new ToolRegistry({ emit: (name: string, ...args: any[]) => { if (name === 'tools/call-end') infos.push(JSON.stringify(args[0])) } })
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String }), traits: { effect: 'read' }, run: ({ text }) => text }))
    await registry.toolset({ session }).execute([{ id: 'e1', name: 'echo', arguments: '{"text":"hi"}' }])
    expect(infos).toHaveLength(1)
    expect(JSON.parse(infos[0])).toEqual({ id: 'e1', name: 'echo', session: { id: 's1', userId: 'u1' }, args: { text: 'hi' }, startedAt: expect.any(Number) })
  })

  it('normalizes outputs: string, JSON value, structured, undefined', async () => {
    const registry = new ToolRegistry()
    const outputs: Record<string, unknown> = {
      str: 'plain',
      obj: { answer: 42 },
      structured: { text: 'shown', data: { hidden: true }, artifacts: [{ kind: 'file_change', path: 'a' }] },
      nothing: undefined,
    }
    for (const [name, output] of Object.entries(outputs)) {
      registry.define(defineTool({ name, description: '', traits: { effect: 'read' }, run: async () => output }))
    }
    const results = await registry.toolset({ session }).execute(Object.keys(outputs).map((name) => ({ id: name, name, arguments: '{}' })))
    const byId = Object.fromEntries(results.map((r) => [r.id, r]))
    expect(byId.str).toMatchObject({ content: 'plain' })
    expect(byId.obj).toMatchObject({ content: '{"answer":42}', data: { answer: 42 } })
    expect(byId.structured).toMatchObject({ content: 'shown', data: { hidden: true }, artifacts: [{ kind: 'file_change', path: 'a' }] })
    expect(byId.structured.content).not.toContain('file_change')
    expect(byId.nothing).toMatchObject({ status: 'ok', content: '' })
  })

  it('cuts oversized content with an explicit marker', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'big', description: '', traits: { effect: 'read' }, run: () => 'y'.repeat(150) }))
    const [result] = await registry.toolset({ session, maxContentLength: 100 }).execute([{ id: '1', name: 'big', arguments: '{}' }])
    expect(result.content).toBe(`${'y'.repeat(100)}\n…[truncated: 50 more characters]`)
  })

  it('turns a thrown error into an error result the model can read', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'sync_fail', description: '', traits: { effect: 'read' }, run: () => { throw new Error('disk full') } }))
    registry.define(defineTool({ name: 'async_fail', description: '', traits: { effect: 'read' }, run: async () => { throw new TypeError('bad input') } }))
    const results = await registry.toolset({ session }).execute([
      { id: '1', name: 'sync_fail', arguments: '{}' },
      { id: '2', name: 'async_fail', arguments: '{}' },
    ])
    expect(results.map((r) => [r.status, r.code, r.content])).toEqual([
      ['error', 'tool_error', 'Error: disk full'],
      ['error', 'tool_error', 'Error: bad input'],
    ])
  })
})

describe('execute: authorize seam', () => {
  const effects = ['read', 'write', 'exec'] as const
  function effectTools() {
    const registry = new ToolRegistry()
    for (const effect of effects) {
      registry.define(defineTool({ name: `do_${effect}`, description: '', traits: { effect }, run: () => `${effect} ran` }))
    }
    return registry
  }

  it('fails closed without a permission service: read runs, write and exec are denied, saying why', async () => {
    const registry = effectTools()
    const results = await registry.toolset({ session }).execute(effects.map((e) => ({ id: e, name: `do_${e}`, arguments: '{}' })))
    expect(results.map((r) => r.status)).toEqual(['ok', 'denied', 'denied'])
    expect(results[1].code).toBe('no_permission_service')
    expect(results[1].content).toBe('Permission denied: no permission service is loaded, so only read-only tools may run ("do_write" has effect "write").')
  })

  it('asks the gate with the tool permission, and honours its decisions', async () => {
    const registry = effectTools()
    const { gate, log } = testGate((request) => ({ decision: request.effect === 'exec' ? 'deny' : request.effect === 'write' ? 'ask' : 'allow', reason: 'exec is off' }))
    registry.permissions = gate
    const results = await registry.toolset({ session }).execute(effects.map((e) => ({ id: e, name: `do_${e}`, arguments: '{}' })))
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'denied'])
    expect(results[2].content).toBe('Permission denied: exec is off')
    expect(log).toEqual(['authorize tool:do_read read', 'authorize tool:do_write write', 'approve do_write', 'authorize tool:do_exec exec'])
  })

  it('uses a permission computed from the arguments', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'deploy',
      description: '',
      args: Schema.object({ env: Schema.union(['staging', 'prod']).required() }),
      permission: (args) => ({ name: 'deploy:run', target: args.env }),
      run: (args) => `deployed ${args.env}`,
    }))
    const { gate, log } = testGate((request) => ({ decision: request.permission.target === 'prod' ? 'deny' : 'allow' }))
    registry.permissions = gate
    const results = await registry.toolset({ session }).execute([
      { id: '1', name: 'deploy', arguments: '{"env":"staging"}' },
      { id: '2', name: 'deploy', arguments: '{"env":"prod"}' },
    ])
    expect(results.map((r) => r.status)).toEqual(['ok', 'denied'])
    expect(log).toEqual(['authorize deploy:run:staging exec', 'authorize deploy:run:prod exec'])
  })

  it('ends a call denied through call.deny and call.ask', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'pay', description: '', traits: { effect: 'read' }, run: async (_, call) => { await call.ask('charge 5 USD'); return 'paid' } }))
    registry.define(defineTool({ name: 'guard', description: '', traits: { effect: 'read' }, run: (_, call) => call.deny('not on weekends') }))
    const { gate, log } = testGate(undefined, async () => ({ decision: 'deny', reason: 'the user said no' }))
    registry.permissions = gate
    const results = await registry.toolset({ session }).execute([
      { id: '1', name: 'pay', arguments: '{}' },
      { id: '2', name: 'guard', arguments: '{}' },
    ])
    expect(results.map((r) => [r.status, r.content])).toEqual([
      ['denied', 'Permission denied: the user said no'],
      ['denied', 'Permission denied: not on weekends'],
    ])
    expect(log).toContain('approve pay charge 5 USD')
  })

  it('denies call.ask when no permission service is loaded', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'pay', description: '', traits: { effect: 'read' }, run: async (_, call) => { await call.ask('charge'); return 'paid' } }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'pay', arguments: '{}' }])
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: no permission service is loaded to approve it (charge)' })
  })
})
