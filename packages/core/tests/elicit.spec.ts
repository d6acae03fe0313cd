import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, type Elicitation, type ElicitationJsonSchema, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionRequest, type RespondStatus } from '../src/permissions'

const caller: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

interface Waiting {
  request: PermissionRequest
  respond(answer: AskAnswer): RespondStatus
}

const contact = Schema.object({
  username: Schema.string().required().description('Your user name'),
  email: Schema.string().role('email').required(),
  plan: Schema.union([Schema.const('free').description('Free'), Schema.const('pro').description('Pro')]).default('free'),
  seats: Schema.natural().min(1).max(50).default(1),
  newsletter: Schema.boolean().default(false),
})

/** `signup` (a read tool: runs without approval) asks for contact details through `call.elicit`. */
function setup(form: Schema | ElicitationJsonSchema = contact, options: { askers?: boolean; timeout?: number; signal?: AbortSignal } = {}) {
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ onDecision: (event) => decisions.push(event), askTimeout: options.timeout })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const answers: Elicitation[] = []
  registry.define(defineTool({
    name: 'signup',
    description: 'Sign the user up',
    traits: { effect: 'read' },
    run: async (_args, call) => {
      const answer = await call.elicit(form, 'Who should the account be for?', options.signal ? { signal: options.signal } : undefined)
      answers.push(answer)
      return answer.action === 'accept' ? `signed up ${JSON.stringify(answer.value)}` : `not signed up (${answer.action})`
    },
  }))
  const waiting: Waiting[] = []
  let notify: (() => void) | undefined
  if (options.askers !== false) {
    engine.addAsker((request, context) => {
      waiting.push({ request, respond: context.respond })
      notify?.()
    })
  }
  const asked = async (): Promise<Waiting> => {
    while (!waiting.length) await new Promise<void>((resolve) => { notify = resolve })
    return waiting.shift()!
  }
  const call = (signal?: AbortSignal): Promise<ToolResult> =>
    registry.toolset({ session: caller }).execute([{ id: 'c1', name: 'signup', arguments: {} }], { signal }).then(([result]) => result)
  return { engine, registry, answers, decisions, asked, call }
}

