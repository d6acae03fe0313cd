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
    ['malformed JSON that cannot be repaired', '{"env": "pro', /^Arguments are not valid JSON \(.+\)\. Send a JSON object\. They cannot be repaired without guessing: the string at position 8 is cut off: its end, and what followed, cannot be known\.$/],
    ['an array', '["prod"]', 'Arguments must be a JSON object, got an array.'],
    ['a number', '42', 'Arguments must be a JSON object, got number.'],
    ['__proto__', '{"env":"prod","__proto__":{"admin":true}}', 'Arguments use a forbidden key at $.__proto__. Rename or remove it.'],
    ['nested constructor', '{"env":"prod","note":{"constructor":{"prototype":1}}}', 'Arguments use a forbidden key at $.note.constructor. Rename or remove it.'],
  ])('turns %s into an error result', async (_, args, message) => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', args)
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    if (typeof message === 'string') expect(result.content).toBe(message)
    else expect(result.content).toMatch(message)
    expect(({} as any).admin).toBeUndefined()
  })

  // JSON's \u escapes spell a forbidden key without its letters appearing in the text.
  it.each([
    ['__proto__', '{"text":"e","data":{"__\\u0070roto__":{"admin":true}}}', '$.data.__proto__'],
    ['constructor', '{"text":"e","data":{"constructo\\u0072":{"admin":true}}}', '$.data.constructor'],
    ['prototype', '{"text":"e","data":{"pr\\u006ftotype":{"admin":true}}}', '$.data.prototype'],
    ['top-level __proto__', '{"text":"e","__\\u0070roto__":{"admin":true}}', '$.__proto__'],
    ['top-level constructor', '{"text":"e","\\u0063\\u006fnstructor":1}', '$.constructor'],
    ['top-level prototype', '{"\\u0070rototype":1,"text":"e"}', '$.prototype'],
    ['array-nested prototype', '{"text":"e","data":[{"ok":1},{"prot\\u006ftype":1}]}', '$.data[1].prototype'],
  ])('refuses an escaped %s key before the handler runs', async (_, args, path) => {
    let ran = 0
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String, data: Schema.any() }), traits: { effect: 'read' }, run: ({ text }) => { ran++; return text } }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'echo', arguments: args }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments', content: `Arguments use a forbidden key at ${path}. Rename or remove it.` })
    expect(ran).toBe(0)
  })

  it('still runs calls whose escapes spell no forbidden key', async () => {
    const { toolset } = setup()
    const result = await one(toolset, 'deploy', '{"env":"prod","note":"caf\\u00e9 \\u0070roto"}')
    expect(result).toMatchObject({ status: 'ok', data: { note: 'café proto' } })
  })

  it('refuses oversized arguments without parsing them', async () => {
    const registry = new ToolRegistry({ limits: { maxArgumentsLength: 100 } })
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String }), traits: { effect: 'read' }, run: ({ text }) => text }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'echo', arguments: JSON.stringify({ text: 'x'.repeat(200) }) }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toBe('Arguments are too large: 211 characters, at most 100 are accepted.')
  })

  it('accepts arguments of exactly the limit and refuses one character more', async () => {
    const registry = new ToolRegistry({ limits: { maxArgumentsLength: 100 } })
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String }), traits: { effect: 'read' }, run: ({ text }) => text }))
    // '{"text":""}' is 11 characters.
    const atLimit = JSON.stringify({ text: 'x'.repeat(89) })
    const over = JSON.stringify({ text: 'x'.repeat(90) })
    expect([atLimit.length, over.length]).toEqual([100, 101])
    const results = await registry.toolset({ session }).execute([
      { id: '1', name: 'echo', arguments: atLimit },
      { id: '2', name: 'echo', arguments: over },
    ])
    expect(results.map((r) => [r.status, r.content])).toEqual([
      ['ok', 'x'.repeat(89)],
      ['error', 'Arguments are too large: 101 characters, at most 100 are accepted.'],
    ])
  })

  it('applies a toolset\'s own argument limit at its exact boundary', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'echo', description: '', args: Schema.object({ text: String }), traits: { effect: 'read' }, run: ({ text }) => text }))
    const toolset = registry.toolset({ session, maxArgumentsLength: 20 })
    const [atLimit] = await toolset.execute([{ id: '1', name: 'echo', arguments: JSON.stringify({ text: 'x'.repeat(9) }) }])
    const [over] = await toolset.execute([{ id: '2', name: 'echo', arguments: JSON.stringify({ text: 'x'.repeat(10) }) }])
    expect(atLimit).toMatchObject({ status: 'ok', content: 'xxxxxxxxx' })
    expect(over).toMatchObject({ status: 'error', code: 'invalid_arguments', content: 'Arguments are too large: 21 characters, at most 20 are accepted.' })
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

  // A gate is plugin code: whatever its synchronous answer, the pipeline must return a result.
  describe.each([
    ['returns undefined', () => undefined, 'Permission denied: the permission check returned no valid decision (got undefined)', { cause: 'no_decision', got: 'undefined' }],
    ['throws', () => { throw new Error('rules store is offline') }, 'Permission denied: the permission check failed: rules store is offline', { cause: 'check_failed', error: 'rules store is offline' }],
    ['returns an unknown decision', () => ({ decision: 'bogus' }), 'Permission denied: the permission check returned no valid decision (got "bogus")', { cause: 'no_decision', got: '"bogus"' }],
  ])('a synchronous gate that %s', (_, decide, content, params) => {
    function gated() {
      let ran = 0
      const registry = new ToolRegistry()
      registry.define(defineTool({ name: 'do_write', description: '', traits: { effect: 'write' }, run: () => { ran++; return 'wrote' } }))
      registry.permissions = testGate(decide as any).gate
      return { toolset: registry.toolset({ session }), ran: () => ran }
    }

    it('denies a single call', async () => {
      const { toolset, ran } = gated()
      const results = await toolset.execute([{ id: '1', name: 'do_write', arguments: '{}' }])
      expect(results).toEqual([{ id: '1', name: 'do_write', status: 'denied', code: 'permission_denied', content, params, durationMs: expect.any(Number) }])
      expect(ran()).toBe(0)
    })

    it('denies every call of a batch', async () => {
      const { toolset, ran } = gated()
      const results = await toolset.execute([
        { id: '1', name: 'do_write', arguments: '{}' },
        { id: '2', name: 'do_write', arguments: '{}' },
      ])
      expect(results.map((r) => [r.id, r.status, r.code, r.content])).toEqual([
        ['1', 'denied', 'permission_denied', content],
        ['2', 'denied', 'permission_denied', content],
      ])
      expect(ran()).toBe(0)
    })
  })

  it.each([
    ['undefined', undefined, 'Permission denied: the permission check returned no valid decision (got undefined)'],
    ['an unknown decision', { decision: 'bogus' }, 'Permission denied: the permission check returned no valid decision (got "bogus")'],
  ])('denies a call whose asynchronous gate resolves to %s', async (_, answer, content) => {
    let ran = 0
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'do_write', description: '', traits: { effect: 'write' }, run: () => { ran++; return 'wrote' } }))
    registry.permissions = { authorize: async () => answer as any, approve: async () => ({ decision: 'allow' }) }
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'do_write', arguments: '{}' }])
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied', content })
    expect(ran).toBe(0)
  })

  it('denies call.ask when no permission service is loaded', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'pay', description: '', traits: { effect: 'read' }, run: async (_, call) => { await call.ask('charge'); return 'paid' } }))
    const [result] = await registry.toolset({ session }).execute([{ id: '1', name: 'pay', arguments: '{}' }])
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: no permission service is loaded to approve it (charge)' })
  })
})
