// Durable permission requests (issue 46): a question kept in a pending store outlives the
// engine that asked. A restart is modelled as a second engine on the same store (memory, the
// JSON file, SQLite through minato's driver) after the first stopped. The stores on their own
// are durable-permissions-stores.spec.ts; several instances on one shared store are
// durable-permissions-instances.spec.ts.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineTool, type Session, ToolRegistry } from '../src'
import type { ApprovalRequest } from '../src/permission-gate'
import {
  type AskAnswer,
  type AskerContext,
  type ClosedRequest,
  DatabasePendingStore,
  type DecisionEvent,
  JsonFilePendingStore,
  MemoryPendingStore,
  PermissionEngine,
  type PermissionEngineOptions,
  type PermissionRequest,
  type PendingRecord,
  type PendingStore,
  type ResumedCall,
  type ResumeHandler,
} from '../src/permissions'
import { koishiDatabase } from './durable-permissions-support'

const caller: Session = { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1 }
const alice = { id: 'u1', platform: 'mock' }
const admin = { id: 'op', platform: 'mock', authority: 4 }
const INTERRUPTED = 'interrupted while waiting for approval (the request is kept and asked again after a restart)'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  vi.useRealTimers()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-durable-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** An engine on `store` with an asker the test answers, its decisions, warnings and closed requests. */
function engineOn(store: PendingStore, options: PermissionEngineOptions = {}) {
  const events: DecisionEvent[] = []
  const warnings: string[] = []
  const closed: ClosedRequest[] = []
  const shown: { request: PermissionRequest; context: AskerContext }[] = []
  const engine = new PermissionEngine({
    pendingStore: store,
    instanceId: 'a',
    onDecision: (event) => events.push(event),
    onClosed: (request) => closed.push(request),
    logger: { debug() {}, warn: (fmt, ...args) => warnings.push(format(fmt, ...args)) },
    ...options,
  })
  cleanups.push(() => engine.stop())
  const removeAsker = engine.addAsker((request, context) => { shown.push({ request, context }) })
  return { engine, events, warnings, closed, shown, removeAsker }
}

/** A tools host that defines `tools` and records what it is asked to run. */
function tools(defined: string[] = ['save'], extra: Partial<ResumeHandler> = {}) {
  const resumed: ResumedCall[] = []
  const handler: ResumeHandler = {
    defines: (tool) => defined.includes(tool),
    resume: async (call) => {
      resumed.push(call)
      return { taskId: `task-${resumed.length}` }
    },
    ...extra,
  }
  return { handler, resumed }
}

function ask(engine: PermissionEngine, over: Partial<ApprovalRequest> = {}, signal = new AbortController().signal) {
  return engine.approve({ session: caller, permission: { name: 'tool:save' }, effect: 'write', tool: 'save', args: { file: 'notes.txt' }, callId: 'call-1', ...over }, signal)
}

/** Each store as a restart sees it: a second instance of the store on the same data. */
const stores: Record<string, () => Promise<() => PendingStore>> = {
  memory: async () => {
    const store = new MemoryPendingStore()
    return () => store
  },
  'JSON file': async () => {
    const path = join(await tempDir(), 'pending.json')
    return () => new JsonFilePendingStore(path)
  },
  'SQLite (minato)': async () => {
    const { database, stop } = await koishiDatabase('sqlite', join(await tempDir(), 'koishi.db'))
    cleanups.push(stop)
    return () => new DatabasePendingStore({ database })
  },
}

