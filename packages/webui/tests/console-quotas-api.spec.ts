import { defineTool, type Session, ToolRegistry, type ToolRegistryOptions } from '@dogu/core'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { ConsoleApi, type SessionQuotas } from '../src/console-api'
import { ConsoleAsker } from '../src/console-asker'
import { ConsoleError } from '../src/console-error'
import { ConsoleLog } from '../src/console-log'
import { startConsoleApp } from './console-app'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** A host-free console over a registry with `echo` and the given quotas and caps. */
function api(options: ToolRegistryOptions) {
  const registry = new ToolRegistry(options)
  registry.define(defineTool({ name: 'echo', description: 'Repeat a text', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'read' }, run: ({ text }) => text }))
  registry.define(defineTool({ name: 'other', description: 'Not counted by the echo quota', args: Schema.object({}), traits: { effect: 'read' }, run: () => 'done' }))
  const console = new ConsoleApi({
    registry,
    changeLogs: () => [],
    asker: new ConsoleAsker({ id: 'test', platform: 'test', authority: 4 }),
    log: new ConsoleLog(10),
    authority: 4,
  })
  return { registry, console }
}

const quotas = [
  { name: 'echo per user', tools: 'echo', per: 'user' as const, max: 2, window: '1h' },
  { name: 'guild daily', per: 'guild' as const, max: 5, window: '1d' },
]

/** The refusal `promise` ends with. */
async function refusal(promise: Promise<unknown>): Promise<ConsoleError> {
  const error = await promise.then(() => undefined, (error) => error)
  if (!ConsoleError.is(error)) throw new Error(`expected a ConsoleError, got ${error}`)
  return error
}