describe('call.elicit', () => {
  it('puts the form to the askers as an elicitation, not an approval, and returns the validated values with defaults', async () => {
    const { call, asked, answers, decisions } = setup()
    const result = call()
    const { request, respond } = await asked()
    expect(request.kind).toBe('elicitation')
    expect(request.reason).toBe('Who should the account be for?')
    expect(request.input!.message).toBe('Who should the account be for?')
    expect(request.confirm).toBe('always')
    expect(request.input!.requestedSchema).toEqual({
      type: 'object',
      properties: {
        username: { type: 'string', description: 'Your user name' },
        email: { type: 'string', format: 'email' },
        plan: { type: 'string', oneOf: [{ const: 'free', title: 'Free' }, { const: 'pro', title: 'Pro' }], default: 'free' },
        seats: { type: 'integer', minimum: 1, maximum: 50, default: 1 },
        newsletter: { type: 'boolean', default: false },
      },
      required: ['username', 'email'],
    })
    expect(respond({ decision: 'allow', by: 'u1', via: 'text', value: { username: 'ada', email: 'ada@example.com' } })).toBe('accepted')
    expect((await result).content).toBe('signed up {"username":"ada","email":"ada@example.com","plan":"free","seats":1,"newsletter":false}')
    expect(answers[0]).toMatchObject({ action: 'accept', by: { id: 'u1' } })
    // A form is not a permission decision: nothing is audited or remembered for it.
    expect(decisions.filter((event) => event.phase === 'approve')).toEqual([])
  })

  it('refuses an answer that does not fit the form, says why through check(), and keeps waiting', async () => {
    const { call, asked } = setup()
    const result = call()
    const { request, respond } = await asked()
    const bad = { username: 'ada', email: 'ada@example.com', seats: 500 }
    expect(request.input!.check(bad)).toMatch(/seats/)
    expect(respond({ decision: 'allow', by: 'u1', value: bad })).toBe('invalid')
    expect(respond({ decision: 'allow', by: 'u1', value: { username: 'ada' } })).toBe('invalid')
    expect(respond({ decision: 'allow', by: 'u1', value: { ...bad, seats: 3 } })).toBe('accepted')
    expect((await result).content).toContain('"seats":3')
  })

  it('tells a no (decline) from a dismissal (cancel)', async () => {
    const declined = setup()
    const first = declined.call()
    ;(await declined.asked()).respond({ decision: 'deny', by: 'u1', via: 'button' })
    expect((await first).content).toBe('not signed up (decline)')
    expect(declined.answers[0]).toMatchObject({ action: 'decline', by: { id: 'u1' } })

    const dismissed = setup()
    const second = dismissed.call()
    ;(await dismissed.asked()).respond({ decision: 'deny', dismissed: true, by: 'u1', via: 'console' })
    expect((await second).content).toBe('not signed up (cancel)')
  })

  it('ignores an answer from someone who may not answer for the caller', async () => {
    const { call, asked } = setup()
    const result = call()
    const { respond } = await asked()
    expect(respond({ decision: 'allow', by: { id: 'mallory', platform: 'discord', authority: 1 }, value: { username: 'm', email: 'm@x.io' } })).toBe('not-allowed')
    expect(respond({ decision: 'allow', by: 'u1', value: { username: 'ada', email: 'a@x.io' } })).toBe('accepted')
    expect((await result).content).toContain('"username":"ada"')
  })

  it('ends as cancel when nobody can be asked, when nobody answers in time, and when the call is cancelled', async () => {
    const nobody = setup(contact, { askers: false })
    expect((await nobody.call()).content).toBe('not signed up (cancel)')
    expect(nobody.answers[0]).toEqual({ action: 'cancel', reason: 'no asker is registered to ask anyone' })

    const late = setup(contact, { timeout: 20 })
    expect((await late.call()).content).toBe('not signed up (cancel)')
    expect(late.answers[0]).toMatchObject({ action: 'cancel', reason: expect.stringMatching(/timed out/) })

    const cancelled = setup()
    const controller = new AbortController()
    const result = cancelled.call(controller.signal)
    const { respond } = await cancelled.asked()
    controller.abort()
    expect((await result).status).toBe('cancelled')
    expect(respond({ decision: 'allow', by: 'u1', value: { username: 'ada', email: 'a@x.io' } })).toBe('closed')
  })

  it('takes an MCP requestedSchema as JSON, validates answers with it and keeps the JSON verbatim for MCP clients', async () => {
    const json: ElicitationJsonSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        status: { type: 'string', enum: ['active', 'inactive'], enumNames: ['Active', 'Inactive'], default: 'active' },
      },
    }
    const { call, asked } = setup(json)
    const result = call()
    const { request, respond } = await asked()
    expect(request.input!.requestedSchema).toEqual(json)
    expect(request.input!.initial).toEqual({ name: 'John Doe', age: 30, status: 'active' })
    expect(respond({ decision: 'allow', by: 'u1', value: { age: 'old' } })).toBe('invalid')
    expect(respond({ decision: 'allow', by: 'u1', value: {} })).toBe('accepted')
    expect((await result).content).toBe('signed up {"name":"John Doe","age":30,"status":"active"}')
  })

  it('fills a required field left out with its default (SEP-1034): an MCP approval form answered with a plain allow', async () => {
    const json: ElicitationJsonSchema = { type: 'object', properties: { decision: { type: 'string', enum: ['once', 'deny'], default: 'once' } }, required: ['decision'] }
    const { call, asked } = setup(json)
    const result = call()
    const { request, respond } = await asked()
    expect(request.input!.initial).toEqual({ decision: 'once' })
    expect(respond({ decision: 'allow', by: 'u1' })).toBe('accepted')
    expect((await result).content).toBe('signed up {"decision":"once"}')
  })

  it('is withdrawn by its own signal (an imported server gave up asking): cancel, and the askers\' question closes', async () => {
    const withdraw = new AbortController()
    const { call, asked, answers } = setup(contact, { signal: withdraw.signal })
    const result = call()
    const { respond } = await asked()
    withdraw.abort()
    expect((await result).content).toBe('not signed up (cancel)')
    expect(answers[0]).toEqual({ action: 'cancel', reason: 'the question was withdrawn' })
    expect(respond({ decision: 'allow', by: 'u1', value: { username: 'ada', email: 'a@x.io' } })).toBe('closed')
  })

  it('refuses a form a person could not fill, naming the field, as the tool author\'s mistake', async () => {
    const nested = setup(Schema.object({ address: Schema.object({ city: Schema.string() }) }))
    const result = await nested.call()
    expect(result.status).toBe('error')
    expect(result.content).toMatch(/call\.elicit: field address: a form field must be/)
    const notObject = setup({ type: 'string' } as unknown as ElicitationJsonSchema)
    expect((await notObject.call()).content).toMatch(/the form must be a schemastery Schema.object/)
  })
})
