// Quotas as a chat user meets them on Koishi: `dogu.quota`, a refusal through `dogu.run` and
// through ChatLuna, and `dogu.audit`'s view of it. The counting itself is the conformance
// suite's (test-support/conformance/quotas.ts), on both hosts.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, MemoryQuotaStore, type QuotaRule } from '@dogu/core'
import { type App, type Context, Schema } from 'koishi'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type * as Dogu from '../src'
import { chatlunaContent } from '../src/chatluna-content'
import { koishiApp, sessionOf, settle } from './koishi-app'

const require = createRequire(import.meta.url)
const ChatLuna = require('koishi-plugin-chatluna')

/** 10 minutes into an hour-long window, 15 h 50 min before a day-long one ends (windows start at multiples of their length since the epoch). */
const TEN_PAST = 500_000 * 3_600_000 + 600_000

const QUOTAS: QuotaRule[] = [
  { tools: 'echo', per: 'user', max: 2, window: '1h', name: 'echo per user' },
  { per: 'channel', max: 5, window: '1 小时', name: '频道配额' },
  { tools: ['echo', 'search*'], per: 'guild', max: 10, window: '1d', name: 'guild' },
]

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

interface SetupOptions {
  quotas?: QuotaRule[]
  dogu?: Dogu.Config
  /** Load the memory database (quota counts in its dogu_quota table). @default false */
  database?: boolean
  /** Load ChatLuna (it needs the database), before the clock is faked. */
  chatluna?: boolean
}

/**
 * A Koishi app with the Dogu plugin (`tools.quotas` from `quotas`) and an `echo` tool
 * (read), then `Date` faked at `TEN_PAST`.
 */
async function setup({ quotas = QUOTAS, dogu = {}, database = false, chatluna = false }: SetupOptions = {}) {
  // Authority 3 without a database: enough for dogu.run and dogu.audit.
  const t = await koishiApp({ database: database || chatluna, dogu: { defaultAuthority: 3, ...dogu, tools: { quotas } } })
  t.app.plugin({
    name: 'echo-tool',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'read' },
        run: (args: { text: string }) => args.text,
      }))
    },
  })
  await settle(t.app)
  const platform = chatluna ? await loadChatLuna(t.app) : undefined
  vi.useFakeTimers({ now: TEN_PAST, toFake: ['Date'] })
  const send = (user: string, text: string, channel?: string) => t.app.mock.client(user, channel).receive(text)
  return { ...t, send, platform }
}

const refusal = 'Rate limited: quota \'echo per user\' used: 2 per 1 h; try again in 50 min.'

describe('dogu.quota', () => {
  it('shows the sender each quota that applies to them: tools, used of max, what is left, when it resets', async () => {
    const { send } = await setup()
    expect(await send('alice', 'dogu.quota', 'room')).toEqual([[
      '适用于你的配额（3 项）：',
      'echo per user（echo，每人每 1 小时 最多 2 次）：已用 0/2，剩余 2 次，50 分钟后重置',
      '频道配额（所有工具，每个频道每 1 小时 最多 5 次）：已用 0/5，剩余 5 次，50 分钟后重置',
      'guild（echo, search*，每个群组每 1 天 最多 10 次）：已用 0/10，剩余 10 次，16 小时后重置',
    ].join('\n')])
    expect(await send('alice', 'dogu.run echo {"text":"hi"}', 'room')).toEqual(['echo：成功\nhi'])
    expect(await send('bob', 'dogu.run echo {"text":"yo"}', 'room')).toEqual(['echo：成功\nyo'])
    vi.setSystemTime(TEN_PAST + 20 * 60_000)
    const [shown] = await send('alice', 'dogu.quota', 'room')
    expect(shown.split('\n').slice(1)).toEqual([
      // Alice's own count, and what everyone in the room used together.
      'echo per user（echo，每人每 1 小时 最多 2 次）：已用 1/2，剩余 1 次，30 分钟后重置',
      '频道配额（所有工具，每个频道每 1 小时 最多 5 次）：已用 2/5，剩余 3 次，30 分钟后重置',
      'guild（echo, search*，每个群组每 1 天 最多 10 次）：已用 2/10，剩余 8 次，16 小时后重置',
    ])
  })

  it('shows a private chat only the quotas it has a subject for, and says so when none applies', async () => {
    const { send } = await setup({ quotas: [{ per: 'guild', max: 10, window: '1d', name: 'guild' }] })
    expect(await send('alice', 'dogu.quota')).toEqual(['没有适用于你的配额。'])
    expect(await send('alice', 'dogu.quota', 'room')).toEqual(['适用于你的配额（1 项）：\nguild（所有工具，每个群组每 1 天 最多 10 次）：已用 0/10，剩余 10 次，16 小时后重置'])
  })

  it('says no quota applies when none is configured', async () => {
    const { send } = await setup({ quotas: [] })
    expect(await send('alice', 'dogu.quota', 'room')).toEqual(['没有适用于你的配额。'])
  })

  it('speaks the user\'s language', async () => {
    const { app, send } = await setup({ database: true })
    await app.mock.initUser('eve', 1, { locales: ['en-US'] })
    expect(await send('eve', 'dogu.quota', 'room')).toEqual([[
      'Quotas that apply to you (3):',
      'echo per user (echo, 2 per 1 h for each user): used 0/2, 2 left, resets in 50 min',
      '频道配额 (every tool, 5 per 1 h for each channel): used 0/5, 5 left, resets in 50 min',
      'guild (echo, search*, 10 per 1 d for each guild): used 0/10, 10 left, resets in 16 h',
    ].join('\n')])
    // A private chat is its own channel, and in no guild.
    expect(await send('eve', 'dogu.quota')).toEqual([[
      'Quotas that apply to you (2):',
      'echo per user (echo, 2 per 1 h for each user): used 0/2, 2 left, resets in 50 min',
      '频道配额 (every tool, 5 per 1 h for each channel): used 0/5, 5 left, resets in 50 min',
    ].join('\n')])
    const { send: sendElsewhere, app: other } = await setup({ quotas: [], database: true })
    await other.mock.initUser('fay', 1, { locales: ['en-US'] })
    expect(await sendElsewhere('fay', 'dogu.quota', 'room')).toEqual(['No quota applies to you.'])
  })

  it('says so when the counts cannot be read, and logs why', async () => {
    const { app, send, guard } = await setup()
    const failing = new MemoryQuotaStore()
    failing.used = () => { throw new Error('the database is down') }
    await app.tools.registry.quotas.useStore(failing)
    guard.expect('[dogu] dogu.quota could not read the quota counts: the database is down')
    expect(await send('alice', 'dogu.quota', 'room')).toEqual(['暂时无法读取配额计数，请稍后再试。'])
  })

  it('is described in both languages, and needs the authority of dogu.tools', async () => {
    const { app, send } = await setup({ dogu: { commands: { authority: { tools: 2 } }, defaultAuthority: 1 } })
    for (const locale of ['zh-CN', 'en-US']) expect(app.i18n.get('commands.dogu.quota.description')[locale], locale).toEqual(expect.any(String))
    expect(app.$commander.get('dogu.quota')?.config.authority).toBe(2)
    expect(await send('alice', 'dogu.quota', 'room')).toEqual(['权限不足。'])
  })
})

