// An answer given after a restart, end to end with the real PermissionEngine (issue 46): a
// restart is a second registry, permission engine, background engine and audit log on the
// stores the first left behind. The call waits, the process stops, the question is asked
// again, and an answer runs the call once as a background task of the session that asked;
// the audit log shows the wait, the restart and the answer.
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { AuditLog, type AuditRecord, MemoryAuditStore } from '../src/audit'
import { BackgroundEngine, createTaskTools } from '../src/background'
import { MemoryTaskStore } from '../src/background/task-store'
import { defineTool, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskerContext, MemoryPendingStore, PermissionEngine, type PermissionRequest } from '../src/permissions'

const caller: Session = { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1 }
const alice = { id: 'u1', platform: 'mock' }
const INTERRUPTED = 'interrupted while waiting for approval (the request is kept and asked again after a restart)'

const stops: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

/** What a restart leaves: the pending requests, the tasks and the audit records. */
function storesOf() {
  return { pending: new MemoryPendingStore(), tasks: new MemoryTaskStore(), audit: new MemoryAuditStore() }
}

/** One run of the bot's process on `stores`: its tools, permissions, background tasks and audit log, wired as a host wires them. */
async function processOn(stores: ReturnType<typeof storesOf>) {
  const log = new AuditLog({ store: stores.audit })
  const registry = new ToolRegistry({
    emit: (name: string, ...args: any[]) => {
      if (name === 'tools/call-end') log.onCallEnd(args[0], args[1])
    },
  })
  const engine = new PermissionEngine({
    pendingStore: stores.pending,
    instanceId: 'bot',
    rules: [{ permission: 'tool:task_*', decision: 'allow' }],
    onDecision: (event) => log.onDecision(event),
  })
  const background = new BackgroundEngine({ store: stores.tasks, onSettled: (task) => log.onTaskSettled(task) })
  await Promise.all([engine.ready, background.load()])
  registry.background = background
  for (const tool of createTaskTools(background)) registry.define(tool)
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'save',
    description: 'Save a text to a file',
    args: Schema.object({ file: Schema.string().required(), text: Schema.string().default('') }),
    permission: (args) => ({ name: 'fs.write', target: args.file }),
    traits: { effect: 'write' },
    run: (args) => {
      runs.push(args)
      return `saved ${args.text.length} characters to ${args.file}`
    },
  }))
  // Attached once the tools are defined: a restored question's edit form is made from the tool's schema then.
  registry.permissions = engine
  const shown: { request: PermissionRequest; context: AskerContext }[] = []
  engine.addAsker((request, context) => { shown.push({ request, context }) })
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await background.dispose()
    await engine.stop()
    await log.stop()
  }
  stops.push(stop)
  const call = (name: string, args: Record<string, unknown>, id = 'c1', session = caller): Promise<ToolResult> =>
    registry.toolset({ session }).execute([{ id, name, arguments: args }]).then(([result]) => result)
  return { log, registry, engine, background, shown, runs, call, stop }
}

