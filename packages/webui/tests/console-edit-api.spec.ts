import { defineTool, PermissionEngine, type PermissionEngineOptions, type ToolResult, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import '../../../test-support/log-guard'
import { ConsoleApi, ConsoleAsker, ConsoleError, ConsoleLog } from '../src/console'
import { until } from './console-app'

const TOKEN = 'tok-edit-5a6b7c'

/**
 * The console's API over a real engine and registry: `tail` (write: asked) reads `limit`
 * lines of `path` with a secret `token`; `ping` has no arguments, so it offers no edit.
 */
function setup(options: PermissionEngineOptions = {}) {
  const engine = new PermissionEngine(options)
  const registry = new ToolRegistry()
  registry.permissions = engine
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'tail',
    description: 'The last lines of a file',
    args: Schema.object({
      path: Schema.string().required(),
      limit: Schema.natural().min(1).max(100).default(10),
      token: Schema.string().role('secret'),
    }),
    traits: { effect: 'write' },
    permission: (args) => ({ name: 'fs.tail', target: args.path }),
    run: (args) => {
      runs.push(args)
      return `${args.limit} lines of ${args.path}`
    },
  }))
  registry.define(defineTool({ name: 'ping', description: 'Ping', args: Schema.object({}), traits: { effect: 'exec' }, run: () => 'pong' }))
  const asker = new ConsoleAsker({ id: 'webui', platform: 'webui', authority: 4 })
  engine.addAsker(asker.asker)
  const api = new ConsoleApi({ registry, asker, log: new ConsoleLog(10), changeLogs: () => [], authority: 4 })
  const call = (name: string, args: object): Promise<ToolResult> =>
    registry.toolset({ session: { id: 'chan-1', userId: 'alice', platform: 'webui', authority: 4 } })
      .execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }]).then(([result]) => result)
  const pending = async () => (await until(async () => await api.handle('approvals.list', {}) as any[], 'the question'))[0]
  /** The ConsoleError an answer is refused with. */
  const refusal = async (payload: object) => {
    const error = await api.handle('approvals.answer', payload).then(() => undefined, (e) => e)
    expect(ConsoleError.is(error)).toBe(true)
    return error as ConsoleError
  }
  return { api, engine, registry, call, runs, pending, refusal }
}

describe('a repaired call, through the console API', () => {
  it('lists the repaired arguments with the repair\'s steps, so the page marks them', async () => {
    const { pending, api, runs, registry } = setup()
    const result = registry.toolset({ session: { id: 'chan-1', userId: 'alice', platform: 'webui', authority: 4 } })
      .execute([{ id: 'c-tail', name: 'tail', arguments: `{path: '/var/log/app.log', limit: 5,}` }]).then(([r]) => r)
    const question = await pending()
    expect(question.args).toEqual({ path: '/var/log/app.log', limit: 5 })
    expect(question.repaired).toEqual({ from: `{path: '/var/log/app.log', limit: 5,}`, steps: ['quotes', 'unquoted-keys', 'trailing-comma'] })
    await api.handle('approvals.answer', { id: question.id, decision: 'allow' })
    expect(await result).toMatchObject({ status: 'ok', repaired: { steps: ['quotes', 'unquoted-keys', 'trailing-comma'] } })
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 5 }])
  })
})

describe('a repaired call with a secret field, through the console API', () => {
  it('lists the question and logs the call with the secret masked in the repaired text', async () => {
    const engine = new PermissionEngine()
    const log = new ConsoleLog(10)
    const registry = new ToolRegistry({
      emit: (name, ...args: any[]) => {
        if (name === 'tools/call-start') log.callStart(args[0])
        if (name === 'tools/call-end') log.callEnd(args[0], args[1])
      },
    })
    registry.permissions = engine
    registry.define(defineTool({
      name: 'tail',
      description: 'The last lines of a file',
      args: Schema.object({ path: Schema.string().required(), token: Schema.string().role('secret') }),
      traits: { effect: 'write' },
      run: (args) => `tail of ${args.path}`,
    }))
    const asker = new ConsoleAsker({ id: 'webui', platform: 'webui', authority: 4 })
    engine.addAsker(asker.asker)
    const api = new ConsoleApi({ registry, asker, log, changeLogs: () => [], authority: 4 })
    // The attack: the question's and the log's `repaired.from` held the text as sent, token included.
    const result = registry.toolset({ session: { id: 'chan-1', userId: 'alice', platform: 'webui', authority: 4 } })
      .execute([{ id: 'c-tail', name: 'tail', arguments: `{path: '/var/log/app.log', token: '${TOKEN}',}` }]).then(([r]) => r)
    const [question] = await until(async () => await api.handle('approvals.list', {}) as any[], 'the question')
    expect(question.repaired).toEqual({ from: `{path: '/var/log/app.log', token: '••••',}`, steps: ['quotes', 'unquoted-keys', 'trailing-comma'] })
    await api.handle('approvals.answer', { id: question.id, decision: 'allow' })
    expect((await result).status).toBe('ok')
    const entries = await api.handle('log.list', {})
    expect(JSON.stringify(entries)).toContain('••••')
    expect(JSON.stringify([question, entries, await result])).not.toContain(TOKEN)
  })
})

