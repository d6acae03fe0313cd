import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  AuditLog,
  defineTool,
  formatDuration,
  type Logger,
  MemoryQuotaStore,
  parseDuration,
  type QuotaRule,
  type QuotaSlot,
  type QuotaStore,
  type Session,
  ToolRegistry,
  type ToolRegistryOptions,
  type ToolResult,
  ToolRateLimit,
} from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionEngineOptions, type PermissionRequest, type RespondStatus } from '../src/permissions'

const alice: Session = { id: 'discord:c1:alice', userId: 'alice', channelId: 'c1', guildId: 'g1', platform: 'discord', authority: 1 }
const bob: Session = { id: 'discord:c1:bob', userId: 'bob', channelId: 'c1', guildId: 'g1', platform: 'discord', authority: 1 }
const HOUR = 3_600_000

/** Collects warnings; an error log fails the test. */
function logger() {
  const warnings: string[] = []
  const format = (message: string, args: unknown[]) => args.reduce<string>((text, arg) => text.replace(/%[sdo]/, String(arg instanceof Error ? arg.message : arg)), message)
  const log = {
    debug: () => {},
    info: () => {},
    warn: (message: string, ...args: unknown[]) => { warnings.push(format(message, args)) },
    error: (message: string, ...args: unknown[]) => { throw new Error(`unexpected error log: ${format(message, args)}`) },
  } as Logger
  return { log, warnings }
}

/** Calls run one at a time: a gate that tests can hold (`hold`) keeps the handler of `slow` waiting. */
function setup(options: Omit<ToolRegistryOptions, 'logger'> = {}, engineOptions: PermissionEngineOptions = {}) {
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ ...engineOptions, onDecision: (event) => decisions.push(event) })
  const { log, warnings } = logger()
  const registry = new ToolRegistry({ ...options, logger: log })
  registry.permissions = engine
  const runs: string[] = []
  const releases: Array<() => void> = []
  registry.define(defineTool({
    name: 'search',
    description: 'Search the web',
    args: Schema.object({ query: Schema.string().required() }),
    traits: { effect: 'read' },
    run: (args) => {
      runs.push(`search ${args.query}`)
      return `results for ${args.query}`
    },
  }))
  registry.define(defineTool({
    name: 'slow',
    description: 'Waits until the test lets it finish',
    args: Schema.object({ label: Schema.string().required() }),
    traits: { effect: 'read', parallel: true, timeout: 60_000 },
    run: (args, call) => new Promise<string>((resolve, reject) => {
      runs.push(`slow ${args.label}`)
      releases.push(() => resolve(`done ${args.label}`))
      call.signal.addEventListener('abort', () => reject(call.signal.reason))
    }),
  }))
  registry.define(defineTool({
    name: 'note_write',
    description: 'Write a note',
    args: Schema.object({ text: Schema.string().required() }),
    traits: { effect: 'write', parallel: false },
    run: (args) => {
      runs.push(`write ${args.text}`)
      notes.push(args.text)
      return 'written'
    },
  }))
  const notes: string[] = []
  registry.define(defineTool({
    name: 'note_read',
    description: 'Read the notes',
    args: Schema.object({}),
    traits: { effect: 'read', parallel: true },
    run: () => {
      runs.push('read')
      return notes.join(',') || '(none)'
    },
  }))
  const waiting: Array<{ request: PermissionRequest; respond(answer: AskAnswer): RespondStatus }> = []
  engine.addAsker((request, context) => { waiting.push({ request, respond: context.respond }) })
  let n = 0
  const call = (name: string, args: object, session = alice, signal?: AbortSignal): Promise<ToolResult> =>
    registry.toolset({ session }).execute([{ id: `c${++n}`, name, arguments: args as Record<string, unknown> }], { signal }).then(([result]) => result)
  /** Resolves once `count` handlers of `slow` are waiting. */
  const started = async (count: number) => {
    for (let i = 0; i < 200 && releases.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(releases).toHaveLength(count)
  }
  return { registry, engine, runs, releases, started, waiting, decisions, warnings, call }
}

