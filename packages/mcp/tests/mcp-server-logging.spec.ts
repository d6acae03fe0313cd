import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { EmptyResultSchema, type LoggingMessageNotification, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type MemoryHarness, startMemoryHarness } from './memory-harness'

type Message = LoggingMessageNotification['params']

describe('the MCP server\'s logging: call.log and Dogu\'s call events as notifications/message', () => {
  let harness: MemoryHarness

  beforeEach(async () => {
    harness = await startMemoryHarness((ctx) => {
      ctx.tools.define({
        name: 'chatty',
        description: 'Logs one line at each of four levels',
        traits: { effect: 'read' },
        run: (_, call) => {
          call.log('debug', 'looking closely')
          call.log('info', { step: 1, of: 2 })
          call.log('warning', 'the cache is cold')
          call.log('error', 'one mirror failed')
          return 'done'
        },
      })
      ctx.tools.define({
        name: 'broken',
        description: 'Always fails',
        traits: { effect: 'read' },
        run: () => { throw new Error('the disk is on fire') },
      })
    })
  })
  afterEach(() => harness.close())

  async function listening(name?: string): Promise<{ client: Client; messages: Message[] }> {
    const client = await harness.connect({ name })
    const messages: Message[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => { messages.push(notification.params) })
    return { client, messages }
  }

  it('declares the logging capability', async () => {
    const { client } = await listening()
    expect(client.getServerCapabilities()?.logging).toEqual({})
  })

  it('without logging/setLevel, a tool\'s lines from info up reach the client, logger named after the tool; no call events', async () => {
    const { client, messages } = await listening()
    expect(await client.callTool({ name: 'chatty', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'done' }] })
    expect(messages).toEqual([
      { level: 'info', logger: 'chatty', data: { step: 1, of: 2 } },
      { level: 'warning', logger: 'chatty', data: 'the cache is cold' },
      { level: 'error', logger: 'chatty', data: 'one mirror failed' },
    ])
  })

  it('logging/setLevel sets the lowest level sent, and with a level set Dogu\'s call events come too', async () => {
    const { client, messages } = await listening()
    await client.setLoggingLevel('warning')
    await client.callTool({ name: 'chatty', arguments: {} })
    expect(messages.map(({ level, logger }) => `${level} ${logger}`)).toEqual(['warning chatty', 'error chatty'])

    messages.length = 0
    await client.setLoggingLevel('debug')
    await client.callTool({ name: 'chatty', arguments: {} })
    expect(messages.map(({ level, logger }) => `${level} ${logger}`)).toEqual(['debug dogu', 'debug chatty', 'info chatty', 'warning chatty', 'error chatty', 'info dogu'])
    expect(messages[0].data).toMatchObject({ event: 'call-start', tool: 'chatty', message: 'chatty: started' })
    expect(messages[5].data).toMatchObject({ event: 'call-end', tool: 'chatty', status: 'ok', message: expect.stringMatching(/^chatty: ok in \d+ ms$/) })
  })

  it('a failed call\'s end is a warning', async () => {
    const { client, messages } = await listening()
    await client.setLoggingLevel('info')
    expect(await client.callTool({ name: 'broken', arguments: {} })).toMatchObject({ isError: true })
    expect(messages).toEqual([{
      level: 'warning',
      logger: 'dogu',
      data: expect.objectContaining({ event: 'call-end', tool: 'broken', status: 'error', code: 'tool_error', message: expect.stringMatching(/^broken: error \(tool_error\) in \d+ ms$/) }),
    }])
  })

  it('an unknown level is refused as invalid params', async () => {
    const { client } = await listening()
    await expect(client.request({ method: 'logging/setLevel', params: { level: 'loud' as 'info' } }, EmptyResultSchema)).rejects.toMatchObject({
      code: -32602,
      message: 'MCP error -32602: logging/setLevel: level must be one of debug, info, notice, warning, error, critical, alert, emergency, got "loud"',
    })
  })

  it('a call\'s lines go only to the client that made it, at that client\'s level', async () => {
    const a = await listening('a')
    const b = await listening('b')
    await b.client.setLoggingLevel('debug')
    await a.client.callTool({ name: 'chatty', arguments: {} })
    expect(a.messages).toHaveLength(3)
    // b asked for everything, but none of the call was b's.
    expect(b.messages).toEqual([])
  })

  it('a line of a call from outside MCP reaches no client', async () => {
    const { client, messages } = await listening()
    await client.setLoggingLevel('debug')
    await harness.ctx.tools.execute([{ id: 'chat-call', name: 'chatty', arguments: {} }], { session: { id: 'chat-1' } })
    await client.ping()
    expect(messages).toEqual([])
  })
})
