import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { AuditLog, defineTool, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionEngineOptions, type PermissionRequest, type RespondStatus } from '../src/permissions'

const caller: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

interface Waiting {
  request: PermissionRequest
  respond(answer: AskAnswer): RespondStatus
}

/**
 * `purge` (a write tool: asked by default) deletes `limit` rows of `table` with a secret
 * `token`; `ping` has no arguments. The asker keeps each request waiting for the test to answer.
 */
function setup(options: PermissionEngineOptions = {}) {
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ ...options, onDecision: (event) => decisions.push(event) })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'purge',
    description: 'Delete old rows',
    args: Schema.object({
      table: Schema.string().required(),
      limit: Schema.natural().max(100).default(10),
      token: Schema.string().role('secret').required(),
    }),
    traits: { effect: 'write' },
    permission: (args) => ({ name: 'db.purge', target: args.table }),
    run: (args) => {
      runs.push(args)
      return `purged ${args.limit} rows of ${args.table}`
    },
  }))
  registry.define(defineTool({ name: 'ping', description: 'Ping', args: Schema.object({}), traits: { effect: 'exec' }, run: () => 'pong' }))
  const waiting: Waiting[] = []
  let notify: (() => void) | undefined
  engine.addAsker((request, context) => {
    waiting.push({ request, respond: context.respond })
    notify?.()
  })
  const asked = async (): Promise<Waiting> => {
    while (!waiting.length) await new Promise<void>((resolve) => { notify = resolve })
    return waiting.shift()!
  }
  const call = (name: string, args: object, session = caller): Promise<ToolResult> =>
    registry.toolset({ session }).execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }]).then(([result]) => result)
  return { engine, registry, runs, decisions, asked, call }
}

const model = { table: 'logs', limit: 50, token: 'tok-123' }