describe.each(Object.keys(stores))('a restart, on the %s store', (name) => {
  it('keeps the question when the engine stops, asks it again with a new id, and one answer runs the call once', async () => {
    const storeOf = await stores[name]()
    const first = engineOn(storeOf())
    const outcome = ask(first.engine)
    expect(first.shown[0].context.kept).toBeInstanceOf(Promise)
    expect(await first.shown[0].context.kept).toBe(true)
    const asked = first.shown[0].request
    await first.engine.stop('the permissions service stopped (reloaded or unloaded) while the call waited for an answer')
    expect(await outcome).toMatchObject({ decision: 'deny', reason: INTERRUPTED, rule: { kind: 'stopped', kept: true } })

    const second = engineOn(storeOf())
    const later: PermissionRequest[] = []
    await second.engine.ready
    second.engine.addAsker((request) => { later.push(request) })
    const { handler, resumed } = tools()
    second.engine.onResume(handler)
    // Shown to the asker present at load and to the one added after; listed as restored.
    expect(second.shown).toHaveLength(1)
    const restored = second.shown[0].request
    expect(restored.id).not.toBe(asked.id)
    expect(restored).toMatchObject({ tool: 'save', summary: asked.summary, args: { file: 'notes.txt' }, session: caller, createdAt: asked.createdAt, expiresAt: asked.expiresAt, restored: { originalId: asked.id, instance: 'a' } })
    expect(later.map((request) => request.restored?.originalId)).toEqual([asked.id])
    expect(second.engine.pending().map((request) => request.restored?.originalId)).toEqual([asked.id])

    const result = await second.shown[0].context.answer!({ decision: 'allow', by: alice, via: 'button' })
    expect(result).toEqual({ status: 'accepted', reason: 'approved by mock:u1 (once) after a restart', taskId: 'task-1', open: false })
    expect(resumed).toHaveLength(1)
    expect(resumed[0]).toMatchObject({ args: { file: 'notes.txt' }, by: alice, scope: 'once', via: 'button', reason: 'approved by mock:u1 (once) after a restart', record: { id: asked.id, tool: 'save', session: caller } })
    expect(second.shown[0].context.signal.aborted).toBe(true)
    expect(second.shown[0].context.respond({ decision: 'allow', by: alice })).toBe('closed')
    expect(resumed).toHaveLength(1)
    expect(second.engine.pending()).toEqual([])
    expect(second.events.filter((event) => event.phase === 'approve')).toEqual([expect.objectContaining({
      decision: 'allow', requestId: asked.id, restored: true, source: { kind: 'answer', by: alice, scope: 'once', via: 'button' },
    })])
    // Gone from the store: a third start asks nothing.
    const third = engineOn(storeOf())
    await third.engine.ready
    expect(third.shown).toEqual([])
    expect([...first.warnings, ...second.warnings, ...third.warnings]).toEqual([])
  })

  it('refuses an answer to the old request after the restart: its id is not asked any more, and its old context is closed', async () => {
    const storeOf = await stores[name]()
    const first = engineOn(storeOf())
    void ask(first.engine)
    const old = first.shown[0]
    await first.engine.stop()
    const second = engineOn(storeOf())
    await second.engine.ready
    const { handler, resumed } = tools()
    second.engine.onResume(handler)
    expect(old.context.respond({ decision: 'allow', by: alice })).toBe('closed')
    expect(await old.context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'closed', open: false })
    // A host routes answers by request id (a button, a console call): nothing answers to the old one.
    expect(second.engine.pending().map((request) => request.id)).not.toContain(old.request.id)
    expect(resumed).toEqual([])
    expect(second.engine.pending()).toHaveLength(1)
  })

  it('a deny rule added while the bot was down wins over the old question: the answer is refused, says why, and nothing runs', async () => {
    const storeOf = await stores[name]()
    const first = engineOn(storeOf())
    void ask(first.engine)
    await first.engine.stop()
    const second = engineOn(storeOf(), { rules: [{ permission: 'tool:save', decision: 'deny', name: 'no saving' }] })
    await second.engine.ready
    const { handler, resumed } = tools()
    second.engine.onResume(handler)
    const result = await second.shown[0].context.answer!({ decision: 'allow', by: alice })
    expect(result).toEqual({
      status: 'refused',
      reason: 'mock:u1 approved it, but it is denied now: rule "no saving" from config.rules[0] denies it',
      // The reason's structured form, for a person's locale (describeDenial).
      denial: { cause: 'rule', decided: { kind: 'rule', decision: 'deny', name: 'no saving', permission: 'tool:save', origin: 'config.rules[0]' } },
      open: false,
    })
    await second.engine.stop()
    expect(resumed).toEqual([])
    expect(second.shown[0].context.signal.aborted).toBe(true)
    expect(second.events.filter((event) => event.phase === 'approve')).toEqual([expect.objectContaining({ decision: 'deny', restored: true, source: expect.objectContaining({ kind: 'rule' }) })])
    const third = engineOn(storeOf())
    await third.engine.ready
    expect(third.shown).toEqual([])
  })
})

