// The two doors a framework adapter (@dogu/frameworks) uses: `toolset.decide(call)` tells
// its `needsApproval` what the engine would do without making the call, and
// `execute(calls, { answers })` hands the framework user's answer to the call's question.
// `forSession` keys a framework's thread to its own Dogu session.
import { EventEmitter } from 'node:events'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { AuditLog, type DecisionEvent, defineTool, PermissionEngine, type PermissionEngineOptions, type Session, ToolRegistry } from '../src'

const session: Session = { id: 'thread-1', userId: 'alice', platform: 'web' }
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

function setup(options: PermissionEngineOptions = {}) {
  const audit = new AuditLog()
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ ...options, onDecision: (event) => { decisions.push(event); audit.onDecision(event) } })
  const registry = new ToolRegistry({ repair: true, emit: (name, ...args) => { if (name === 'tools/call-end') audit.onCallEnd(args[0] as never, args[1] as never) } })
  registry.permissions = engine
  const runs: string[] = []
  registry.define(defineTool({ name: 'lookup', description: 'Look up', args: Schema.object({ q: Schema.string().required() }), traits: { effect: 'read' }, run: ({ q }) => { runs.push(`lookup ${q}`); return `found ${q}` } }))
  registry.define(defineTool({ name: 'save', description: 'Save a note', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'write' }, run: ({ text }) => { runs.push(`save ${text}`); return `saved ${text}` } }))
  stops.push(() => audit.stop())
  return { registry, engine, audit, decisions, runs, toolset: registry.toolset({ session }) }
}

const allowBy = (scope?: 'once' | 'session' | 'always') => ({ decision: 'allow' as const, by: 'alice', via: 'ai-sdk', ...(scope ? { scope } : {}) })

describe('toolset.decide', () => {
  it('says what the engine would do, without asking, running or auditing anything', async () => {
    const { toolset, engine, audit, decisions, runs } = setup({ rules: [{ permission: 'tool:save', target: undefined, decision: 'ask' }] })
    let asked = 0
    engine.addAsker(() => { asked++ })
    expect(await toolset.decide({ id: 'a', name: 'lookup', arguments: { q: 'x' } })).toMatchObject({ decision: 'allow', tool: 'lookup' })
    expect(await toolset.decide({ id: 'b', name: 'save', arguments: { text: 'x' } })).toMatchObject({ decision: 'ask', tool: 'save', permission: { name: 'tool:save' } })
    // Broken JSON is repaired before the decision, as it would be when the call is made.
    expect(await toolset.decide({ id: 'c', name: 'save', arguments: "{text: 'x'}" })).toMatchObject({ decision: 'ask' })
    expect(await toolset.decide({ id: 'd', name: 'save', arguments: { text: 3 } })).toEqual({ decision: 'invalid', tool: 'save' })
    expect(await toolset.decide({ id: 'e', name: 'nope', arguments: {} })).toEqual({ decision: 'invalid' })
    await audit.flush()
    expect({ asked, runs, decisions: decisions.length, records: (await audit.query()).length }).toEqual({ asked: 0, runs: [], decisions: 0, records: 0 })
  })

  it('is a deny for a call a rule denies, so no approval is asked for it', async () => {
    const { toolset } = setup({ rules: [{ permission: 'tool:save', decision: 'deny', name: 'read-only bot' }] })
    expect(await toolset.decide({ id: 'a', name: 'save', arguments: { text: 'x' } })).toMatchObject({ decision: 'deny', reason: expect.stringContaining('read-only bot') })
  })
})