describe('quotas.list', () => {
  it('is a read method: GET may call it', () => {
    expect(ConsoleApi.isRead('quotas.list')).toBe(true)
    expect(ConsoleApi.methods()).toContain('quotas.list')
  })

  it('refuses a bad payload with INVALID_PAYLOAD naming the field', async () => {
    const { console } = api({ quotas })
    const cases: [unknown, string][] = [
      [{}, '$.sessionId'],
      [{ sessionId: '' }, '$.sessionId'],
      [{ sessionId: 's1', userId: 7 }, '$.userId'],
      [{ sessionId: 's1', channelId: ['c'] }, '$.channelId'],
      [{ sessionId: 's1', guildId: '' }, '$.guildId'],
      [{ sessionId: 's1', platform: 'x'.repeat(201) }, '$.platform'],
    ]
    for (const [payload, field] of cases) {
      const error = await refusal(console.handle('quotas.list', payload))
      expect(error.code, JSON.stringify(payload)).toBe('INVALID_PAYLOAD')
      expect(error.message, JSON.stringify(payload)).toMatch(new RegExp(`^quotas\\.list: \\${field}\\b`))
    }
  })

  it('shows a session over its quota with remaining 0, after the console\'s own calls used it up', async () => {
    const { console } = api({ quotas, maxRunning: { session: 1, global: 4 } })
    const call = (userId: string) => console.handle('call', { tool: 'echo', args: { text: 'hi' }, sessionId: 's1', userId }) as Promise<{ result: { status: string; retryAfterMs?: number } }>
    expect((await call('u1')).result.status).toBe('ok')
    expect((await call('u1')).result.status).toBe('ok')
    const third = (await call('u1')).result
    expect(third.status).toBe('rate_limited')
    expect(third.retryAfterMs).toBeGreaterThan(0)

    const before = Date.now()
    const seen = await console.handle('quotas.list', { sessionId: 's1', userId: 'u1' }) as SessionQuotas
    expect(seen.session).toEqual({ id: 's1', userId: 'u1', platform: 'webui', authority: 4 })
    // A console session has no guild: the guild quota does not apply to it, so it is left out.
    expect(seen.quotas).toEqual([{ name: 'echo per user', tools: ['echo'], per: 'user', max: 2, windowMs: HOUR, used: 2, remaining: 0, resetsAt: expect.any(Number) }])
    expect(seen.quotas[0].resetsAt).toBeGreaterThan(before)
    expect(seen.quotas[0].resetsAt).toBeLessThanOrEqual(before + HOUR)
    expect(seen.maxRunning).toEqual({ session: 1, global: 4 })

    // Another user of the console is counted apart.
    const other = await console.handle('quotas.list', { sessionId: 's2', userId: 'u2' }) as SessionQuotas
    expect(other.quotas.map(({ name, used, remaining }) => ({ name, used, remaining }))).toEqual([{ name: 'echo per user', used: 0, remaining: 2 }])
  })

  it('looks at a chat user\'s session through its platform, channel and guild', async () => {
    const { registry, console } = api({ quotas })
    const chat: Session = { id: 'discord:g1:c1', platform: 'discord', userId: 'alice', channelId: 'c1', guildId: 'g1' }
    const results = await registry.execute([
      { id: 'a', name: 'echo', arguments: { text: '1' } },
      { id: 'b', name: 'other', arguments: {} },
    ], { session: chat })
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok'])

    const seen = await console.handle('quotas.list', { sessionId: chat.id, platform: 'discord', userId: 'alice', channelId: 'c1', guildId: 'g1' }) as SessionQuotas
    expect(seen.session).toMatchObject({ id: chat.id, platform: 'discord', userId: 'alice', channelId: 'c1', guildId: 'g1' })
    expect(seen.quotas.map(({ name, per, used, remaining, windowMs }) => ({ name, per, used, remaining, windowMs }))).toEqual([
      { name: 'echo per user', per: 'user', used: 1, remaining: 1, windowMs: HOUR },
      { name: 'guild daily', per: 'guild', used: 2, remaining: 3, windowMs: DAY },
    ])
    // The same user id on the console's platform is someone else.
    const console_ = await console.handle('quotas.list', { sessionId: 'webui', userId: 'alice', guildId: 'g1' }) as SessionQuotas
    expect(console_.quotas.map(({ used }) => used)).toEqual([0, 0])
    expect(seen.maxRunning).toEqual({})
  })

  it('with no quota configured: an empty list', async () => {
    const { console } = api({})
    expect(await console.handle('quotas.list', { sessionId: 's1' })).toMatchObject({ quotas: [], maxRunning: {} })
  })
})

describe('quotas.list over HTTP', () => {
  let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
  afterEach(async () => {
    await app?.dispose()
    app = undefined
  })

  it('answers a GET with the session\'s quotas; a payload without sessionId is a 400 naming it', async () => {
    app = await startConsoleApp({}, { tools: { quotas: [{ name: 'echo per user', tools: 'echo', per: 'user', max: 1, window: '1h' }], maxRunning: { user: 2 } } })
    expect((await app.send('call', { tool: 'echo', args: { text: 'a' }, sessionId: 's1', userId: 'u1' })).body.result.status).toBe('ok')
    expect((await app.send('call', { tool: 'echo', args: { text: 'b' }, sessionId: 's1', userId: 'u1' })).body.result).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
    const query = encodeURIComponent(JSON.stringify({ sessionId: 's1', userId: 'u1' }))
    const response = await fetch(`${app.base}/api/quotas.list?payload=${query}`)
    expect(response.status).toBe(200)
    const body = await response.json() as SessionQuotas
    expect(body.quotas.map(({ name, used, remaining }) => ({ name, used, remaining }))).toEqual([{ name: 'echo per user', used: 1, remaining: 0 }])
    expect(body.maxRunning).toEqual({ user: 2 })
    const refused = await app.send('quotas.list', { userId: 'u1' })
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe('INVALID_PAYLOAD')
    expect(refused.body.error.message).toMatch(/^quotas\.list: \$\.sessionId\b/)
  })
})