describe('a rate_limited call', () => {
  it('dogu.run says which quota is used up and when to try again, in the words of dogu.quota (the model reads its English)', async () => {
    const { send } = await setup()
    await send('alice', 'dogu.run echo {"text":"1"}', 'room')
    await send('alice', 'dogu.run echo {"text":"2"}', 'room')
    expect(await send('alice', 'dogu.run echo {"text":"3"}', 'room')).toEqual(['echo：超出配额，配额“echo per user”已用完（每 1 小时最多 2 次），50 分钟后可再试'])
    // Another user in the room is unaffected.
    expect(await send('bob', 'dogu.run echo {"text":"4"}', 'room')).toEqual(['echo：成功\n4'])
  })

  it('dogu.audit lists it as over a quota, decided by the quota, and filters by -o rate_limited', async () => {
    const { send } = await setup()
    for (const text of ['1', '2', '3']) await send('alice', `dogu.run echo {"text":"${text}"}`, 'room')
    const [listed] = await send('alice', 'dogu.audit -o rate_limited', 'room')
    const lines = listed.split('\n')
    expect(lines[0]).toBe('审计记录，最新的在前（1 条）：')
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^\d\d-\d\d \d\d:\d\d:\d\d mock:alice echo：超出配额 · 配额 echo per user（已用完） · 运行 \d+ 毫秒$/)])
    expect(await send('alice', 'dogu.audit -o soon', 'room')).toEqual(['没有 soon 这种结果。可选：ok, error, denied, timed_out, cancelled, background, rate_limited'])
  })

  it('reaches ChatLuna as a failed tool call: the status line with the retry hint, then the refusal', async () => {
    const { app, platform } = await setup({ chatluna: true })
    const alice = await sessionOf(app, 'alice', 'room')
    const tool = () => platform!.getTool('echo').createTool({})
    expect(await tool().invoke({ text: 'a' }, { configurable: { session: alice } })).toBe('a')
    expect(await tool().invoke({ text: 'b' }, { configurable: { session: alice } })).toBe('b')
    const text = `status: rate_limited (retry after 50 min)\n${refusal}`
    expect(await tool().invoke({ text: 'c' }, { configurable: { session: alice } })).toBe(text)
    // Called with a tool call, as ChatLuna's agent does: a ToolMessage with that text.
    const message = await tool().invoke({ id: 'call_1', name: 'echo', args: { text: 'd' }, type: 'tool_call' }, { configurable: { session: alice } })
    expect({ content: message.content, id: message.tool_call_id }).toEqual({ content: text, id: 'call_1' })
  })
})

describe('chatlunaContent', () => {
  it('names rate_limited and when to retry, rounded up', () => {
    const base = { id: 'c1', name: 'x', durationMs: 0, status: 'rate_limited' as const, code: 'rate_limited' as const, content: 'Rate limited: quota \'q\' used: 1 per 1 min; try again in 2 s.' }
    expect(chatlunaContent({ ...base, retryAfterMs: 1_500 }, false)).toBe(`status: rate_limited (retry after 2 s)\n${base.content}`)
    expect(chatlunaContent({ ...base, retryAfterMs: 840_000 }, false)).toBe(`status: rate_limited (retry after 14 min)\n${base.content}`)
  })
})

/** What the tests use of ChatLuna's platform service (koishi-plugin-chatluna 1.3.36). */
interface Platform {
  getToolRegistry(): Record<string, unknown>
  getTool(name: string): { createTool(params: object): any }
}

/** Loads ChatLuna, its data in a temp folder; resolves once the bridge registered Dogu's tools. */
async function loadChatLuna(app: App): Promise<Platform> {
  const dir = mkdtempSync(join(tmpdir(), 'dogu-chatluna-'))
  dirs.push(dir)
  app.baseDir = dir
  app.plugin(ChatLuna, {})
  for (let round = 0; round < 50; round++) {
    const platform = (app as any).chatluna?.platform as Platform | undefined
    if (platform && Object.hasOwn(platform.getToolRegistry(), 'echo')) return platform
    await settle(app)
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error('ChatLuna did not start, or the bridge registered no echo')
}