describe('a restored request, answered', () => {
  /** A request asked and kept, then the engine stopped; the second engine has it restored. */
  async function restoredOn(options: PermissionEngineOptions = {}, over: Partial<ApprovalRequest> = {}) {
    const store = new MemoryPendingStore()
    const first = engineOn(store)
    void ask(first.engine, over)
    const asked = first.shown[0].request
    await first.engine.stop()
    const second = engineOn(store, options)
    await second.engine.ready
    return { store, asked, ...second, question: second.shown[0] }
  }

  it('is refused, and stays open, on an instance that does not define the tool or has no tools host yet', async () => {
    const { question, engine } = await restoredOn()
    expect(question.context.respond({ decision: 'allow', by: alice })).toBe('refused')
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'refused', reason: 'no tools host on this instance (a) can run save yet; the request stays open', open: true })
    const other = tools(['deploy'])
    const dispose = engine.onResume(other.handler)
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'refused', reason: 'the tool "save" is not defined on this instance (a); the request stays open for one that defines it', open: true })
    dispose()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(resumed).toHaveLength(1)
    expect(other.resumed).toEqual([])
  })

  it('checks who answers and how, as a live request does: a stranger and a malformed answer are ignored', async () => {
    const { question, engine, warnings } = await restoredOn()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    expect(question.context.respond({ decision: 'allow', by: { id: 'u2', platform: 'mock', authority: 1 } })).toBe('not-allowed')
    expect(question.context.respond({ decision: 'maybe', by: alice } as unknown as AskAnswer)).toBe('invalid')
    expect(resumed).toEqual([])
    expect(warnings).toEqual([
      expect.stringMatching(/^ignored an answer from mock:u2 to restored permission request perm_\S+ \(save\(file=notes\.txt\)\): only /),
      expect.stringMatching(/^ignored a malformed answer to restored permission request/),
    ])
    expect(await question.context.answer!({ decision: 'allow', by: admin })).toMatchObject({ status: 'accepted' })
  })

  it('a decline closes it without running anything, reported as the answer', async () => {
    const { question, engine, events, store } = await restoredOn()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    expect(await question.context.answer!({ decision: 'deny', by: alice, reason: 'not now' })).toEqual({ status: 'accepted', reason: 'mock:u1 declined it: not now', open: false })
    expect(resumed).toEqual([])
    expect(events.filter((event) => event.phase === 'approve')).toEqual([expect.objectContaining({ decision: 'deny', reason: 'mock:u1 declined it: not now', restored: true })])
    expect((await store.load()).records).toEqual([])
  })

  it('an "always" answer grants as usual, and the next call is allowed by the grant', async () => {
    const { question, engine } = await restoredOn()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    expect(await question.context.answer!({ decision: 'allow', scope: 'always', by: alice })).toMatchObject({ status: 'accepted', reason: 'approved by mock:u1 (always) after a restart' })
    expect(resumed[0].scope).toBe('always')
    expect(engine.grants()).toEqual([expect.objectContaining({ scope: 'always', permission: 'tool:save', by: 'mock:u1' })])
    expect(engine.authorize({ session: caller, permission: { name: 'tool:save' }, effect: 'write', tool: 'save', args: {} }).decision).toBe('allow')
  })

  it('is authorized at the moment of the answer: a session in readOnly mode by then is refused', async () => {
    const { question, engine } = await restoredOn()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    engine.setMode(caller.id, 'readOnly')
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toEqual({
      status: 'refused',
      reason: 'mock:u1 approved it, but it is denied now: the session is in readOnly mode, which denies write tools',
      denial: { cause: 'rule', decided: { kind: 'mode', decision: 'deny', mode: 'readOnly', effect: 'write' } },
      open: false,
    })
    expect(resumed).toEqual([])
  })

  it('a rule that now names its own approvers needs one of them; the caller is refused and the request stays open', async () => {
    const { question, engine } = await restoredOn({ rules: [{ permission: 'tool:save', decision: 'ask', approvers: { users: ['mock:op'], caller: false } }] })
    const { handler, resumed } = tools()
    engine.onResume(handler)
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'not-allowed', reason: 'it now needs the approval of users mock:op', approvers: { platform: 'mock', users: ['mock:op'] }, open: true })
    expect(await question.context.answer!({ decision: 'allow', scope: 'always', by: admin })).toMatchObject({ status: 'accepted', reason: 'approved by mock:op (once) after a restart' })
    expect(resumed).toHaveLength(1)
    expect(engine.grants()).toEqual([])
  })

  it('an edit is validated by the tools host and authorized on its own permission, then runs with the edited arguments', async () => {
    const schema = Schema.object({ file: Schema.string().required() })
    const check: ResumeHandler['check'] = (_, value) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'the edited arguments must be a JSON object', refusal: { kind: 'not_object' } }
      const file = (value as { file?: unknown })?.file
      if (typeof file !== 'string') return { error: 'file: expected a string' }
      return { args: { file }, changes: [`$.file: "notes.txt" → ${JSON.stringify(file)}`], permission: { name: 'tool:save', target: file } }
    }
    const { question, engine, events } = await restoredOn({ rules: [{ permission: 'tool:save', target: 'secret/**', decision: 'deny', name: 'no secrets' }] })
    const { handler, resumed } = tools(['save'], { check, schema: () => schema })
    expect(question.request.input).toBeUndefined()
    engine.onResume(handler)
    // The form arrives with the tools host: askers shown from now on (and pending()) see it.
    const listed = engine.pending()[0]
    expect(listed.id).toBe(question.request.id)
    expect(listed.input?.schema).toBe(schema)
    expect(listed.input?.check({ file: 3 })).toBe('file: expected a string')
    expect(await question.context.answer!({ decision: 'allow', by: alice, value: { file: 3 } })).toEqual({ status: 'invalid', reason: 'file: expected a string', open: true })
    // The host's structured refusal reaches the asker, for a person's locale (describeRevision).
    const notObject = { error: 'the edited arguments must be a JSON object', refusal: { kind: 'not_object' } }
    expect(listed.input?.resolve?.(['x'])).toEqual(notObject)
    expect(await question.context.answer!({ decision: 'allow', by: alice, value: ['x'] })).toEqual({ status: 'invalid', reason: notObject.error, refusal: notObject.refusal, open: true })
    expect(await question.context.answer!({ decision: 'allow', by: alice, value: { file: 'secret/keys' } })).toEqual({
      status: 'refused',
      reason: 'mock:u1 approved it, but it is denied now: rule "no secrets" from config.rules[0] denies it',
      denial: { cause: 'rule', decided: { kind: 'rule', decision: 'deny', name: 'no secrets', permission: 'tool:save', target: 'secret/**', origin: 'config.rules[0]' } },
      open: false,
    })
    expect(resumed).toEqual([])

    const again = await restoredOn({}, {})
    const host = tools(['save'], { check, schema: () => schema })
    again.engine.onResume(host.handler)
    expect(await again.question.context.answer!({ decision: 'allow', by: alice, value: { file: 'draft.txt' } })).toMatchObject({ status: 'accepted', reason: 'approved by mock:u1 (once) with edited arguments after a restart' })
    expect(host.resumed[0]).toMatchObject({ args: { file: 'draft.txt' }, changes: ['$.file: "notes.txt" → "draft.txt"'] })
    expect(again.events.find((event) => event.phase === 'approve')).toMatchObject({ decision: 'allow', request: { args: { file: 'draft.txt' }, permission: { name: 'tool:save', target: 'draft.txt' } }, source: { kind: 'answer', edited: true } })
    expect(events.filter((event) => event.phase === 'approve')).toEqual([expect.objectContaining({ decision: 'deny' })])
  })

  it('a call that cannot be started is reported as failed, and its request is closed', async () => {
    const { question, engine, store, warnings } = await restoredOn()
    engine.onResume({ defines: () => true, resume: async () => { throw new Error('the session is gone') } })
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'failed', reason: 'approved by mock:u1 (once) after a restart, but it could not be run: the session is gone', error: 'the session is gone', open: false })
    expect((await store.load()).records).toEqual([])
    expect(warnings).toEqual([expect.stringContaining('it could not be run: the session is gone')])
  })

  it('two answers at once on one instance: one runs, the other hears who answered first', async () => {
    const { question, engine } = await restoredOn()
    const { handler, resumed } = tools()
    engine.onResume(handler)
    const [one, two] = await Promise.all([
      question.context.answer!({ decision: 'allow', by: alice }),
      question.context.answer!({ decision: 'allow', by: admin }),
    ])
    expect(one).toMatchObject({ status: 'accepted' })
    expect(two).toEqual({ status: 'taken', by: 'mock:u1', open: false })
    expect(resumed).toHaveLength(1)
  })
})