describe('execute({ answers })', () => {
  it('runs an asked call once with the framework user\'s answer, needing no asker, and audits who answered and how', async () => {
    const { toolset, audit, runs } = setup()
    const [result] = await toolset.execute([{ id: 'call-1', name: 'save', arguments: { text: 'hi' } }], { answers: { 'call-1': allowBy() } })
    expect(result).toMatchObject({ status: 'ok', content: 'saved hi' })
    expect(runs).toEqual(['save hi'])
    await audit.flush()
    const [record] = await audit.query()
    expect(record).toMatchObject({ callId: 'call-1', outcome: 'ok', ask: { ended: 'answer', decision: 'allow', by: { id: 'alice' }, via: 'ai-sdk', scope: 'once' } })
  })

  it('remembers a session answer for that session only: another thread is asked again', async () => {
    const { toolset, engine } = setup()
    await toolset.execute([{ id: 'c1', name: 'save', arguments: { text: 'a' } }], { answers: { c1: allowBy('session') } })
    expect(engine.grants()).toMatchObject([{ scope: 'session', subject: { sessionId: 'thread-1' } }])
    expect(await toolset.decide({ id: 'c2', name: 'save', arguments: { text: 'b' } })).toMatchObject({ decision: 'allow' })
    const other = toolset.forSession({ ...session, id: 'thread-2' })
    expect(other.session.id).toBe('thread-2')
    expect(await other.decide({ id: 'c3', name: 'save', arguments: { text: 'c' } })).toMatchObject({ decision: 'ask' })
  })

  it('authorizes again as the call is made: a deny rule added after the question wins over the answer', async () => {
    const { toolset, engine, runs } = setup()
    expect(await toolset.decide({ id: 'c1', name: 'save', arguments: { text: 'a' } })).toMatchObject({ decision: 'ask' })
    engine.addRule({ permission: 'tool:save', decision: 'deny', name: 'frozen' })
    const [result] = await toolset.execute([{ id: 'c1', name: 'save', arguments: { text: 'a' } }], { answers: { c1: allowBy('always') } })
    expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining('frozen') })
    expect({ runs, grants: engine.grants() }).toEqual({ runs: [], grants: [] })
  })

  it('ignores an answer for a call the rules allow: nothing is remembered from it', async () => {
    const { toolset, engine, runs } = setup()
    await toolset.execute([{ id: 'c1', name: 'lookup', arguments: { q: 'a' } }], { answers: { c1: allowBy('always') } })
    expect({ runs, grants: engine.grants() }).toEqual({ runs: ['lookup a'], grants: [] })
  })

  it('gives the model the rejection as a denial naming who declined', async () => {
    const { toolset, runs } = setup()
    const [result] = await toolset.execute([{ id: 'c1', name: 'save', arguments: { text: 'a' } }], { answers: { c1: { decision: 'deny', by: 'alice', via: 'ai-sdk', reason: 'not now' } } })
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: alice declined it: not now', params: { cause: 'declined', by: 'alice' } })
    expect(runs).toEqual([])
  })

  it('keeps a person\'s no final: a call the rules would now allow is still declined, and audited so', async () => {
    const { toolset, audit, runs } = setup()
    const [result] = await toolset.execute([{ id: 'c1', name: 'lookup', arguments: { q: 'a' } }], { answers: { c1: { decision: 'deny', by: 'alice', via: 'openai-agents' } } })
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: alice declined it' })
    expect(runs).toEqual([])
    await audit.flush()
    expect(await audit.query()).toMatchObject([{ callId: 'c1', outcome: 'denied', ask: { ended: 'answer', decision: 'deny', by: { id: 'alice' }, via: 'openai-agents' } }])
  })

  it('refuses an answer from someone the rule does not let approve, saying who may', async () => {
    const { toolset, runs } = setup({ rules: [{ permission: 'tool:save', decision: 'ask', approvers: { users: ['ops'], caller: false } }] })
    const [result] = await toolset.execute([{ id: 'c1', name: 'save', arguments: { text: 'a' } }], { answers: { c1: allowBy() } })
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: the approval given by alice does not count: only users ops may approve it' })
    expect(runs).toEqual([])
  })

  it('answers only the call whose id it names, in a batch', async () => {
    const { toolset, engine, runs } = setup()
    let asked = 0
    engine.addAsker((request, context) => { asked++; context.respond({ decision: 'deny', by: 'alice', reason: 'asked in the chat' }) })
    const results = await toolset.execute([
      { id: 'c1', name: 'save', arguments: { text: 'a' } },
      { id: 'c2', name: 'save', arguments: { text: 'b' } },
    ], { answers: { c1: allowBy() } })
    expect(results.map((result) => result.status)).toEqual(['ok', 'denied'])
    expect({ runs, asked }).toEqual({ runs: ['save a'], asked: 1 })
  })

  it('refuses answers that are not an object of answers', async () => {
    const { toolset } = setup()
    await expect(toolset.execute([{ id: 'c1', name: 'save', arguments: { text: 'a' } }], { answers: 'yes' as never })).rejects.toThrow('execute() expects answers as an object of answers by call id')
  })
})

describe('one signal shared by many calls', () => {
  it('cancels every call waiting on it, with one listener on the signal: no MaxListenersExceededWarning', async () => {
    const registry = new ToolRegistry()
    let release!: () => void
    const started = new Promise<void>((resolve) => { release = resolve })
    let running = 0
    registry.define(defineTool({
      name: 'wait',
      description: 'Waits until cancelled',
      traits: { effect: 'read', parallel: true },
      run: (_args, call) => new Promise((resolve) => {
        if (++running === 20) release()
        call.signal.addEventListener('abort', () => resolve('stopped'))
      }),
    }))
    const toolset = registry.toolset({ session })
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const controller = new AbortController()
      // As a framework runs a turn's calls: each on its own, all with the turn's signal.
      const calls = Array.from({ length: 20 }, (_, i) => toolset.execute([{ id: `c${i}`, name: 'wait', arguments: {} }], { signal: controller.signal }))
      await started
      controller.abort()
      const results = (await Promise.all(calls)).flat()
      expect(results.map((result) => result.status)).toEqual(Array(20).fill('cancelled'))
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('leaves no listener on a signal that never aborts once its calls are done', async () => {
    const { toolset } = setup()
    const controller = new AbortController()
    for (let i = 0; i < 30; i++) await toolset.execute([{ id: `c${i}`, name: 'lookup', arguments: { q: 'a' } }], { signal: controller.signal })
    await new Promise((resolve) => setImmediate(resolve))
    expect(EventEmitter.getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })
})