const perUser = (max = 2, rule: Partial<QuotaRule> = {}): QuotaRule[] => [{ tools: 'search', per: 'user', max, window: '1h', ...rule }]

afterEach(() => {
  vi.useRealTimers()
})

describe('quotas: calls per user, channel, guild, session and everyone', () => {
  it('refuses the third call of a user over `max: 2` as rate_limited, with when to try again, while another user is unaffected', async () => {
    const { call, runs } = setup({ quotas: perUser(2, { name: 'search per user' }) })
    expect(await call('search', { query: 'a' })).toMatchObject({ status: 'ok' })
    expect(await call('search', { query: 'b' })).toMatchObject({ status: 'ok' })
    const refused = await call('search', { query: 'c' })
    expect(refused).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(HOUR)
    expect(refused.content).toMatch(/^Rate limited: quota 'search per user' used: 2 per 1 h; try again in \d+ (min|s|h)\.$/)
    expect(runs).toEqual(['search a', 'search b'])
    // Bob has his own count; another tool is not counted.
    expect(await call('search', { query: 'd' }, bob)).toMatchObject({ status: 'ok' })
    expect(await call('note_read', {})).toMatchObject({ status: 'ok' })
    expect(runs).toEqual(['search a', 'search b', 'search d', 'read'])
  })

  it('counts a channel together, and a guild across its channels; a private chat is under no guild quota', async () => {
    const { call } = setup({ quotas: [{ tools: 'search', per: 'channel', max: 2, window: HOUR }, { tools: 'note_*', per: 'guild', max: 1, window: '1d' }] })
    const other = { ...bob, id: 'discord:c2:bob', channelId: 'c2' }
    expect((await call('search', { query: 'a' })).status).toBe('ok')
    expect((await call('search', { query: 'b' }, bob)).status).toBe('ok')
    expect((await call('search', { query: 'c' }, bob)).status).toBe('rate_limited')
    expect((await call('search', { query: 'd' }, other)).status).toBe('ok')
    expect((await call('note_read', {})).status).toBe('ok')
    const guild = await call('note_read', {}, other)
    expect(guild).toMatchObject({ status: 'rate_limited', content: expect.stringContaining("quota 'note_* per guild' used: 1 per 1 d") })
    const dm: Session = { id: 'discord:dm:alice', userId: 'alice', channelId: 'dm', platform: 'discord' }
    expect((await call('note_read', {}, dm)).status).toBe('ok')
    expect((await call('note_read', {}, dm)).status).toBe('ok')
  })

  it('counts the same user id on two platforms apart, and `global` counts everyone', async () => {
    const { call } = setup({ quotas: [{ per: 'user', max: 1, window: HOUR }, { tools: 'search', per: 'global', max: 3, window: HOUR }] })
    expect((await call('search', { query: 'a' })).status).toBe('ok')
    expect((await call('search', { query: 'b' }, { ...alice, platform: 'qq', id: 'qq:alice' })).status).toBe('ok')
    expect((await call('search', { query: 'c' })).status).toBe('rate_limited')
    expect((await call('search', { query: 'd' }, bob)).status).toBe('ok')
    const everyone = await call('search', { query: 'e' }, { id: 'carol', userId: 'carol', platform: 'discord' })
    expect(everyone).toMatchObject({ status: 'rate_limited', content: expect.stringContaining("quota 'search per global' used: 3 per 1 h") })
  })

  it('starts counting again when the window ends (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-12-02T10:50:00Z'))
    const { call } = setup({ quotas: perUser(1) })
    expect((await call('search', { query: 'a' })).status).toBe('ok')
    const refused = await call('search', { query: 'b' })
    // Windows are fixed hours since the epoch: this one ends at 11:00, ten minutes away.
    expect(refused).toMatchObject({ status: 'rate_limited', retryAfterMs: 10 * 60_000, content: expect.stringContaining('try again in 10 min') })
    vi.setSystemTime(new Date('2026-12-02T10:59:59.999Z'))
    expect((await call('search', { query: 'c' })).status).toBe('rate_limited')
    vi.setSystemTime(new Date('2026-12-02T11:00:00Z'))
    expect((await call('search', { query: 'd' })).status).toBe('ok')
    expect((await call('search', { query: 'e' })).status).toBe('rate_limited')
  })

  it('is a decision: the refusal reaches permissions/decision (phase quota) and the audit record', async () => {
    const { call, decisions } = setup({ quotas: perUser(1, { name: 'search per user' }) })
    const audit = new AuditLog({ flushInterval: 10 })
    await call('search', { query: 'a' })
    const refused = await call('search', { query: 'b' })
    for (const event of decisions) audit.onDecision(event)
    audit.onCallEnd({ id: refused.id, name: 'search', session: alice, args: { query: 'b' }, startedAt: Date.now() }, refused)
    const event = decisions.find((e) => e.phase === 'quota')!
    expect(event).toMatchObject({ decision: 'deny', source: { kind: 'quota', name: 'search per user' }, request: { tool: 'search', callId: refused.id }, reason: refused.content })
    const [record] = await audit.query({ tool: 'search', outcome: 'rate_limited' })
    expect(record).toMatchObject({ outcome: 'rate_limited', decided: { kind: 'quota', name: 'search per user' } })
    await audit.stop()
  })

  it('asks nobody about a call over its quota, and gives back the unit of a call a person denied', async () => {
    const { call, waiting, runs } = setup({ quotas: [{ tools: 'note_write', per: 'user', max: 1, window: HOUR }] })
    const first = call('note_write', { text: 'one' })
    await vi.waitFor(() => expect(waiting).toHaveLength(1))
    waiting.shift()!.respond({ decision: 'deny', by: 'alice' })
    expect((await first).status).toBe('denied')
    // The denied call never ran: its unit went back, so this one may run once approved.
    const second = call('note_write', { text: 'two' })
    await vi.waitFor(() => expect(waiting).toHaveLength(1))
    waiting.shift()!.respond({ decision: 'allow', by: 'alice' })
    expect((await second).status).toBe('ok')
    // Now the quota is used: the third is refused at once, and no question is asked.
    expect(await call('note_write', { text: 'three' })).toMatchObject({ status: 'rate_limited' })
    expect(waiting).toHaveLength(0)
    expect(runs).toEqual(['write two'])
  })

  it('gives back the unit of a call a middleware blocked, or that was cancelled before it ran; keeps it for a call that failed', async () => {
    const { registry, call } = setup({ quotas: perUser(1) })
    const block = registry.use(() => ({ status: 'denied', reason: 'not now' }), { name: 'gate', tools: 'search' })
    expect((await call('search', { query: 'a' })).status).toBe('denied')
    block()
    const aborted = new AbortController()
    aborted.abort()
    expect((await call('search', { query: 'b' }, alice, aborted.signal)).status).toBe('cancelled')
    registry.define(defineTool({ name: 'search', description: 'Fails', args: Schema.object({ query: String }), traits: { effect: 'read' }, run: () => { throw new Error('upstream down') } }))
    expect((await call('search', { query: 'c' })).status).toBe('error')
    // The failed call ran, so it spent the unit.
    expect((await call('search', { query: 'd' })).status).toBe('rate_limited')
    expect(await registry.quotas.status(alice)).toEqual([expect.objectContaining({ name: 'search per user', used: 1, remaining: 0, max: 1 })])
  })

  it('shows each quota that applies to a session with what is left and when it resets', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-12-02T10:46:00Z'))
    const { registry, call } = setup({ quotas: [...perUser(20, { name: 'search per user' }), { per: 'guild', max: 100, window: '1d' }] })
    await call('search', { query: 'a' })
    await call('search', { query: 'b' })
    expect(await registry.quotas.status(alice)).toEqual([
      { name: 'search per user', tools: ['search'], per: 'user', max: 20, windowMs: HOUR, used: 2, remaining: 18, resetsAt: Date.parse('2026-12-02T11:00:00Z') },
      { name: '* per guild', tools: [], per: 'guild', max: 100, windowMs: 86_400_000, used: 2, remaining: 98, resetsAt: Date.parse('2026-12-03T00:00:00Z') },
    ])
    // A private chat: no guild quota applies.
    expect((await registry.quotas.status({ id: 'dm', userId: 'alice', platform: 'discord' })).map((q) => q.name)).toEqual(['search per user'])
    expect(await registry.quotas.status(alice, 'note_read')).toEqual([expect.objectContaining({ name: '* per guild' })])
  })

  it('fails closed when the count cannot be taken: the call does not run and says why', async () => {
    const broken: QuotaStore = {
      take: () => Promise.reject(new Error('connection refused')),
      give: () => {},
      used: () => [],
      add: () => {},
    }
    const { call, runs, warnings } = setup({ quotas: perUser(5), quotaStore: broken })
    expect(await call('search', { query: 'a' })).toMatchObject({ status: 'error', code: 'quota_unavailable', content: 'Error: the call did not run: its quota could not be counted (connection refused).' })
    expect(runs).toEqual([])
    expect(warnings).toEqual([expect.stringContaining('connection refused')])
  })

  it('works with a store that answers asynchronously (a database), giving back what it took when a later quota is used', async () => {
    const memory = new MemoryQuotaStore()
    const given: string[] = []
    const slow: QuotaStore = {
      take: async (slot) => memory.take(slot),
      give: async (slot) => { given.push(slot.quota); memory.give(slot) },
      used: async (slots) => memory.used(slots),
      add: async (slot, count) => memory.add(slot, count),
    }
    const { call, registry } = setup({ quotas: [{ per: 'user', max: 5, window: HOUR, name: 'all per user' }, { tools: 'search', per: 'channel', max: 1, window: HOUR, name: 'search per channel' }], quotaStore: slow })
    expect((await call('search', { query: 'a' })).status).toBe('ok')
    expect((await call('search', { query: 'b' }, bob)).status).toBe('rate_limited')
    // Bob's unit of the per-user quota went back when the channel's refused him.
    expect(given).toEqual(['all per user'])
    expect((await registry.quotas.status(bob)).find((q) => q.name === 'all per user')).toMatchObject({ used: 0 })
  })

  it('carries the counts of open windows to a new store (a database arriving late)', async () => {
    const { call, registry } = setup({ quotas: perUser(2) })
    await call('search', { query: 'a' })
    await call('search', { query: 'b' })
    const next = new MemoryQuotaStore()
    await registry.quotas.useStore(next)
    expect(registry.quotas.store).toBe(next)
    expect((await call('search', { query: 'c' })).status).toBe('rate_limited')
  })

  it('lets a tool whose upstream refused end `rate_limited` too (ToolRateLimit), spending its unit', async () => {
    const { registry, call } = setup({ quotas: perUser(2) })
    registry.define(defineTool({
      name: 'search',
      description: 'An API that allows 60 calls a minute',
      args: Schema.object({ query: String }),
      traits: { effect: 'read' },
      run: ({ query }) => { throw query === 'a' ? new ToolRateLimit('the search API allows 60 calls a minute', 29_500.2) : new ToolRateLimit('Rate limited: try later') },
    }))
    expect(await call('search', { query: 'a' })).toMatchObject({ status: 'rate_limited', code: 'rate_limited', content: 'Rate limited: the search API allows 60 calls a minute', retryAfterMs: 29_501 })
    const later = await call('search', { query: 'b' })
    expect(later).toMatchObject({ status: 'rate_limited', content: 'Rate limited: try later' })
    expect(later.retryAfterMs).toBeUndefined()
    // Both ran: the quota is used.
    expect((await call('search', { query: 'c' })).content).toMatch(/^Rate limited: quota 'search per user' used: 2 per 1 h/)
  })

  it('never counts a search-mode toolset\'s own tool_search', async () => {
    const { registry } = setup({ quotas: [{ per: 'user', max: 1, window: HOUR }] })
    const toolset = registry.toolset({ session: alice, mode: 'search' })
    const [found] = await toolset.execute([{ id: 's1', name: 'tool_search', arguments: { query: 'web search' } }])
    const [again] = await toolset.execute([{ id: 's2', name: 'tool_search', arguments: { query: 'notes' } }])
    expect([found.status, again.status]).toEqual(['ok', 'ok'])
    const [first, second] = await toolset.execute([{ id: 'c1', name: 'search', arguments: { query: 'a' } }, { id: 'c2', name: 'search', arguments: { query: 'b' } }])
    expect([first.status, second.status]).toEqual(['ok', 'rate_limited'])
  })

  it('refuses bad configuration with an error naming the field', () => {
    const make = (quotas: unknown) => () => new ToolRegistry({ quotas: quotas as QuotaRule[] })
    expect(make([{ per: 'user', max: 0, window: '1h' }])).toThrow('quotas[0].max must be a positive integer (got 0)')
    expect(make([{ per: 'user', max: 1, window: 'soon' }])).toThrow(`quotas[0].window must be a duration: milliseconds, or a text such as '90s', '30 min', '1h', '1d' (got "soon")`)
    expect(make([{ per: 'planet', max: 1, window: '1h' }])).toThrow('quotas[0].per must be one of user, channel, guild, session, global (got "planet")')
    expect(make([{ per: 'user', max: 1, window: '1h', tools: [''] }])).toThrow('quotas[0].tools must be a name glob')
    expect(make([{ per: 'user', max: 1, window: '1h' }, { per: 'user', max: 2, window: '1d' }])).toThrow('two quotas are named "* per user"')
    expect(make({ per: 'user' })).toThrow('quotas must be a list')
    expect(() => new ToolRegistry({ maxRunning: { session: 0 } })).toThrow('maxRunning.session must be a positive integer (got 0)')
    expect(() => new ToolRegistry({ maxRunning: { sessions: 2 } as never })).toThrow('maxRunning.sessions is not a cap: use session, user or global')
  })
})