describe('editing a call before approving it, through the console API', () => {
  it('lists what may be edited: the schema JSON, the arguments with secrets masked, no check function', async () => {
    const { call, pending, api } = setup()
    const result = call('tail', { path: '/var/log/app.log', limit: 50, token: TOKEN })
    const question = await pending()
    expect(question.input.initial).toEqual({ path: '/var/log/app.log', limit: 50, token: '••••' })
    expect(Object.keys(question.input)).toEqual(expect.not.arrayContaining(['check']))
    const form = new Schema(question.input.schema)
    expect(form({ path: 'x' })).toEqual({ path: 'x', limit: 10 })
    expect(() => form({ path: 'x', limit: 500 })).toThrow()
    // Through JSON, as both transports send it: nothing is lost, no secret shows.
    const wire = JSON.parse(JSON.stringify(question))
    expect(wire.input).toEqual({ schema: question.input.schema, ...(question.input.message ? { message: question.input.message } : {}), initial: question.input.initial })
    expect(JSON.stringify(wire)).not.toContain(TOKEN)
    await api.handle('approvals.answer', { id: question.id, decision: 'deny' })
    expect((await result).status).toBe('denied')
  })

  it('runs the edited call: the tool gets the edited limit and the masked secret\'s value, the model reads what changed', async () => {
    const { call, pending, api, runs } = setup()
    const result = call('tail', { path: '/var/log/app.log', limit: 50, token: TOKEN })
    const question = await pending()
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { ...question.input.initial, limit: 5 } })).toEqual({ status: 'accepted' })
    const done = await result
    expect(done.status).toBe('ok')
    expect(done.content).toMatch(/^A person changed your arguments/)
    expect(done.content).toContain('$.limit: 50 → 5')
    expect(done.content).toContain('5 lines of /var/log/app.log')
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 5, token: TOKEN }])
  })

  it('remembers a session answer for the edited call', async () => {
    const { call, pending, api, engine } = setup()
    const result = call('tail', { path: '/etc/passwd', limit: 5 })
    const question = await pending()
    await api.handle('approvals.answer', { id: question.id, decision: 'allow', scope: 'session', value: { ...question.input.initial, path: '/tmp/app.log' } })
    expect((await result).content).toContain('5 lines of /tmp/app.log')
    expect(engine.grants().map((grant) => [grant.permission, grant.target, grant.scope])).toEqual([['fs.tail', '/tmp/app.log', 'session']])
  })

  it('refuses an edit that fails validation with the check\'s message, and the question keeps waiting', async () => {
    const { call, pending, api, refusal, runs } = setup()
    const result = call('tail', { path: '/var/log/app.log', limit: 50 })
    const question = await pending()
    const bad = await refusal({ id: question.id, decision: 'allow', value: { ...question.input.initial, limit: 500 } })
    expect(bad.code).toBe('INVALID_EDIT')
    expect(bad.message).toBe('Invalid arguments:\n- $.limit: expected a number <= 100, got 500')
    const notObject = await refusal({ id: question.id, decision: 'allow', value: [1, 2] })
    expect(notObject.message).toBe('the edited arguments must be a JSON object')
    expect(runs).toEqual([])
    expect((await api.handle('approvals.list', {}) as any[]).map((entry) => entry.id)).toEqual([question.id])
    // Fixed, it is accepted.
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { ...question.input.initial, limit: 7 } })).toEqual({ status: 'accepted' })
    expect((await result).content).toContain('7 lines')
  })

  it('refuses an "Edit as JSON" with a field the tool does not have, naming the one meant; the call does not run', async () => {
    const { call, pending, api, refusal, runs } = setup()
    const result = call('tail', { path: '/var/log/app.log', limit: 50 })
    const question = await pending()
    // The attack: `Limit` passes schemastery, and the call would run with `limit: 50`.
    const typo = await refusal({ id: question.id, decision: 'allow', value: { ...question.input.initial, Limit: 1 } })
    expect(typo.code).toBe('INVALID_EDIT')
    expect(typo.message).toBe('the edited arguments set `Limit` at $.Limit, which is not a field of this tool\'s arguments — did you mean `limit`? The fields there are: `path`, `limit`, `token`.')
    expect(runs).toEqual([])
    await api.handle('approvals.answer', { id: question.id, decision: 'deny' })
    expect((await result).status).toBe('denied')
    expect(runs).toEqual([])
  })

  it('shows an edit as it will run before it is approved: defaults filled in, secrets masked (`approvals.resolve`)', async () => {
    const { call, pending, api, refusal, runs } = setup()
    const result = call('tail', { path: '/var/log/app.log', limit: 50, token: TOKEN })
    const question = await pending()
    // The person clears `limit`; the call runs with the schema's default, and the form says so.
    expect(await api.handle('approvals.resolve', { id: question.id, value: { path: '/tmp/x', token: '••••' } })).toEqual({
      args: { path: '/tmp/x', limit: 10, token: '••••' },
      changes: ['$.path: "/var/log/app.log" → "/tmp/x"', '$.limit: 50 → 10'],
    })
    const typo = await api.handle('approvals.resolve', { id: question.id, value: { pth: '/tmp/x' } }).then(() => undefined, (e) => e)
    expect(typo).toMatchObject({ code: 'INVALID_EDIT', message: expect.stringContaining('did you mean `path`?') })
    expect(runs).toEqual([])
    await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { path: '/tmp/x', token: '••••' } })
    expect((await result).content).toContain('10 lines of /tmp/x')
    expect(runs).toEqual([{ path: '/tmp/x', limit: 10, token: TOKEN }])
    expect((await refusal({ id: question.id, decision: 'allow', value: {} })).code).toBe('NOT_FOUND')
  })

  it('refuses a value for a question that offers no edit, and a value with a denial', async () => {
    const { call, pending, api, refusal } = setup()
    const result = call('ping', {})
    const question = await pending()
    expect(question.input).toBeUndefined()
    const refused = await refusal({ id: question.id, decision: 'allow', value: { anything: 1 } })
    expect(refused.code).toBe('INVALID_EDIT')
    expect(refused.message).toBe(`question ${question.id} offers no edit: approve or deny the call as it is`)
    expect((await refusal({ id: question.id, decision: 'deny', value: {} })).code).toBe('INVALID_EDIT')
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow' })).toEqual({ status: 'accepted' })
    expect((await result).content).toBe('pong')
    // Once answered, an edit finds it closed.
    expect((await refusal({ id: question.id, decision: 'allow', value: {} })).code).toBe('NOT_FOUND')
  })

  it('refuses an edit that moves the call under approvers the operator is not among', async () => {
    const { call, pending, api, refusal, runs } = setup({
      rules: [{ permission: 'fs.tail', target: '/secrets', decision: 'ask', approvers: { users: ['admin'], caller: false } }],
    })
    const result = call('tail', { path: '/var/log/app.log', limit: 50 })
    const question = await pending()
    const refused = await refusal({ id: question.id, decision: 'allow', value: { ...question.input.initial, path: '/secrets' } })
    expect(refused.code).toBe('NOT_ALLOWED')
    expect(refused.message).toBe('you may not approve this edited call: it falls under approvers you are not among')
    expect(runs).toEqual([])
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { ...question.input.initial, limit: 2 } })).toEqual({ status: 'accepted' })
    expect((await result).content).toContain('2 lines of /var/log/app.log')
  })

  it('gives the engine a console answer', async () => {
    const decisions: any[] = []
    const { call, pending, api } = setup({ onDecision: (event) => decisions.push(event) })
    const result = call('tail', { path: 'a', limit: 3 })
    const question = await pending()
    await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { ...question.input.initial, limit: 4 } })
    await result
    expect(decisions.find((event) => event.phase === 'approve').source).toMatchObject({ kind: 'answer', via: 'console', edited: true })
  })
})
