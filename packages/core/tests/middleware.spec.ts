import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { AuditLog, defineTool, type Logger, type MiddlewareCall, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionEngineOptions, type PermissionRequest, type RespondStatus } from '../src/permissions'

const caller: Session = { id: 's1', userId: 'u1', platform: 'discord', guildId: 'g1', authority: 1 }

/** Collects warnings: a middleware's failure is logged, and the tests say which they expect. */
function logger() {
  const warnings: string[] = []
  const format = (message: string, args: unknown[]) => args.reduce<string>((text, arg) => text.replace(/%[sdo]/, String(arg instanceof Error ? arg.message : arg)), message)
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (message: string, ...args: unknown[]) => { warnings.push(format(message, args)) },
    error: (message: string, ...args: unknown[]) => { throw new Error(`unexpected error log: ${format(message, args)}`) },
  } as Logger
  return { log, warnings }
}

/**
 * `search` (read) lists `limit` rows; `deploy` (write, asked by default) targets `env` with a
 * secret `token`; `files_read` (read, permission fs.read on `path`).
 */
function setup(options: PermissionEngineOptions = {}) {
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ ...options, onDecision: (event) => decisions.push(event) })
  const { log, warnings } = logger()
  const registry = new ToolRegistry({ logger: log })
  registry.permissions = engine
  const runs: Array<[string, unknown]> = []
  registry.define(defineTool({
    name: 'search',
    description: 'Search',
    args: Schema.object({ query: Schema.string().required(), limit: Schema.natural().max(100).default(20) }),
    traits: { effect: 'read' },
    run: (args, call) => {
      runs.push(['search', args])
      call.progress(`searching ${args.query}`)
      return { text: `${args.limit} results for ${args.query}`, data: { limit: args.limit } }
    },
  }))
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: Schema.object({ env: Schema.string().required(), token: Schema.string().role('secret').required() }),
    traits: { effect: 'write' },
    permission: (args) => ({ name: 'deploy', target: args.env }),
    run: (args) => {
      runs.push(['deploy', args])
      return `deployed to ${args.env}`
    },
  }))
  registry.define(defineTool({
    name: 'files_read',
    description: 'Read a file',
    args: Schema.object({ path: Schema.string().required() }),
    traits: { effect: 'read' },
    permission: (args) => ({ name: 'fs.read', target: args.path }),
    run: (args) => {
      runs.push(['files_read', args])
      return `contents of ${args.path}`
    },
  }))
  const waiting: Array<{ request: PermissionRequest; respond(answer: AskAnswer): RespondStatus }> = []
  let notify: (() => void) | undefined
  engine.addAsker((request, context) => {
    waiting.push({ request, respond: context.respond })
    notify?.()
  })
  const asked = async () => {
    while (!waiting.length) await new Promise<void>((resolve) => { notify = resolve })
    return waiting.shift()!
  }
  let n = 0
  const call = (name: string, args: object, session = caller): Promise<ToolResult> =>
    registry.toolset({ session }).execute([{ id: `c${++n}`, name, arguments: args as Record<string, unknown> }]).then(([result]) => result)
  return { engine, registry, runs, decisions, asked, call, warnings }
}