describe('maxRunning: caps on calls running at once', () => {
  it('lets calls beyond `session: 1` wait and run in arrival order, while another session runs', async () => {
    const { call, runs, releases, started } = setup({ maxRunning: { session: 1 } })
    const results = [call('slow', { label: '1' }), call('slow', { label: '2' }), call('slow', { label: '3' })]
    const other = call('slow', { label: 'bob' }, bob)
    await started(2)
    expect(runs).toEqual(['slow 1', 'slow bob'])
    releases[1]()
    expect(await other).toMatchObject({ status: 'ok', content: 'done bob' })
    releases[0]()
    await started(3)
    expect(runs).toEqual(['slow 1', 'slow bob', 'slow 2'])
    releases[2]()
    await started(4)
    releases[3]()
    expect((await Promise.all(results)).map((r) => r.content)).toEqual(['done 1', 'done 2', 'done 3'])
    expect(runs).toEqual(['slow 1', 'slow bob', 'slow 2', 'slow 3'])
  })

  it('caps a user over all their sessions, and the process with `global`', async () => {
    const { call, runs, releases, started } = setup({ maxRunning: { user: 1, global: 2 } })
    const elsewhere = { ...alice, id: 'discord:c9:alice', channelId: 'c9' }
    const a = call('slow', { label: 'a' })
    const b = call('slow', { label: 'a-elsewhere' }, elsewhere)
    const c = call('slow', { label: 'bob' }, bob)
    const d = call('slow', { label: 'carol' }, { id: 'carol', userId: 'carol', platform: 'discord' })
    await started(2)
    expect(runs).toEqual(['slow a', 'slow bob'])
    releases[0]()
    await a
    // Alice's other session was first in line; Carol waits for the global cap.
    await started(3)
    expect(runs).toEqual(['slow a', 'slow bob', 'slow a-elsewhere'])
    releases[1]()
    await c
    await started(4)
    releases[2]()
    releases[3]()
    expect((await Promise.all([b, d])).map((r) => r.status)).toEqual(['ok', 'ok'])
  })

  it('ends a waiting call `cancelled` when it is aborted: it never runs, and gives its quota unit back', async () => {
    const { call, runs, releases, started, registry } = setup({ maxRunning: { session: 1 }, quotas: [{ tools: 'slow', per: 'user', max: 2, window: HOUR }] })
    const first = call('slow', { label: '1' })
    await started(1)
    const stop = new AbortController()
    const waiting = call('slow', { label: '2' }, alice, stop.signal)
    await new Promise((resolve) => setTimeout(resolve, 10))
    stop.abort()
    expect(await waiting).toMatchObject({ status: 'cancelled', content: 'Cancelled: the batch was cancelled.' })
    expect((await registry.quotas.status(alice))[0]).toMatchObject({ used: 1 })
    releases[0]()
    expect((await first).status).toBe('ok')
    expect(runs).toEqual(['slow 1'])
    // Its place went to nobody: the next call runs at once.
    const next = call('slow', { label: '3' })
    await started(2)
    releases[1]()
    expect((await next).status).toBe('ok')
  })

  it('keeps a waiting call\'s timeout: past it, the call ends `timed_out` without having run', async () => {
    const { registry, call, runs, releases, started } = setup({ maxRunning: { session: 1 } })
    registry.define(defineTool({ name: 'quick', description: 'Quick', args: Schema.object({}), traits: { effect: 'read', timeout: 200 }, run: () => { runs.push('quick'); return 'quick' } }))
    const first = call('slow', { label: '1' })
    await started(1)
    expect(await call('quick', {})).toMatchObject({ status: 'timed_out', content: 'Timed out: waited 200 ms for a place to run and did not start (maxRunning.session: 1).' })
    expect(runs).toEqual(['slow 1'])
    releases[0]()
    expect((await first).status).toBe('ok')
    expect((await call('quick', {})).status).toBe('ok')
  })

  it('runs a batch of a write and reads under `session: 1` without a deadlock, in the calls\' order', async () => {
    const { registry, runs } = setup({ maxRunning: { session: 1 } }, { rules: [{ permission: 'tool:note_write', decision: 'allow' }] })
    const toolset = registry.toolset({ session: alice })
    const results = await toolset.execute([
      { id: 'r1', name: 'note_read', arguments: {} },
      { id: 'w1', name: 'note_write', arguments: { text: 'hello' } },
      { id: 'r2', name: 'note_read', arguments: {} },
      { id: 'r3', name: 'note_read', arguments: {} },
    ])
    expect(results.map((r) => [r.id, r.status, r.content])).toEqual([
      ['r1', 'ok', '(none)'],
      ['w1', 'ok', 'written'],
      ['r2', 'ok', 'hello'],
      ['r3', 'ok', 'hello'],
    ])
    expect(runs).toEqual(['read', 'write hello', 'read', 'read'])
  })
})

describe('durations', () => {
  it('reads what owners write in koishi.yml, and nothing else', () => {
    expect(parseDuration(90_000)).toBe(90_000)
    expect(parseDuration('90s')).toBe(90_000)
    expect(parseDuration('30 min')).toBe(1_800_000)
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(parseDuration('1 小时')).toBe(HOUR)
    expect(parseDuration('2天')).toBe(172_800_000)
    expect(parseDuration('1.5h')).toBe(5_400_000)
    expect(parseDuration('1500')).toBe(1500)
    for (const bad of ['soon', '', '0', '1 fortnight', '-1h', 'h', 0, -5, Number.NaN, null, {}]) expect(parseDuration(bad)).toBeUndefined()
  })

  it('words a wait rounded up, never early', () => {
    expect(formatDuration(HOUR)).toBe('1 h')
    expect(formatDuration(14 * 60_000)).toBe('14 min')
    expect(formatDuration(13 * 60_000 + 1)).toBe('14 min')
    expect(formatDuration(1500)).toBe('2 s')
    expect(formatDuration(200)).toBe('200 ms')
    expect(formatDuration(86_400_000)).toBe('1 d')
  })
})
