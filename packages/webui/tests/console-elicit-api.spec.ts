import { defineTool, type Elicitation, PermissionEngine, type ToolResult, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import '../../../test-support/log-guard'
import { ConsoleApi, ConsoleAsker, ConsoleError, ConsoleLog } from '../src/console'
import { until } from './console-app'

/**
 * The console's API over a real engine and registry: `signup` (read: never asked about)
 * asks for an account's details with `call.elicit`; `ping` (exec: asked) is a plain approval.
 */
function setup() {
  const engine = new PermissionEngine()
  const registry = new ToolRegistry()
  registry.permissions = engine
  const answers: Elicitation[] = []
  registry.define(defineTool({
    name: 'signup',
    description: 'Create an account',
    args: Schema.object({}),
    traits: { effect: 'read' },
    async run(_args, call) {
      const answer = await call.elicit(Schema.object({
        username: Schema.string().required().description('Account name'),
        age: Schema.natural().max(150),
        plan: Schema.union(['free', 'pro']).default('free'),
      }), 'Which account should I create?')
      answers.push(answer)
      return answer.action === 'accept' ? `created ${JSON.stringify(answer.value)}` : answer.action
    },
  }))
  registry.define(defineTool({
    name: 'register',
    description: 'A form as an imported MCP server sends it',
    args: Schema.object({}),
    traits: { effect: 'read' },
    async run(_args, call) {
      const answer = await call.elicit({ type: 'object', properties: { email: { type: 'string', format: 'email' }, seats: { type: 'integer', default: 1 } }, required: ['email'] }, 'Your e-mail?')
      return JSON.stringify(answer)
    },
  }))
  registry.define(defineTool({ name: 'ping', description: 'Ping', args: Schema.object({}), traits: { effect: 'exec' }, run: () => 'pong' }))
  const asker = new ConsoleAsker({ id: 'webui', platform: 'webui', authority: 4 })
  engine.addAsker(asker.asker)
  const api = new ConsoleApi({ registry, asker, log: new ConsoleLog(10), changeLogs: () => [], authority: 4 })
  const call = (name: string): Promise<ToolResult> =>
    registry.toolset({ session: { id: 'chan-1', userId: 'alice', platform: 'webui', authority: 4 } })
      .execute([{ id: `c-${name}`, name, arguments: {} }]).then(([result]) => result)
  const pending = async () => (await until(async () => await api.handle('approvals.list', {}) as any[], 'the question'))[0]
  /** The ConsoleError an answer is refused with. */
  const refusal = async (payload: object) => {
    const error = await api.handle('approvals.answer', payload).then(() => undefined, (e) => e)
    expect(ConsoleError.is(error)).toBe(true)
    return error as ConsoleError
  }
  return { api, call, answers, pending, refusal }
}

describe('a tool\'s form (call.elicit) through the console API', () => {
  it('is listed as a form: kind, message, the form\'s schema and its defaults', async () => {
    const { call, pending, api } = setup()
    const result = call('signup')
    const question = await pending()
    expect(question).toMatchObject({ kind: 'elicitation', tool: 'signup', reason: 'Which account should I create?', input: { message: 'Which account should I create?' } })
    expect(new Schema(question.input.schema)({ username: 'x' })).toEqual({ username: 'x', plan: 'free' })
    await api.handle('approvals.answer', { id: question.id, decision: 'deny', dismissed: true })
    await result
  })

  it('lists a form given as MCP\'s requestedSchema with a schema the page\'s form renders', async () => {
    const { call, pending, api } = setup()
    const result = call('register')
    const question = await pending()
    expect(question.input.initial).toBeUndefined()
    const schema = new Schema(question.input.schema)
    expect(schema({ email: 'a@example.com' })).toEqual({ email: 'a@example.com', seats: 1 })
    expect(() => schema({})).toThrow()
    await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { email: 'a@example.com' } })
    expect(JSON.parse((await result).content)).toMatchObject({ action: 'accept', value: { email: 'a@example.com', seats: 1 } })
  })

  it('fills it: the tool gets the values with the defaults, answered by the operator', async () => {
    const { call, pending, api, answers } = setup()
    const result = call('signup')
    const question = await pending()
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { username: 'bob', age: 30 } })).toEqual({ status: 'accepted' })
    expect((await result).content).toBe('created {"username":"bob","age":30,"plan":"free"}')
    expect(answers).toEqual([{ action: 'accept', value: { username: 'bob', age: 30, plan: 'free' }, by: { id: 'webui', platform: 'webui', authority: 4 } }])
  })

  it('refuses values the form does not take, saying why, and the form keeps waiting', async () => {
    const { call, pending, api, refusal, answers } = setup()
    const result = call('signup')
    const question = await pending()
    const refused = await refusal({ id: question.id, decision: 'allow', value: { username: 'bob', age: 500 } })
    expect(refused.code).toBe('INVALID_FORM')
    expect(refused.message).toContain('$.age: expected a number <= 150, got 500')
    expect((await refusal({ id: question.id, decision: 'allow' })).code).toBe('INVALID_FORM')
    expect((await api.handle('approvals.list', {}) as any[]).map((entry) => entry.id)).toEqual([question.id])
    expect(answers).toEqual([])
    expect(await api.handle('approvals.answer', { id: question.id, decision: 'allow', value: { username: 'bob' } })).toEqual({ status: 'accepted' })
    expect((await result).status).toBe('ok')
  })

  it('deny declines it; deny with dismissed cancels it: the tool tells them apart', async () => {
    const { call, pending, api, answers } = setup()
    let result = call('signup')
    await api.handle('approvals.answer', { id: (await pending()).id, decision: 'deny' })
    expect((await result).content).toBe('decline')
    result = call('signup')
    await api.handle('approvals.answer', { id: (await pending()).id, decision: 'deny', dismissed: true })
    expect((await result).content).toBe('cancel')
    expect(answers).toEqual([
      { action: 'decline', reason: expect.any(String), by: { id: 'webui', platform: 'webui', authority: 4 } },
      { action: 'cancel', reason: expect.any(String) },
    ])
  })

  it('refuses `dismissed` on a permission question, and an answer to a form that has ended', async () => {
    const { call, pending, api, refusal } = setup()
    const ping = call('ping')
    const question = await pending()
    expect((await refusal({ id: question.id, decision: 'deny', dismissed: true })).code).toBe('INVALID_PAYLOAD')
    await api.handle('approvals.answer', { id: question.id, decision: 'allow' })
    expect((await ping).content).toBe('pong')
    const form = call('signup')
    const asked = await pending()
    await api.handle('approvals.answer', { id: asked.id, decision: 'deny', dismissed: true })
    await form
    expect((await refusal({ id: asked.id, decision: 'allow', value: { username: 'late' } })).code).toBe('NOT_FOUND')
  })
})