describe('ctx.tools.use: middleware around calls', () => {
  it('runs around the call after validation and authorization, outermost first by order, then by registration', async () => {
    const { registry, call } = setup()
    const trace: string[] = []
    const around = (label: string) => async (_call: MiddlewareCall, next: (args?: unknown) => Promise<ToolResult>) => {
      trace.push(`${label} before`)
      const result = await next()
      trace.push(`${label} after ${result.status}`)
      return result
    }
    registry.use(around('b'), { name: 'b', order: 10 })
    registry.use(around('a'), { name: 'a' })
    registry.use(around('c'), { name: 'c', order: 10 })
    registry.use(around('z'), { name: 'z', order: -5 })
    expect(await call('search', { query: 'cats' })).toMatchObject({ status: 'ok', content: '20 results for cats' })
    expect(trace).toEqual(['z before', 'a before', 'b before', 'c before', 'c after ok', 'b after ok', 'a after ok', 'z after ok'])
    // A call that fails validation never reaches a middleware.
    trace.length = 0
    expect(await call('search', { query: 7 })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(trace).toEqual([])
  })

  it('does not see calls the permission check denied', async () => {
    const { registry, call } = setup({ rules: [{ permission: 'deploy', decision: 'deny' }] })
    const seen: string[] = []
    registry.use((c, next) => {
      seen.push(c.name)
      return next()
    })
    expect(await call('deploy', { env: 'prod', token: 't0ken-1' })).toMatchObject({ status: 'denied' })
    expect(seen).toEqual([])
  })

  it('blocks a call in one group: the model reads the reason, the tool never runs, and the denial is a decision event and an audit record', async () => {
    const { registry, call, runs, decisions } = setup()
    const audit = new AuditLog({ flushInterval: 10 })
    const tap = (event: DecisionEvent) => audit.onDecision(event)
    decisions.push = ((push) => function (this: DecisionEvent[], ...events: DecisionEvent[]) {
      events.forEach(tap)
      return push.apply(this, events)
    })(decisions.push)
    registry.use((c, next) => c.session.guildId === 'g1' ? { status: 'denied', reason: 'searching is off in this group' } : next(), { name: 'quiet-group', tools: 'search' })
    const result = await call('search', { query: 'cats' })
    audit.onCallEnd({ id: result.id, name: 'search', session: caller, args: { query: 'cats', limit: 20 }, startedAt: Date.now() }, result)
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied', content: 'Permission denied: searching is off in this group' })
    expect(runs).toEqual([])
    const event = decisions.find((e) => e.phase === 'middleware')!
    expect(event).toMatchObject({ decision: 'deny', reason: 'searching is off in this group', source: { kind: 'middleware', name: 'quiet-group' }, request: { tool: 'search', callId: result.id } })
    const [record] = await audit.query({ tool: 'search' })
    expect(record).toMatchObject({ outcome: 'denied', decided: { kind: 'middleware', name: 'quiet-group' }, reason: 'searching is off in this group' })
    await audit.stop()
    // Another group, and another tool, pass.
    expect(await call('search', { query: 'dogs' }, { ...caller, guildId: 'g2' })).toMatchObject({ status: 'ok' })
    expect(await call('files_read', { path: 'a.txt' })).toMatchObject({ status: 'ok' })
  })

  it('blocks with call.deny(reason) too', async () => {
    const { registry, call } = setup()
    registry.use((c) => c.deny('not today'), { name: 'never' })
    expect(await call('search', { query: 'x' })).toMatchObject({ status: 'denied', content: 'Permission denied: not today' })
  })

  it('rewrites arguments: the tool runs with them, validated again, and later middlewares see them', async () => {
    const { registry, call, runs } = setup()
    let seen: unknown
    registry.use((c, next) => {
      const args = c.args as { limit: number }
      return next(args.limit > 10 ? { ...args, limit: 10 } : args)
    }, { name: 'cap-limit', tools: 'search' })
    registry.use((c, next) => {
      seen = c.args
      return next()
    }, { name: 'inner', order: 1 })
    expect(await call('search', { query: 'cats', limit: 50 })).toMatchObject({ status: 'ok', content: '10 results for cats', data: { limit: 10 } })
    expect(runs).toEqual([['search', { query: 'cats', limit: 10 }]])
    expect(seen).toEqual({ query: 'cats', limit: 10 })
    expect(await call('search', { query: 'dogs', limit: 5 })).toMatchObject({ content: '5 results for dogs' })
  })

  it('refuses a rewrite the schema refuses: an error naming the middleware, and the tool does not run', async () => {
    const { registry, call, runs, warnings } = setup()
    registry.use((c, next) => next({ ...(c.args as object), limit: 'lots' }), { name: 'broken-cap' })
    const result = await call('search', { query: 'cats' })
    expect(result.status).toBe('error')
    expect(result.code).toBe('middleware_error')
    expect(result.content).toBe('Error: middleware "broken-cap" failed: it rewrote the arguments into ones the tool\'s schema refuses: Invalid arguments:\n- $.limit: expected a number, got string "lots"')
    expect(runs).toEqual([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('middleware "broken-cap"')
  })

  it('a rewrite to another target is a new request: denied by a rule, or asked and approved by a person', async () => {
    const { registry, call, runs, asked, decisions } = setup({ rules: [{ permission: 'fs.read', target: 'secret/**', decision: 'deny' }, { permission: 'deploy', target: 'staging', decision: 'allow' }] })
    registry.use((c, next) => next({ path: 'secret/keys.txt' }), { name: 'sneaky', tools: 'files_read' })
    const denied = await call('files_read', { path: 'notes.txt' })
    expect(denied).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(denied.content).toMatch(/^Permission denied: middleware "sneaky" rewrote the call, and the rewritten call is denied: /)
    expect(runs).toEqual([])
    // The rewritten request reached the permission service, with the call's id.
    expect(decisions.filter((e) => e.request.tool === 'files_read').map((e) => [e.phase, e.request.permission.target, e.decision])).toEqual([
      ['authorize', 'notes.txt', 'allow'],
      ['authorize', 'secret/keys.txt', 'deny'],
    ])

    // staging is allowed by a rule; prod is not, so the rewrite asks a person.
    registry.use((c, next) => next({ ...(c.args as object), env: 'prod' }), { name: 'to-prod', tools: 'deploy' })
    const result = call('deploy', { env: 'staging', token: 'tok-12345' })
    const question = await asked()
    expect(question.request.permission).toMatchObject({ name: 'deploy', target: 'prod' })
    // The question shows the secret masked; the tool gets it in clear.
    expect(question.request.args).toEqual({ env: 'prod', token: '••••' })
    expect(question.respond({ decision: 'allow', by: 'u1' })).toBe('accepted')
    expect(await result).toMatchObject({ status: 'ok', content: 'deployed to prod' })
    expect(runs).toEqual([['deploy', { env: 'prod', token: 'tok-12345' }]])
  })

  it('a rewrite under the same permission and target needs no second answer', async () => {
    const { registry, call, asked, runs } = setup()
    registry.use((c, next) => next({ ...(c.args as object), token: 'rotated-token' }), { name: 'rotate' })
    const result = call('deploy', { env: 'prod', token: 'tok-12345' })
    ;(await asked()).respond({ decision: 'allow', by: 'u1' })
    expect(await result).toMatchObject({ status: 'ok' })
    expect(runs).toEqual([['deploy', { env: 'prod', token: 'rotated-token' }]])
  })

  it('transforms or replaces the result, and adds progress', async () => {
    const { registry, call, runs } = setup()
    const progress: string[] = []
    const registryWithEvents = new ToolRegistry({ emit: (name, ...args) => { if (name === 'tools/call-progress') progress.push(args[1] as string) } })
    registryWithEvents.define(registry.get('search')!)
    registryWithEvents.use(async (c, next) => {
      c.progress('checking the cache')
      const result = await next()
      return { ...result, content: result.content.toUpperCase() }
    }, { name: 'shout' })
    const [shouted] = await registryWithEvents.execute([{ id: 'x1', name: 'search', arguments: { query: 'cats' } }], { session: caller })
    expect(shouted).toMatchObject({ id: 'x1', name: 'search', status: 'ok', content: '20 RESULTS FOR CATS', data: { limit: 20 } })
    expect(progress).toEqual(['checking the cache', 'searching cats'])

    // A cached answer: the tool never runs.
    registry.use(() => ({ id: 'ignored', name: 'ignored', status: 'ok', content: 'from the cache', durationMs: 0 }), { name: 'cache', tools: 'files_read' })
    expect(await call('files_read', { path: 'a.txt' })).toMatchObject({ name: 'files_read', status: 'ok', content: 'from the cache' })
    expect(runs.filter(([name]) => name === 'files_read')).toEqual([])
  })

  it('turns a throwing middleware into middleware_error, and outer middlewares still get a result and clean up', async () => {
    const { registry, call, warnings } = setup()
    const cleaned: string[] = []
    registry.use(async (_c, next) => {
      try {
        return await next()
      } finally {
        cleaned.push('outer')
      }
    }, { name: 'outer' })
    registry.use(() => { throw new Error('quota backend down') }, { name: 'quota', order: 1 })
    const result = await call('search', { query: 'x' })
    expect(result).toMatchObject({ status: 'error', code: 'middleware_error', content: 'Error: middleware "quota" failed: quota backend down' })
    expect(cleaned).toEqual(['outer'])
    expect(warnings).toEqual([expect.stringContaining('middleware "quota" failed on search')])
  })

  it('refuses a second next(), a middleware that returns nothing, and one that returns an unknown status', async () => {
    const { registry, call, runs, warnings } = setup()
    registry.use(async (_c, next) => {
      await next()
      return next()
    }, { name: 'twice', tools: 'search' })
    expect(await call('search', { query: 'x' })).toMatchObject({ status: 'error', code: 'middleware_error', content: expect.stringContaining('next() was called twice') })
    expect(runs).toHaveLength(1)
    const silent = registry.use((() => undefined) as never, { name: 'silent', tools: 'files_read' })
    expect(await call('files_read', { path: 'a' })).toMatchObject({ code: 'middleware_error', content: 'Error: middleware "silent" failed: it returned nothing instead of a result' })
    silent()
    // Only the pipeline hands a call to the background.
    registry.use((() => ({ status: 'background', content: 'later' })) as never, { name: 'odd', tools: 'files_read' })
    expect(await call('files_read', { path: 'a' })).toMatchObject({ code: 'middleware_error', content: 'Error: middleware "odd" failed: it returned a result with status "background"' })
    expect(runs).toHaveLength(1)
    expect(warnings).toHaveLength(3)
  })

  it('narrows by tool globs, and stops when disposed', async () => {
    const { registry, call } = setup()
    const seen: string[] = []
    const dispose = registry.use((c, next) => {
      seen.push(c.name)
      return next()
    }, { tools: ['files_*', 'sea*'] })
    await call('search', { query: 'x' })
    await call('files_read', { path: 'a' })
    dispose()
    await call('search', { query: 'y' })
    expect(seen).toEqual(['search', 'files_read'])
  })

  it('refuses bad options with a clear error', () => {
    const { registry } = setup()
    expect(() => registry.use('nope' as never)).toThrow('use() needs a middleware function')
    expect(() => registry.use((_c, next) => next(), { order: Number.NaN })).toThrow('order must be a number')
    expect(() => registry.use((_c, next) => next(), { tools: [] })).toThrow('tools must be a name glob or a non-empty list')
  })

  it('a timeout ends the call even while a middleware hangs', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'quick', description: 'Quick', args: Schema.object({}), traits: { effect: 'read', timeout: 50 }, run: () => 'done' }))
    registry.use(() => new Promise(() => {}), { name: 'hang' })
    const [result] = await registry.execute([{ id: 'q1', name: 'quick', arguments: {} }], { session: caller })
    expect(result).toMatchObject({ status: 'timed_out', code: 'timed_out' })
  })
})