describe('edit before approve', () => {
  it('offers the call\'s arguments to edit, secrets masked, and runs the edit an approver sends', async () => {
    const { call, asked, runs, decisions } = setup()
    const result = call('purge', model)
    const { request, respond } = await asked()
    expect(request.input).toBeDefined()
    expect(request.input!.initial).toEqual({ table: 'logs', limit: 50, token: '••••' })
    expect(request.input!.schema.dict?.limit).toBeDefined()
    // The approver lowers the limit and leaves the masked token alone: it keeps its value.
    expect(respond({ decision: 'allow', by: 'u1', via: 'console', value: { ...request.input!.initial as object, limit: 5 } })).toBe('accepted')
    const done = await result
    expect(runs).toEqual([{ table: 'logs', limit: 5, token: 'tok-123' }])
    expect(done.status).toBe('ok')
    expect(done.content).toBe('A person changed your arguments before approving this call; it ran with these changes:\n$.limit: 50 → 5\n\npurged 5 rows of logs')
    const approve = decisions.find((event) => event.phase === 'approve')!
    expect(approve.source).toMatchObject({ kind: 'answer', edited: true, via: 'console', scope: 'once' })
    expect(approve.request.args).toEqual({ table: 'logs', limit: 5, token: '••••' })
  })

  it('refuses an edit that fails validation and keeps the request waiting; check() says why first', async () => {
    const { call, asked, runs } = setup()
    const result = call('purge', model)
    const { request, respond } = await asked()
    const bad = { table: 'logs', limit: 500, token: '••••' }
    expect(request.input!.check(bad)).toMatch(/limit/)
    expect(request.input!.check([1, 2])).toBe('the edited arguments must be a JSON object')
    expect(respond({ decision: 'allow', by: 'u1', value: bad })).toBe('invalid')
    expect(respond({ decision: 'allow', by: 'u1', value: 'rm -rf /' })).toBe('invalid')
    expect(runs).toEqual([])
    // Still waiting: a valid answer settles it.
    expect(respond({ decision: 'allow', by: 'u1', value: { ...bad, limit: 1 } })).toBe('accepted')
    expect((await result).status).toBe('ok')
    expect(runs).toEqual([{ table: 'logs', limit: 1, token: 'tok-123' }])
  })

  it('authorizes the edited call again: an edit the rules deny is denied, and nothing runs', async () => {
    const { call, asked, runs } = setup({ rules: [{ permission: 'db.purge', target: 'users', decision: 'deny', name: 'never purge users' }] })
    const result = call('purge', model)
    const { request, respond } = await asked()
    expect(respond({ decision: 'allow', by: 'u1', value: { ...request.input!.initial as object, table: 'users' } })).toBe('accepted')
    const done = await result
    expect(done.status).toBe('denied')
    expect(done.content).toContain('u1 edited the arguments, and the edited call is denied')
    expect(done.content).toContain('never purge users')
    expect(runs).toEqual([])
  })

  it('remembers an `always` answer for the edited call\'s target, never the original\'s', async () => {
    const { call, asked, engine } = setup()
    const first = call('purge', model)
    const { request, respond } = await asked()
    expect(respond({ decision: 'allow', scope: 'always', by: 'u1', value: { ...request.input!.initial as object, table: 'tmp' } })).toBe('accepted')
    expect((await first).status).toBe('ok')
    expect(engine.grants().map((grant) => [grant.permission, grant.target, grant.scope])).toEqual([['db.purge', 'tmp', 'always']])
    // The edited target now runs unasked; the model's original target is still asked.
    expect((await call('purge', { ...model, table: 'tmp' })).status).toBe('ok')
    const again = call('purge', model)
    const second = await asked()
    expect(second.request.summary).toContain('logs')
    second.respond({ decision: 'deny', by: 'u1' })
    expect((await again).status).toBe('denied')
  })

  it('lets only approvers edit, and an edit that moves the call under other approvers needs theirs', async () => {
    const { call, asked, runs } = setup({
      rules: [{ permission: 'db.purge', target: 'billing', decision: 'ask', approvers: { users: ['admin'], caller: false } }],
    })
    const result = call('purge', model)
    const { request, respond } = await asked()
    // A bystander may neither answer nor edit.
    expect(respond({ decision: 'allow', by: { id: 'stranger', platform: 'discord', authority: 1 }, value: { ...request.input!.initial as object, limit: 1 } })).toBe('not-allowed')
    // The caller may approve their own call, and edit it, but not into one only `admin` may approve.
    expect(respond({ decision: 'allow', by: { id: 'u1', platform: 'discord' }, value: { ...request.input!.initial as object, table: 'billing' } })).toBe('not-allowed')
    expect(respond({ decision: 'allow', by: { id: 'u1', platform: 'discord' }, value: { ...request.input!.initial as object, limit: 2 } })).toBe('accepted')
    expect((await result).status).toBe('ok')
    expect(runs).toEqual([{ table: 'logs', limit: 2, token: 'tok-123' }])
  })

  it('says that a secret changed without showing it, and treats an unchanged edit as a plain approval', async () => {
    const { call, asked, runs, decisions } = setup()
    const changed = call('purge', model)
    let waiting = await asked()
    waiting.respond({ decision: 'allow', by: 'u1', value: { table: 'logs', limit: 50, token: 'tok-NEW' } })
    const done = await changed
    expect(done.content).toContain('a secret field was changed (its value is not shown)')
    expect(done.content).not.toContain('tok-NEW')
    expect(runs.at(-1)).toEqual({ table: 'logs', limit: 50, token: 'tok-NEW' })

    const same = call('purge', model)
    waiting = await asked()
    expect(waiting.respond({ decision: 'allow', by: 'u1', value: waiting.request.input!.initial })).toBe('accepted')
    const plain = await same
    expect(plain.content).toBe('purged 50 rows of logs')
    expect(decisions.filter((event) => event.phase === 'approve').at(-1)!.source).not.toHaveProperty('edited')
  })

  it('offers no edit for a tool without arguments, nor for a tool asking from inside its run', async () => {
    const { call, asked, registry } = setup()
    const ping = call('ping', {})
    const first = await asked()
    expect(first.request.input).toBeUndefined()
    first.respond({ decision: 'allow', by: 'u1' })
    expect((await ping).content).toBe('pong')
    registry.define(defineTool({
      name: 'self_ask',
      description: 'Asks for itself',
      args: Schema.object({ what: Schema.string().required() }),
      run: async (args, call) => {
        await call.ask(`may I ${args.what}?`)
        return 'asked'
      },
    }))
    const own = call('self_ask', { what: 'go' })
    // The pipeline's ask (before the run) offers the edit; the tool's own ask does not.
    const before = await asked()
    expect(before.request.input).toBeDefined()
    before.respond({ decision: 'allow', by: 'u1' })
    const second = await asked()
    expect(second.request.reason).toBe('may I go?')
    expect(second.request.input).toBeUndefined()
    // A value on an answer to a request without input is refused, not silently dropped.
    expect(second.respond({ decision: 'allow', by: 'u1', value: { what: 'else' } })).toBe('invalid')
    second.respond({ decision: 'allow', by: 'u1' })
    expect((await own).content).toBe('asked')
  })

  it('records the edited arguments and the edit in the audit log', async () => {
    const audit = new AuditLog()
    const engine = new PermissionEngine({ onDecision: (event) => audit.onDecision(event) })
    const registry = new ToolRegistry({ emit: (name, ...args) => { if (name === 'tools/call-end') audit.onCallEnd(args[0], args[1]) } })
    registry.permissions = engine
    registry.define(defineTool({
      name: 'purge',
      description: 'Delete old rows',
      args: Schema.object({ table: Schema.string().required(), limit: Schema.natural().default(10) }),
      traits: { effect: 'write' },
      run: (args) => `purged ${args.limit}`,
    }))
    engine.addAsker((request, context) => {
      context.respond({ decision: 'allow', by: 'u1', via: 'text', value: { ...request.input!.initial as object, limit: 3 } })
    })
    await registry.toolset({ session: caller }).execute([{ id: 'c1', name: 'purge', arguments: { table: 'logs', limit: 40 } }])
    const [record] = await audit.query()
    expect(record.args).toEqual({ table: 'logs', limit: 3 })
    expect(record.ask).toMatchObject({ ended: 'answer', decision: 'allow', via: 'text', edited: true })
    expect(record.outcome).toBe('ok')
    await audit.stop()
  })
})
