import { type DecisionEvent, defineTool, type QuotaRule, type Session, type ToolResult } from '@dogu/core'
import Schema from 'schemastery'
import { describe, expect, it, vi } from 'vitest'
import { logGuard } from '../log-guard'
import { definer, echo, save, session, until, useApps } from './fixture'
import type { AppOptions, ConformanceHost, HostApp, PluginContext } from './host'

/** 10 minutes into an hour-long window (windows start at multiples of their length since the epoch). */
const TEN_PAST = 500_000 * 3_600_000 + 600_000

const bob: Session = { id: 's2', userId: 'u2', platform: 'test', authority: 1 }

/** A call of `hold`, running until the test lets it finish. */
interface Held {
  n: number
  finish(): void
}

/**
 * A plugin defining `hold` (read; runs until finished by the test, no timeout), `quick`
 * (read, 1 s timeout, counts its runs), and `put` (write) / `get` (read) over one value.
 */
function pack(held: Held[], runs: { quick: number }) {
  let value = '(empty)'
  return {
    name: 'quota-pack',
    inject: ['tools'],
    apply(ctx: PluginContext) {
      ctx.tools.define(defineTool({
        name: 'hold',
        description: 'Runs until released',
        args: Schema.object({ n: Schema.natural().required() }),
        traits: { effect: 'read' },
        run: ({ n }: { n: number }) => new Promise<string>((resolve) => { held.push({ n, finish: () => resolve(`done ${n}`) }) }),
      }))
      ctx.tools.define(defineTool({
        name: 'quick',
        description: 'Answers at once',
        traits: { effect: 'read', timeout: 1_000 },
        run: () => {
          runs.quick++
          return 'quick'
        },
      }))
      ctx.tools.define(defineTool({
        name: 'put',
        description: 'Stores a value',
        args: Schema.object({ value: Schema.string().required() }),
        traits: { effect: 'write' },
        run: async ({ value: next }: { value: string }) => {
          // A write that takes a turn: a read started beside it would see the old value.
          await new Promise((resolve) => setImmediate(resolve))
          value = next
          return `put ${next}`
        },
      }))
      ctx.tools.define(defineTool({
        name: 'get',
        description: 'Reads the value',
        traits: { effect: 'read' },
        run: () => value,
      }))
    },
  }
}

let ids = 0

/** One call of `name` with its own id, optionally with a signal. */
async function run(app: HostApp, name: string, args: object = {}, who: Session = session, signal?: AbortSignal): Promise<ToolResult> {
  const [result] = await app.tools.execute([{ id: `q-${++ids}`, name, arguments: args as Record<string, unknown> }], { session: who, ...signal ? { signal } : {} })
  return result
}