describe('what is closed after a restart instead of asked again', () => {
  it('a request whose expiry passed while the bot was down is closed, reported, and its channel told; nothing runs', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 10_000_000 })
    const store = new MemoryPendingStore()
    const first = engineOn(store, { askTimeout: 60_000 })
    void ask(first.engine)
    const asked = first.shown[0].request
    await first.engine.stop()
    vi.setSystemTime(10_000_000 + 60_001)
    const second = engineOn(store)
    await second.engine.ready
    expect(second.shown).toEqual([])
    expect(second.closed).toEqual([{ cause: 'expired', reason: 'it expired at 1970-01-01T02:47:40.000Z, before anyone answered', record: expect.objectContaining({ id: asked.id, session: caller }) }])
    expect(second.events).toEqual([expect.objectContaining({ phase: 'approve', decision: 'deny', requestId: asked.id, restored: true, source: { kind: 'timeout', timeout: 60_000 } })])
    expect((await store.load()).records).toEqual([])
  })

  it('a restored request expires at the first ask\'s expiry: its askers are told and it is removed', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: 20_000_000 })
    const store = new MemoryPendingStore()
    const first = engineOn(store, { askTimeout: 60_000 })
    void ask(first.engine)
    await vi.advanceTimersByTimeAsync(10_000)
    await first.engine.stop()
    const second = engineOn(store)
    await vi.advanceTimersByTimeAsync(0)
    expect(second.shown).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(49_999)
    expect(second.shown[0].context.signal.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(second.shown[0].context.signal.aborted).toBe(true)
    expect(second.engine.pending()).toEqual([])
    expect(second.events).toEqual([expect.objectContaining({ decision: 'deny', restored: true, source: { kind: 'timeout', timeout: 60_000 } })])
    expect((await store.load()).records).toEqual([])
  })

  it('a tool\'s own call.ask from inside its run cannot be resumed: closed with a line that says why', async () => {
    const store = new MemoryPendingStore()
    const first = engineOn(store)
    void ask(first.engine, { reason: 'delete 3 files in build/', confirm: 'always' })
    await first.engine.stop()
    const second = engineOn(store)
    await second.engine.ready
    expect(second.shown).toEqual([])
    expect(second.closed).toEqual([{ cause: 'in-run', reason: 'save asked this from inside its run, which ended when the process stopped; it cannot be resumed', record: expect.objectContaining({ inRun: true }) }])
    expect(second.events).toEqual([expect.objectContaining({ decision: 'deny', restored: true, source: { kind: 'stopped' } })])
  })

  it('on a store no other instance shares, a request whose tool is still not defined a minute after the restart is closed, saying so; its channel is told', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const store = new MemoryPendingStore()
    const first = engineOn(store, { askTimeout: 3_600_000 })
    void ask(first.engine)
    const asked = first.shown[0].request
    await first.engine.stop()
    const second = engineOn(store)
    await second.engine.ready
    // The tools host is there, but no plugin defines save (yet).
    const { handler, resumed } = tools(['deploy'])
    second.engine.onResume(handler)
    await vi.advanceTimersByTimeAsync(59_999)
    expect(second.engine.pending()).toHaveLength(1)
    expect(second.closed).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    const reason = 'the tool "save" is not defined here: no plugin defined it within 60 s of the restart'
    expect(second.engine.pending()).toEqual([])
    expect(second.shown[0].context.signal.aborted).toBe(true)
    expect(await second.shown[0].context.answer!({ decision: 'allow', by: alice })).toEqual({ status: 'closed', open: false })
    await second.engine.stop()
    expect(second.closed).toEqual([{ cause: 'undefined-tool', reason, record: expect.objectContaining({ id: asked.id, session: caller }) }])
    expect(second.events).toEqual([expect.objectContaining({ phase: 'approve', decision: 'deny', reason, requestId: asked.id, restored: true, askedAt: asked.createdAt })])
    expect(second.warnings).toEqual([`restored permission request ${asked.id} (save(file=notes.txt)) is closed: ${reason}`])
    expect(resumed).toEqual([])
    expect((await store.load()).records).toEqual([])
  })

  it('a request whose tool a plugin defines within that minute stays open, and an answer runs it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const store = new MemoryPendingStore()
    const first = engineOn(store, { askTimeout: 3_600_000 })
    void ask(first.engine)
    await first.engine.stop()
    const second = engineOn(store)
    await second.engine.ready
    const defined: string[] = []
    const { handler, resumed } = tools(defined)
    second.engine.onResume(handler)
    await vi.advanceTimersByTimeAsync(30_000)
    defined.push('save')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(second.closed).toEqual([])
    expect(await second.shown[0].context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(resumed).toHaveLength(1)
  })

  it('on a shared store (a database) a request whose tool is not defined here stays open past that minute, for an instance that defines it', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const first = engineOn(new DatabasePendingStore({ database }), { askTimeout: 3_600_000 })
    void ask(first.engine)
    await first.shown[0].context.kept
    await first.engine.stop()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const second = engineOn(new DatabasePendingStore({ database }))
    await second.engine.ready
    second.engine.onResume(tools(['deploy']).handler)
    await vi.advanceTimersByTimeAsync(120_000)
    expect(second.closed).toEqual([])
    expect(second.engine.pending()).toHaveLength(1)
    expect(await second.shown[0].context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'refused', open: true })
  })

  it('the oldest requests past maxPending at load are closed as expired early', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 40_000_000 })
    const store = new MemoryPendingStore()
    const first = engineOn(store)
    for (const file of ['a', 'b', 'c']) {
      void ask(first.engine, { args: { file }, callId: file })
      vi.setSystemTime(Date.now() + 1_000)
    }
    await first.engine.stop()
    const second = engineOn(store, { maxPending: 2 })
    await second.engine.ready
    expect(second.engine.pending().map((request) => request.args)).toEqual([{ file: 'b' }, { file: 'c' }])
    expect(second.closed).toEqual([{ cause: 'evicted', reason: 'it expired early: more than 2 permission requests were open (maxPending), and it was the oldest', record: expect.objectContaining({ args: { file: 'a' } }) }])
    expect((await store.load()).records.map((record) => record.args)).toEqual([{ file: 'b' }, { file: 'c' }])
  })

  it('a corrupt store file is moved aside and reported; a damaged record in a good file is closed and the others are asked', async () => {
    const dir = await tempDir()
    const path = join(dir, 'pending.json')
    await writeFile(path, 'not json')
    const broken = engineOn(new JsonFilePendingStore(path))
    await broken.engine.ready
    expect(broken.shown).toEqual([])
    expect(broken.closed).toEqual([{
      cause: 'corrupt',
      reason: expect.stringMatching(new RegExp(`^a permission request kept from before could not be read, and was closed \\(the pending store ${path} is corrupt: it is not valid JSON`)),
      // The store's own words, for a host that frames them in a person's locale.
      detail: expect.stringMatching(new RegExp(`^the pending store ${path} is corrupt: it is not valid JSON`)),
    }])
    expect(broken.warnings).toEqual([expect.stringMatching(/^a kept permission request could not be read, and is closed: the pending store .* is corrupt/)])

    const first = engineOn(new JsonFilePendingStore(path))
    void ask(first.engine)
    void ask(first.engine, { args: { file: 'other.txt' }, callId: 'call-2' })
    await first.engine.stop()
    const data = JSON.parse(await readFile(path, 'utf8'))
    data.requests[0].approvers = 'anyone'
    await writeFile(path, JSON.stringify(data))
    const second = engineOn(new JsonFilePendingStore(path))
    await second.engine.ready
    expect(second.shown.map((shown) => shown.request.args)).toEqual([{ file: 'other.txt' }])
    expect(second.closed).toEqual([{ cause: 'corrupt', id: data.requests[0].id, session: caller, reason: `a permission request kept from before could not be read, and was closed (requests[0] in ${path} has no approvers)`, detail: `requests[0] in ${path} has no approvers` }])
    expect(JSON.parse(await readFile(path, 'utf8')).requests.map((record: PendingRecord) => record.id)).toEqual([data.requests[1].id])
  })
})

