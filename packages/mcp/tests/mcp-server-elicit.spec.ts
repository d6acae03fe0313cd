import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type MemoryHarness, startMemoryHarness } from './memory-harness'

const FORM = Schema.object({
  username: Schema.string().required().description('Your name here'),
  plan: Schema.union(['free', 'pro']).default('free').description('Plan'),
})

describe('the MCP server sends a tool\'s call.elicit to the client whose call made it', () => {
  let harness: MemoryHarness

  beforeEach(async () => {
    harness = await startMemoryHarness((ctx) => {
      ctx.tools.define({
        name: 'signup',
        description: 'Asks for a name and a plan',
        args: Schema.object({ timeout: Schema.natural().default(10_000) }),
        traits: { effect: 'read' },
        run: async ({ timeout }: { timeout: number }, call) => {
          const answer = await call.elicit(FORM, 'Who is signing up?', { timeout })
          return { text: answer.action, data: answer }
        },
      })
    })
  })
  afterEach(() => harness.close())

  async function signup(answer: (params: { message: string; requestedSchema: unknown }) => ElicitResult, timeout?: number) {
    const asked: { message: string; requestedSchema: unknown }[] = []
    const client = await harness.connect({ elicit: (params) => {
      asked.push(params)
      return answer(params)
    } })
    const result = await client.callTool({ name: 'signup', arguments: timeout ? { timeout } : {} })
    return { asked, result, data: result.structuredContent as Record<string, unknown> }
  }

  it('as its form: the tool\'s message and requestedSchema, nothing of the approval form', async () => {
    const { asked } = await signup(() => ({ action: 'accept', content: { username: 'ada' } }))
    expect(asked).toEqual([{
      mode: 'form',
      message: 'Who is signing up?',
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: 'Your name here' },
          plan: { type: 'string', enum: ['free', 'pro'], default: 'free', description: 'Plan' },
        },
        required: ['username'],
      },
    }])
  })

  it('accept with content: the tool gets the values, validated with the form\'s defaults, answered by the connection\'s user', async () => {
    const { data } = await signup(() => ({ action: 'accept', content: { username: 'ada' } }))
    expect(data).toEqual({ action: 'accept', value: { username: 'ada', plan: 'free' }, by: { id: 'stdio', platform: 'mcp', authority: 1 } })
  })

  it('decline is the tool\'s decline, cancel its cancel', async () => {
    expect((await signup(() => ({ action: 'decline' }))).data).toMatchObject({ action: 'decline', by: { id: 'stdio' } })
    const cancelled = (await signup(() => ({ action: 'cancel' }))).data
    expect(cancelled).toMatchObject({ action: 'cancel' })
    expect(cancelled.by).toBeUndefined()
  })

  it('content the form refuses is not an answer: the client is asked once, and the question runs out as cancel', async () => {
    const { asked, data } = await signup(() => ({ action: 'accept', content: { plan: 'gold' } }), 300)
    expect(asked).toHaveLength(1)
    expect(data).toMatchObject({ action: 'cancel' })
  })

  it('a client that declared no elicitation is not asked: with nobody else to ask, the tool reads cancel', async () => {
    const client = await harness.connect()
    const result = await client.callTool({ name: 'signup', arguments: {} })
    expect(result.structuredContent).toMatchObject({ action: 'cancel' })
  })
})