/** `tools.quotas` and `tools.maxRunning` from the host's tools config: refusals, windows, waiting. */
export function quotasConformance(host: ConformanceHost) {
  describe(`${host.name}: quotas and maxRunning`, () => {
    const apps = useApps(host)
    const setup = async (options: Omit<AppOptions, 'dir'>) => {
      const app = await apps.app(options)
      const decisions: DecisionEvent[] = []
      app.on('permissions/decision', (event: DecisionEvent) => { decisions.push(event) })
      const held: Held[] = []
      const runs = { quick: 0 }
      await app.plugin(definer('pack', echo, save).plugin)
      await app.plugin(pack(held, runs))
      return { app, decisions, held, runs }
    }
    const perUser: QuotaRule = { tools: 'echo', per: 'user', max: 2, window: '1h', name: 'echo per user' }

    it('a quota per user: the third call is rate_limited, naming the quota and when to retry; another user is unaffected', async () => {
      const { app } = await setup({ tools: { quotas: [perUser] } })
      vi.useFakeTimers({ now: TEN_PAST, toFake: ['Date'] })
      expect(await run(app, 'echo', { text: 'a' })).toMatchObject({ status: 'ok', content: 'a' })
      expect(await run(app, 'echo', { text: 'b' })).toMatchObject({ status: 'ok', content: 'b' })
      const third = await run(app, 'echo', { text: 'c' })
      expect(third).toMatchObject({
        status: 'rate_limited',
        code: 'rate_limited',
        retryAfterMs: 3_000_000,
        content: 'Rate limited: quota \'echo per user\' used: 2 per 1 h; try again in 50 min.',
      })
      expect(third.retryAfterMs).toBeGreaterThan(0)
      // Another user of the same platform, and the same user id on another platform, have their own count.
      expect(await run(app, 'echo', { text: 'd' }, bob)).toMatchObject({ status: 'ok', content: 'd' })
      expect(await run(app, 'echo', { text: 'e' }, { ...session, id: 's9', platform: 'other' })).toMatchObject({ status: 'ok' })
      // A tool the quota does not name still runs.
      expect(await run(app, 'get')).toMatchObject({ status: 'ok' })
      const windowEnd = TEN_PAST + 3_000_000
      expect(await app.tools.registry.quotas.status(session)).toEqual([
        { name: 'echo per user', tools: ['echo'], per: 'user', max: 2, windowMs: 3_600_000, used: 2, remaining: 0, resetsAt: windowEnd },
      ])
      expect(await app.tools.registry.quotas.status(bob)).toEqual([
        { name: 'echo per user', tools: ['echo'], per: 'user', max: 2, windowMs: 3_600_000, used: 1, remaining: 1, resetsAt: windowEnd },
      ])
    })

    it('a quota per channel and one per guild count every member there; a refused call gives back what it took', async () => {
      const { app } = await setup({
        tools: {
          quotas: [
            { tools: 'echo', per: 'channel', max: 1, window: '1h', name: 'channel' },
            { tools: 'echo', per: 'guild', max: 2, window: '1h', name: 'guild' },
          ],
        },
      })
      vi.useFakeTimers({ now: TEN_PAST, toFake: ['Date'] })
      const at = (userId: string, channelId: string, guildId?: string): Session =>
        ({ id: `test:${channelId}`, userId, channelId, ...guildId ? { guildId } : {}, platform: 'test', authority: 1 })
      const echoed = async (who: Session) => (await run(app, 'echo', { text: 'hi' }, who)).content
      expect(await echoed(at('u1', 'c1', 'g1'))).toBe('hi')
      // The channel's one call is used, by anyone in it.
      expect(await echoed(at('u2', 'c1', 'g1'))).toBe('Rate limited: quota \'channel\' used: 1 per 1 h; try again in 50 min.')
      expect(await echoed(at('u2', 'c2', 'g1'))).toBe('hi')
      // The guild's two are used: c3's own unit, taken first, goes back with the refusal.
      expect(await echoed(at('u3', 'c3', 'g1'))).toBe('Rate limited: quota \'guild\' used: 2 per 1 h; try again in 50 min.')
      expect((await app.tools.registry.quotas.status(at('u3', 'c3', 'g1'))).map(({ name, used }) => [name, used])).toEqual([['channel', 0], ['guild', 2]])
      // Another guild, and a private chat (no guild: only its channel counts), still run.
      expect(await echoed(at('u3', 'c3', 'g2'))).toBe('hi')
      expect(await echoed(at('u4', 'private:u4'))).toBe('hi')
      expect((await app.tools.registry.quotas.status(at('u4', 'private:u4'))).map(({ name, used }) => [name, used])).toEqual([['channel', 1]])
    })

    it('a window that ends gives the quota back, on the clock every instance shares', async () => {
      const { app } = await setup({ tools: { quotas: [{ tools: 'echo', per: 'user', max: 1, window: '1 min', name: 'a minute' }] } })
      const start = 30_000_000 * 60_000
      vi.useFakeTimers({ now: start + 45_000, toFake: ['Date'] })
      expect(await run(app, 'echo', { text: 'a' })).toMatchObject({ status: 'ok' })
      expect(await run(app, 'echo', { text: 'b' })).toMatchObject({ status: 'rate_limited', retryAfterMs: 15_000, content: 'Rate limited: quota \'a minute\' used: 1 per 1 min; try again in 15 s.' })
      vi.setSystemTime(start + 59_999)
      expect(await run(app, 'echo', { text: 'c' })).toMatchObject({ status: 'rate_limited', retryAfterMs: 1 })
      vi.setSystemTime(start + 60_000)
      expect(await run(app, 'echo', { text: 'd' })).toMatchObject({ status: 'ok', content: 'd' })
      expect(await app.tools.registry.quotas.status(session)).toEqual([
        { name: 'a minute', tools: ['echo'], per: 'user', max: 1, windowMs: 60_000, used: 1, remaining: 0, resetsAt: start + 120_000 },
      ])
    })

    it('a refusal is a decision: permissions/decision (phase quota) and the audit record say which quota', async () => {
      const { app, decisions } = await setup({ audit: true, tools: { quotas: [{ ...perUser, max: 1 }] } })
      vi.useFakeTimers({ now: TEN_PAST, toFake: ['Date'] })
      expect(await run(app, 'echo', { text: 'a' })).toMatchObject({ status: 'ok' })
      const refused = await run(app, 'echo', { text: 'b' })
      const message = 'Rate limited: quota \'echo per user\' used: 1 per 1 h; try again in 50 min.'
      expect(refused).toMatchObject({ status: 'rate_limited', content: message })
      expect(decisions.filter((event) => event.phase === 'quota').map((event) => [event.decision, event.source, event.reason, event.request.callId])).toEqual([
        ['deny', { kind: 'quota', name: 'echo per user' }, message, refused.id],
      ])
      const records = await app.audit!.query({ tool: 'echo' })
      expect(records.map((record) => [record.callId, record.outcome, record.code, record.decided])).toEqual([
        [refused.id, 'rate_limited', 'rate_limited', { kind: 'quota', name: 'echo per user' }],
        [expect.any(String), 'ok', undefined, { kind: 'default', effect: 'read' }],
      ])
      expect(records[0].caller).toMatchObject({ userId: 'u1', platform: 'test', sessionId: 's1' })
      expect(await app.audit!.query({ outcome: 'rate_limited' })).toEqual([records[0]])
    })

    it('maxRunning: calls beyond session: 1 run in arrival order; one aborted while waiting ends cancelled, never runs, and takes no unit', async () => {
      const { app, held } = await setup({
        tools: { maxRunning: { session: 1 }, quotas: [{ tools: 'hold', per: 'session', max: 10, window: '1h', name: 'holds' }] },
      })
      const first = run(app, 'hold', { n: 1 })
      await until(() => held.length === 1, 'the first call to run')
      const controller = new AbortController()
      const waiting = [run(app, 'hold', { n: 2 }), run(app, 'hold', { n: 3 }, session, controller.signal), run(app, 'hold', { n: 4 }), run(app, 'hold', { n: 5 })]
      // Another session is under no one's cap: it runs though it came after them.
      const other = run(app, 'hold', { n: 9 }, bob)
      await until(() => held.length === 2, 'the other session\'s call to run')
      expect(held.map((call) => call.n)).toEqual([1, 9])
      controller.abort('changed my mind')
      expect(await waiting[1]).toMatchObject({ status: 'cancelled' })
      // Each call that ends lets in the next one that arrived, and only that one.
      for (const [running, next] of [[0, 2], [2, 4], [3, 5]]) {
        const started = held.length
        held[running].finish()
        await until(() => held.length > started, `call ${next} to run`)
        expect(held.slice(started).map((call) => call.n)).toEqual([next])
      }
      held[4].finish()
      held[1].finish()
      expect(held.map((call) => call.n)).toEqual([1, 9, 2, 4, 5])
      expect((await Promise.all([first, waiting[0], waiting[2], waiting[3], other])).map((result) => result.content)).toEqual(['done 1', 'done 2', 'done 4', 'done 5', 'done 9'])
      // Four calls of s1 started; the cancelled one gave its unit back.
      expect((await app.tools.registry.quotas.status(session))[0]).toMatchObject({ used: 4, remaining: 6 })
    })

    it('maxRunning: a call waiting for a place keeps its timeout and ends timed_out without running', async () => {
      const { app, held, runs } = await setup({ tools: { maxRunning: { session: 1 } } })
      vi.useFakeTimers({ now: TEN_PAST, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
      const first = run(app, 'hold', { n: 1 })
      await until(() => held.length === 1, 'the first call to run')
      const late = run(app, 'quick')
      await vi.advanceTimersByTimeAsync(999)
      await vi.advanceTimersByTimeAsync(1)
      const result = await late
      expect(result).toMatchObject({ status: 'timed_out', content: 'Timed out: waited 1 s for a place to run and did not start (maxRunning.session: 1).' })
      held[0].finish()
      expect(await first).toMatchObject({ status: 'ok', content: 'done 1' })
      expect(runs.quick).toBe(0)
      // The place is free again: the next call runs at once.
      expect(await run(app, 'quick')).toMatchObject({ status: 'ok', content: 'quick' })
      expect(runs.quick).toBe(1)
    })

    it('maxRunning: a batch of reads and a write under session: 1 completes, the reads after the write seeing it', async () => {
      const { app } = await setup({ tools: { maxRunning: { session: 1 } }, permissions: { rules: [{ permission: 'tool:put', decision: 'allow' }] } })
      let results: ToolResult[] | undefined
      app.tools.execute([
        { id: 'b1', name: 'get', arguments: {} },
        { id: 'b2', name: 'get', arguments: {} },
        { id: 'b3', name: 'put', arguments: { value: 'new' } },
        { id: 'b4', name: 'get', arguments: {} },
        { id: 'b5', name: 'get', arguments: {} },
      ], { session }).then((settled) => { results = settled })
      await until(() => results !== undefined, 'the batch to finish')
      expect(results!.map((result) => [result.id, result.status, result.content])).toEqual([
        ['b1', 'ok', '(empty)'],
        ['b2', 'ok', '(empty)'],
        ['b3', 'ok', 'put new'],
        ['b4', 'ok', 'new'],
        ['b5', 'ok', 'new'],
      ])
    })

    it('a call denied at approval gives its unit back: the next call still runs', async () => {
      const { app } = await setup({ tools: { quotas: [{ tools: 'save', per: 'user', max: 1, window: '1h', name: 'one save' }] } })
      const answers = ['deny', 'allow'] as const
      let asked = 0
      await app.plugin({
        name: 'chat',
        inject: ['tools', 'permissions'],
        apply(ctx: PluginContext) {
          ctx.permissions.asker(async () => ({ decision: answers[asked++] ?? 'allow', by: 'u1' }))
        },
      })
      expect(await run(app, 'save', { text: 'a' })).toMatchObject({ status: 'denied' })
      expect(await app.tools.registry.quotas.status(session)).toMatchObject([{ name: 'one save', used: 0, remaining: 1 }])
      expect(await run(app, 'save', { text: 'b' })).toMatchObject({ status: 'ok', content: 'saved' })
      // Over the quota, the call is refused before anyone is asked.
      expect(await run(app, 'save', { text: 'c' })).toMatchObject({ status: 'rate_limited', content: expect.stringMatching(/^Rate limited: quota 'one save' used: 1 per 1 h; try again in /) })
      expect(asked).toBe(2)
    })

    // The schema refuses what it can express (a count, a scope); the registry, a duration text.
    it.each([
      [{ per: 'user', max: 0, window: '1h' }, '$.quotas[0].max expected number >= 1 but got 0'],
      [{ per: 'user', max: 2, window: 'soon' }, 'quotas[0].window must be a duration: milliseconds, or a text such as \'90s\', \'30 min\', \'1h\', \'1d\' (got "soon")'],
      [{ per: 'planet', max: 2, window: '1h' }, '$.quotas[0].per expected "user" | "channel" | "guild" | "session" | "global" but got "planet"'],
    ] as const)('refuses a bad quota in the tools config: %j', async (rule, message) => {
      // The host reports the plugin that failed, as it would to the owner.
      logGuard.expect(message)
      await expect(apps.app({ tools: { quotas: [rule as unknown as QuotaRule] } })).rejects.toThrow(message)
    })
  })
}