describe('a database that goes while a restored request is answered', () => {
  /**
   * A request kept in the database table, the engine restarted on it, then the database goes
   * as Koishi's host sees it: the table is detached, and the engine moves to the file.
   */
  async function restoredOnDatabase() {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const path = join(await tempDir(), 'pending.json')
    const first = engineOn(new DatabasePendingStore({ database }))
    void ask(first.engine)
    await first.shown[0].context.kept
    const asked = first.shown[0].request
    await first.engine.stop()
    const table = new DatabasePendingStore({ database })
    const second = engineOn(table)
    await second.engine.ready
    const { handler, resumed } = tools()
    second.engine.onResume(handler)
    return { database, path, table, asked, second, resumed, question: second.shown[0] }
  }

  it('an answer while the table cannot be written is refused and the request stays open; answered on the file, it runs once, and the database back asks nothing again', async () => {
    const { database, path, table, asked, second, resumed, question } = await restoredOnDatabase()
    table.detach('the database went away')
    const failed = await question.context.answer!({ decision: 'allow', by: alice })
    expect(failed).toEqual({ status: 'failed', reason: 'the pending store could not be reached (the table dogu_pending cannot be written: the database went away); the request stays open', open: true })
    expect(resumed).toEqual([])
    await second.engine.usePendingStore(new JsonFilePendingStore(path))
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(resumed).toHaveLength(1)
    // The database comes back, its row as it was left: open. The call ran here; it is not asked again.
    await second.engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(second.engine.pending()).toEqual([])
    expect(second.shown).toHaveLength(1)
    expect(await database.get('dogu_pending', { claimedBy: '' })).toEqual([])
    await second.engine.stop()
    // Nor after a restart, on the file or on the database.
    for (const store of [new JsonFilePendingStore(path), new DatabasePendingStore({ database })]) {
      const next = engineOn(store)
      await next.engine.ready
      expect(next.shown).toEqual([])
      await next.engine.stop()
    }
    expect(resumed.map((call) => call.record.id)).toEqual([asked.id])
  })

  it('a request moved to the file while the database was gone and still open when it comes back is kept in the table alone', async () => {
    const { database, path, table, asked, second, resumed, question } = await restoredOnDatabase()
    table.detach('the database went away')
    await second.engine.usePendingStore(new JsonFilePendingStore(path))
    await second.engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(second.engine.pending().map((request) => request.restored?.originalId)).toEqual([asked.id])
    expect((await new JsonFilePendingStore(path).load()).records).toEqual([])
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    await second.engine.stop()
    // A restart on the file alone (the database not loaded yet) finds nothing left to ask.
    const next = engineOn(new JsonFilePendingStore(path))
    await next.engine.ready
    expect(next.shown).toEqual([])
    expect(resumed).toHaveLength(1)
  })

  it('a yes refused by a rule while the table cannot be written is reported all the same, and the database back does not ask it again', async () => {
    const { database, path, table, asked, second, resumed, question } = await restoredOnDatabase()
    second.engine.addRule({ permission: 'tool:save', decision: 'deny', name: 'no saving' })
    table.detach('the database went away')
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'refused', open: false })
    await second.engine.usePendingStore(new JsonFilePendingStore(path))
    expect(second.events.filter((event) => event.phase === 'approve')).toEqual([expect.objectContaining({ decision: 'deny', requestId: asked.id, restored: true, askedAt: asked.createdAt, source: expect.objectContaining({ kind: 'rule' }) })])
    expect(second.warnings).toEqual([expect.stringContaining(`could not close permission request ${asked.id}`)])
    await second.engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(second.engine.pending()).toEqual([])
    expect(second.shown).toHaveLength(1)
    expect(await database.get('dogu_pending', { claimedBy: '' })).toEqual([])
    expect(second.events.filter((event) => event.phase === 'approve')).toHaveLength(1)
    expect(resumed).toEqual([])
  })

  it('a live question moved to the file while the database was gone and answered there is not asked again when the database comes back', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const path = join(await tempDir(), 'pending.json')
    const table = new DatabasePendingStore({ database })
    const { engine, shown } = engineOn(table)
    const outcome = ask(engine)
    await shown[0].context.kept
    table.detach('the database went away')
    await engine.usePendingStore(new JsonFilePendingStore(path))
    expect(shown[0].context.respond({ decision: 'allow', by: alice })).toBe('accepted')
    expect(await outcome).toMatchObject({ decision: 'allow' })
    await engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(engine.pending()).toEqual([])
    expect(shown).toHaveLength(1)
    expect(await database.get('dogu_pending', { claimedBy: '' })).toEqual([])
  })

  it('a live question answered after its table went but before the engine moved to the file runs once; the database back does not ask it again', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const path = join(await tempDir(), 'pending.json')
    const table = new DatabasePendingStore({ database })
    const { engine, shown, warnings } = engineOn(table)
    const outcome = ask(engine)
    await shown[0].context.kept
    // The host detached the table; its move to the file has not begun.
    table.detach('the database went away')
    expect(await shown[0].context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    expect(await outcome).toMatchObject({ decision: 'allow' })
    await engine.usePendingStore(new JsonFilePendingStore(path))
    await engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(engine.pending()).toEqual([])
    expect(shown).toHaveLength(1)
    expect(await database.get('dogu_pending', { claimedBy: '' })).toEqual([])
    // A store that went is expected to refuse: nothing to warn about.
    expect(warnings).toEqual([])
    await engine.stop()
    const next = engineOn(new DatabasePendingStore({ database }))
    await next.engine.ready
    expect(next.shown).toEqual([])
  })

  it('a live question answered while the engine reads the file it moves to (its table gone) runs once; the database back does not ask it again', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const path = join(await tempDir(), 'pending.json')
    const table = new DatabasePendingStore({ database })
    const { engine, shown, warnings } = engineOn(table)
    const outcome = ask(engine)
    await shown[0].context.kept
    table.detach('the database went away')
    // The file's first read waits: the engine is on the file, its requests not moved yet.
    const file = new JsonFilePendingStore(path)
    let reading!: () => void
    let release!: () => void
    const read = new Promise<void>((resolve) => { reading = resolve })
    const gate = new Promise<void>((resolve) => { release = resolve })
    const load = file.load.bind(file)
    file.load = async () => {
      reading()
      await gate
      return load()
    }
    const switched = engine.usePendingStore(file)
    await read
    expect(await shown[0].context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    release()
    await switched
    expect(await outcome).toMatchObject({ decision: 'allow' })
    expect((await new JsonFilePendingStore(path).load()).records).toEqual([])
    await engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(engine.pending()).toEqual([])
    expect(shown).toHaveLength(1)
    expect(await database.get('dogu_pending', { claimedBy: '' })).toEqual([])
    expect(warnings).toEqual([])
  })

  it('a live question another instance answered while this one\'s database was away ends here when it comes back, and its claim is not written over', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const path = join(await tempDir(), 'pending.json')
    const table = new DatabasePendingStore({ database })
    const a = engineOn(table)
    const b = engineOn(new DatabasePendingStore({ database }), { instanceId: 'b' })
    const { handler, resumed } = tools()
    b.engine.onResume(handler)
    const outcome = ask(a.engine)
    await a.shown[0].context.kept
    const id = a.shown[0].request.id
    table.detach('the database went away')
    await a.engine.usePendingStore(new JsonFilePendingStore(path))
    await b.engine.refreshPending()
    expect(await b.shown[0].context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'accepted' })
    await a.engine.usePendingStore(new DatabasePendingStore({ database }))
    expect(a.engine.pending()).toEqual([])
    expect(await outcome).toMatchObject({ decision: 'deny', reason: 'the request was answered on another instance (b) by mock:u1; the call runs there, not here', rule: { kind: 'elsewhere', instance: 'b' } })
    // Not opened again: the row is B's claim, or gone once A learnt who answered.
    expect(await database.get('dogu_pending', { id, claimedBy: '' })).toEqual([])
    expect((await new JsonFilePendingStore(path).load()).records).toEqual([])
    await b.engine.refreshPending()
    expect(b.engine.pending()).toEqual([])
    expect(resumed).toHaveLength(1)
  })
})