/** A question asked in a first process, kept, and the process stopped while it waited; then the second process. */
async function askedThenRestarted(args: Record<string, unknown> = { file: 'a.txt', text: 'hello' }) {
  const stores = storesOf()
  const first = await processOn(stores)
  const waiting = first.call('save', args)
  await new Promise((resolve) => setTimeout(resolve, 0))
  expect(first.shown).toHaveLength(1)
  expect(await first.shown[0].context.kept).toBe(true)
  const asked = first.shown[0].request
  await first.stop()
  expect(await waiting).toMatchObject({ status: 'denied', content: `Permission denied: ${INTERRUPTED}` })
  const second = await processOn(stores)
  expect(second.shown).toHaveLength(1)
  return { stores, first, second, asked, question: second.shown[0] }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

describe('an answer after a restart, with the real permission engine', () => {
  it('runs the call once as a background task of the caller\'s session, which task_status shows; the audit log shows the wait, the restart and the answer', async () => {
    const { second, asked, question } = await askedThenRestarted()
    expect(question.request.restored).toMatchObject({ originalId: asked.id })
    const answered = await question.context.answer!({ decision: 'allow', by: alice, via: 'text' })
    expect(answered).toMatchObject({ status: 'accepted', taskId: expect.stringMatching(/^task_/) })
    const taskId = (answered as { taskId: string }).taskId
    await settle()
    expect(second.runs).toEqual([{ file: 'a.txt', text: 'hello' }])
    expect(second.background.get(taskId)).toMatchObject({ callId: 'c1/resumed', session: { id: caller.id }, status: 'succeeded', result: { content: 'saved 5 characters to a.txt' } })
    expect((await second.call('task_status', { id: taskId }, 'ts')).content).toContain('succeeded after')
    // Nothing more runs: the question is closed, and a second answer finds it so.
    expect(question.context.respond({ decision: 'allow', by: alice })).toBe('closed')
    await settle()
    expect(second.runs).toHaveLength(1)

    const records = (await second.log.export()).filter((record) => record.tool === 'save')
    expect(records).toEqual([
      expect.objectContaining({ callId: 'c1', outcome: 'denied', reason: INTERRUPTED, ask: expect.objectContaining({ requestId: asked.id, ended: 'stopped', decision: 'deny' }) }),
      expect.objectContaining({
        callId: 'c1/resumed',
        outcome: 'background',
        taskId,
        args: { file: 'a.txt', text: 'hello' },
        caller: expect.objectContaining({ sessionId: caller.id, userId: 'u1' }),
        resumes: { callId: 'c1', requestId: asked.id, askedAt: asked.createdAt },
        ask: expect.objectContaining({ requestId: asked.id, ended: 'answer', decision: 'allow', by: alice, via: 'text', scope: 'once' }),
      }),
      expect.objectContaining({ callId: 'c1/resumed', taskId, taskStatus: 'succeeded', outcome: 'ok' }),
    ])
  })

  it('runs an edit given after the restart with the edited arguments, validated and authorized for their own target; the record says it was edited', async () => {
    const { second, question } = await askedThenRestarted()
    second.engine.addRule({ permission: 'fs.write', target: 'secret.txt', decision: 'deny', name: 'not that file' })
    expect(question.request.input).toBeDefined()
    expect(question.context.respond({ decision: 'allow', by: alice, value: { file: 'a.txt', text: 7 } })).toBe('invalid')
    // The edited call is authorized as the call it became: a rule on its new target wins.
    expect(await question.context.answer!({ decision: 'allow', by: alice, value: { file: 'secret.txt', text: 'hello' } })).toMatchObject({ status: 'refused', reason: expect.stringContaining('not that file') })
    expect(second.runs).toEqual([])
  })

  it('gives a restored question the edit form of a tool defined after the engine was attached', async () => {
    const { stores } = await askedThenRestarted()
    const engine = new PermissionEngine({ pendingStore: stores.pending, instanceId: 'bot' })
    stops.push(() => engine.stop())
    await engine.ready
    const registry = new ToolRegistry()
    registry.permissions = engine
    expect(engine.pending()[0].input).toBeUndefined()
    // The tool's plugin loads after the permission service, as in a host.
    registry.define(defineTool({ name: 'save', description: 'Save', args: Schema.object({ file: Schema.string().required(), text: Schema.string() }), traits: { effect: 'write' }, run: () => 'saved' }))
    const shown: PermissionRequest[] = []
    engine.addAsker((request) => { shown.push(request) })
    expect(shown[0].input).toMatchObject({ initial: { file: 'a.txt', text: 'hello' } })
    expect(shown[0].input!.check({ file: 'a.txt', text: 7 })).toEqual(expect.stringContaining('text'))
  })

  it('runs an edit of the target given after the restart once, with what the person changed', async () => {
    const { second, question } = await askedThenRestarted()
    const answered = await question.context.answer!({ decision: 'allow', by: alice, value: { file: 'b.txt', text: 'good bye' } })
    expect(answered).toMatchObject({ status: 'accepted' })
    await settle()
    expect(second.runs).toEqual([{ file: 'b.txt', text: 'good bye' }])
    expect(second.background.get((answered as { taskId: string }).taskId)!.result!.content).toBe(
      'A person changed your arguments before approving this call; it ran with these changes:\n$.file: "a.txt" → "b.txt"\n$.text: "hello" → "good bye"\n\nsaved 8 characters to b.txt')
    const [resumed] = (await second.log.export()).filter((record) => record.callId === 'c1/resumed' && record.outcome === 'background')
    expect(resumed).toMatchObject({ args: { file: 'b.txt', text: 'good bye' }, ask: { edited: true } })
  })

  it('records a no given after the restart as a denial linked to the ask; nothing runs', async () => {
    const { second, asked, question } = await askedThenRestarted()
    expect(await question.context.answer!({ decision: 'deny', by: alice, reason: 'not now' })).toMatchObject({ status: 'accepted' })
    await settle()
    expect(second.runs).toEqual([])
    const records = (await second.log.export()).filter((record) => record.tool === 'save')
    expect(records).toHaveLength(2)
    expect(records[1]).toMatchObject({
      callId: 'c1',
      outcome: 'denied',
      code: 'permission_denied',
      reason: 'mock:u1 declined it: not now',
      resumes: { callId: 'c1', requestId: asked.id, askedAt: asked.createdAt },
      ask: { requestId: asked.id, ended: 'answer', decision: 'deny', by: alice },
    })
  })

  it('records a deny rule added while the bot was down as a denial linked to the ask, with the time it was asked', async () => {
    const { second, asked, question } = await askedThenRestarted()
    second.engine.addRule({ permission: 'fs.write', decision: 'deny', name: 'no writes' })
    expect(await question.context.answer!({ decision: 'allow', by: alice })).toMatchObject({ status: 'refused' })
    await settle()
    expect(second.runs).toEqual([])
    const [, denied] = (await second.log.export()).filter((record) => record.tool === 'save')
    expect(denied).toMatchObject({
      callId: 'c1',
      outcome: 'denied',
      reason: expect.stringContaining('rule "no writes"'),
      decided: { kind: 'rule', name: 'no writes' },
      resumes: { callId: 'c1', requestId: asked.id, askedAt: asked.createdAt },
    })
  })

  it.each(['always', 'session'] as const)('an "%s" answer after the restart: the resumed call\'s record names the grant it made, as a live answer\'s does', async (scope) => {
    const { second, question } = await askedThenRestarted()
    const answered = await question.context.answer!({ decision: 'allow', by: alice, scope })
    expect(answered).toMatchObject({ status: 'accepted', reason: `approved by mock:u1 (${scope}) after a restart` })
    await settle()
    const [grant] = second.engine.grants()
    expect(grant).toMatchObject({ scope, permission: 'fs.write', target: 'a.txt', by: 'mock:u1' })
    // The same answer given live, for another file: its record names its grant the same way.
    const live = second.call('save', { file: 'b.txt' }, 'c2')
    await settle()
    second.shown[1].context.respond({ decision: 'allow', by: alice, scope })
    expect(await live).toMatchObject({ status: 'ok' })
    const records = await second.log.export()
    const resumed = records.find((record) => record.callId === 'c1/resumed' && record.outcome === 'background')
    const liveGrant = second.engine.grants().find((item) => item.target === 'b.txt')!
    expect(resumed!.ask).toMatchObject({ ended: 'answer', decision: 'allow', by: alice, scope, grantId: grant.id })
    expect(records.find((record) => record.callId === 'c2')!.ask).toMatchObject({ ended: 'answer', decision: 'allow', by: alice, scope, grantId: liveGrant.id })
  })

  it('leaves no way in for a model: its call with the resumed call\'s id, tool and arguments is asked as usual', async () => {
    const { second, question } = await askedThenRestarted()
    await question.context.answer!({ decision: 'allow', by: alice })
    await settle()
    const asked = second.call('save', { file: 'a.txt', text: 'hello' }, 'c1/resumed')
    await settle()
    expect(second.shown.map((shown) => shown.request.callId)).toEqual(['c1', 'c1/resumed'])
    expect(second.shown[1].request.restored).toBeUndefined()
    second.shown[1].context.respond({ decision: 'deny', by: alice })
    expect(await asked).toMatchObject({ status: 'denied' })
    expect(second.runs).toHaveLength(1)
  })
})

describe('the audit records of a restart', () => {
  it('a call still waiting when the process stops is recorded, with its ask, even when the log stops at once after the engine', async () => {
    const stores = storesOf()
    const first = await processOn(stores)
    const waiting = first.call('save', { file: 'a.txt' })
    await new Promise((resolve) => setTimeout(resolve, 0))
    const asked = first.shown[0].request
    // No await between them: the call ends after the log stopped taking records.
    const stopped = Promise.all([first.engine.stop(), first.log.stop()])
    await stopped
    expect(await waiting).toMatchObject({ status: 'denied' })
    const records = await new AuditLog({ store: stores.audit }).export()
    expect(records).toEqual([expect.objectContaining({
      tool: 'save', callId: 'c1', outcome: 'denied', code: 'permission_denied', reason: INTERRUPTED, args: { file: 'a.txt', text: '' },
      caller: expect.objectContaining({ sessionId: caller.id }),
      ask: expect.objectContaining({ requestId: asked.id, ended: 'stopped', decision: 'deny' }),
    })])
  })

  it('a call recorded from its interrupted ask at a flush is not recorded again when it ends', async () => {
    const stores = storesOf()
    const first = await processOn(stores)
    const waiting = first.call('save', { file: 'a.txt' })
    await new Promise((resolve) => setTimeout(resolve, 0))
    // A host flushing on exit, right after stopping the engine.
    void first.engine.stop()
    await first.log.flush()
    await waiting
    await first.log.stop()
    expect(await new AuditLog({ store: stores.audit }).export()).toHaveLength(1)
  })

  it('a background task a restart cut off gets its second record, interrupted', async () => {
    const stores = storesOf()
    const first = await processOn(stores)
    first.engine.addRule({ permission: 'tool:slow', decision: 'allow' })
    first.registry.define(defineTool({ name: 'slow', description: 'Never ends', traits: { effect: 'write', timeout: 20 }, run: () => new Promise(() => {}) }))
    const moved = await first.call('slow', {}, 'c-slow')
    expect(moved).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
    // The process is killed: nothing is disposed, only what reached the stores is left.
    await first.log.flush()
    const second = await processOn(stores)
    expect(second.background.get(moved.taskId!)).toMatchObject({ status: 'interrupted' })
    const records = (await second.log.export()).filter((record: AuditRecord) => record.tool === 'slow')
    expect(records).toEqual([
      expect.objectContaining({ callId: 'c-slow', outcome: 'background', taskId: moved.taskId }),
      expect.objectContaining({ callId: 'c-slow', taskId: moved.taskId, taskStatus: 'interrupted', outcome: 'error' }),
    ])
  })
})