describe('while the process lives', () => {
  it('an answer settles the caller\'s promise as before, and removes the record', async () => {
    const store = new MemoryPendingStore()
    const { engine, shown, events } = engineOn(store)
    const outcome = ask(engine)
    await shown[0].context.kept
    expect((await store.load()).records).toHaveLength(1)
    expect(shown[0].context.respond({ decision: 'allow', by: alice })).toBe('accepted')
    expect(await outcome).toMatchObject({ decision: 'allow', reason: 'approved by mock:u1 (once)' })
    expect(events.at(-1)).toMatchObject({ phase: 'approve', requestId: shown[0].request.id })
    expect(events.at(-1)?.restored).toBeUndefined()
    await expect.poll(async () => (await store.load()).records).toEqual([])
    expect((await store.load()).records).toEqual([])
  })

  it('a cancelled call and an expired question remove their records too', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: 30_000_000 })
    const store = new MemoryPendingStore()
    const { engine } = engineOn(store, { askTimeout: 1_000 })
    const controller = new AbortController()
    const cancelled = ask(engine, {}, controller.signal)
    const expired = ask(engine, { callId: 'call-2' })
    await vi.advanceTimersByTimeAsync(0)
    expect((await store.load()).records).toHaveLength(2)
    controller.abort()
    expect(await cancelled).toMatchObject({ decision: 'deny', rule: { kind: 'cancelled' } })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(await expired).toMatchObject({ decision: 'deny', rule: { kind: 'timeout' } })
    expect((await store.load()).records).toEqual([])
  })

  it('a tool\'s form (call.elicit) is never kept', async () => {
    const store = new MemoryPendingStore()
    const { engine, shown } = engineOn(store)
    void ask(engine, { reason: 'Which branch?', elicit: { schema: Schema.object({}), message: 'Which branch?', requestedSchema: { type: 'object', properties: {} }, validate: (value) => ({ ok: true, value }) as never } })
    await engine.stop()
    expect(shown[0].context.kept).toBeUndefined()
    expect((await store.load()).records).toEqual([])
  })

  it('with every asker unloaded the question waits on, and an asker registered later is shown it', async () => {
    const store = new MemoryPendingStore()
    const { engine, removeAsker } = engineOn(store)
    const outcome = ask(engine)
    removeAsker()
    const later: { request: PermissionRequest; context: AskerContext }[] = []
    engine.addAsker((request, context) => { later.push({ request, context }) })
    expect(later).toHaveLength(1)
    later[0].context.respond({ decision: 'allow', by: alice })
    expect(await outcome).toMatchObject({ decision: 'allow' })
  })

  it('past maxPending the oldest open request expires first, as an expiry does', async () => {
    const store = new MemoryPendingStore()
    vi.useFakeTimers({ toFake: ['Date'], now: 50_000_000 })
    const { engine, events } = engineOn(store, { maxPending: 2 })
    const outcomes = ['a', 'b', 'c'].map((file) => {
      vi.setSystemTime(Date.now() + 1_000)
      return ask(engine, { args: { file }, callId: file })
    })
    expect(await outcomes[0]).toMatchObject({ decision: 'deny', reason: 'it expired early: more than 2 permission requests were open (maxPending), and it was the oldest', rule: { kind: 'timeout' } })
    expect(events.filter((event) => event.phase === 'approve').map((event) => event.request.callId)).toEqual(['a'])
    expect(engine.pending().map((request) => request.callId)).toEqual(['b', 'c'])
    await engine.stop()
    expect((await store.load()).records.map((record) => record.callId)).toEqual(['b', 'c'])
    expect(await outcomes[1]).toMatchObject({ reason: INTERRUPTED })
  })

  it('a store that fails on write: the ask still happens, the log and the question say it will not survive a restart', async () => {
    const store = new MemoryPendingStore()
    store.put = async () => { throw new Error('disk full') }
    const { engine, shown, warnings } = engineOn(store)
    const outcome = ask(engine)
    expect(shown).toHaveLength(1)
    expect(await shown[0].context.kept).toBe(false)
    expect(warnings).toEqual([expect.stringMatching(/^could not keep permission request perm_\S+ \(save\(file=notes\.txt\)\) in the pending store: disk full; it will not survive a restart$/)])
    expect(engine.pending()[0]).toMatchObject({ id: shown[0].request.id, durable: false })
    const later: PermissionRequest[] = []
    engine.addAsker((request) => { later.push(request) })
    expect(later[0].durable).toBe(false)
    // Nothing was kept, so stopping ends it as it always did.
    await engine.stop()
    expect(await outcome).toMatchObject({ decision: 'deny', reason: 'the permissions service stopped while waiting for approval', rule: { kind: 'stopped' } })
  })

  it('usePendingStore moves the open requests of this process to the new store, and removes them from the old', async () => {
    const dir = await tempDir()
    const file = new JsonFilePendingStore(join(dir, 'pending.json'))
    const { engine, shown } = engineOn(file)
    void ask(engine)
    await shown[0].context.kept
    const table = new MemoryPendingStore()
    await engine.usePendingStore(table)
    expect((await table.load()).records.map((record) => record.tool)).toEqual(['save'])
    expect((await file.load()).records).toEqual([])
    await engine.stop()
    const after = engineOn(table)
    await after.engine.ready
    expect(after.shown.map((shown) => shown.request.tool)).toEqual(['save'])
  })

  it('durable: false keeps nothing, whatever store is given, and stopping ends calls as before', async () => {
    const store = new MemoryPendingStore()
    const { engine, shown } = engineOn(store, { durable: false })
    const outcome = ask(engine)
    expect(shown[0].context.kept).toBeUndefined()
    await engine.stop()
    expect((await store.load()).records).toEqual([])
    expect(await outcome).toMatchObject({ decision: 'deny', reason: 'the permissions service stopped while waiting for approval' })
    expect(() => engine.onResume(tools().handler)).toThrow('onResume(): this engine does not keep questions (durable: false)')
  })

  it('refuses options it cannot use, saying which', () => {
    const store = new MemoryPendingStore()
    expect(() => new PermissionEngine({ pendingStore: store, maxPending: 0 })).toThrow('maxPending must be a positive integer, got 0')
    expect(() => new PermissionEngine({ pendingStore: store, instanceId: '' })).toThrow('instanceId must be a non-empty string of at most 255 characters, got ""')
    expect(() => new PermissionEngine({ pendingStore: { load: async () => ({ records: [], bad: [] }) } as unknown as PendingStore })).toThrow('pendingStore expects a pending store { load, put, remove, claim, get }')
    expect(() => new PermissionEngine({ pendingStore: store }).onResume({ defines: () => true } as unknown as ResumeHandler)).toThrow('onResume() expects a handler { defines(tool), resume(call), check?, schema? }')
  })
})

describe('through the pipeline', () => {
  it('never writes a secret argument: the record holds it masked, and is closed after a restart since the call cannot run from it', async () => {
    const dir = await tempDir()
    const path = join(dir, 'pending.json')
    const { engine, shown } = engineOn(new JsonFilePendingStore(path))
    const registry = new ToolRegistry()
    registry.permissions = engine
    registry.define(defineTool({
      name: 'deploy',
      description: 'Deploy with a token',
      args: Schema.object({ env: Schema.string().required(), token: Schema.string().role('secret').required() }),
      traits: { effect: 'exec' },
      run: () => 'deployed',
    }))
    const result = registry.toolset({ session: caller }).execute([{ id: 'c1', name: 'deploy', arguments: { env: 'prod', token: 'tok-9f8e7d6c5b4a' } }])
    await expect.poll(() => shown.length).toBe(1)
    await shown[0].context.kept
    expect(shown[0].request.args).toEqual({ env: 'prod', token: '••••' })
    const text = await readFile(path, 'utf8')
    expect(text).not.toContain('tok-9f8e7d6c5b4a')
    expect(JSON.parse(text).requests[0]).toMatchObject({ tool: 'deploy', args: { env: 'prod', token: '••••' }, masked: true })
    await engine.stop()
    expect((await result)[0]).toMatchObject({ status: 'denied', content: `Permission denied: ${INTERRUPTED}` })
    const second = engineOn(new JsonFilePendingStore(path))
    await second.engine.ready
    expect(second.shown).toEqual([])
    expect(second.closed).toEqual([{ cause: 'masked', reason: 'its arguments had secret fields, which are never stored, so the call cannot run from the record', record: expect.objectContaining({ tool: 'deploy' }) }])
  })

  it('a tool\'s call.ask from inside its run is kept marked inRun', async () => {
    const store = new MemoryPendingStore()
    const { engine } = engineOn(store)
    const registry = new ToolRegistry()
    registry.permissions = engine
    registry.define(defineTool({
      name: 'clean',
      description: 'Delete build outputs',
      traits: { effect: 'read' },
      run: async (_, call) => {
        await call.ask('delete 3 files in build/')
        return 'cleaned'
      },
    }))
    void registry.toolset({ session: caller }).execute([{ id: 'c1', name: 'clean', arguments: {} }])
    await expect.poll(async () => (await store.load()).records).toEqual([expect.objectContaining({ tool: 'clean', reason: 'delete 3 files in build/', inRun: true })])
  })
})
