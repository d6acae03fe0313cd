// The tools side of an answer given after a restart (issue 46): a ToolRegistry registers its
// ResumeHandler on a permission engine that offers `onResume`, and runs an answered request
// once, through the pipeline, as a background task of the session that asked. The engine is a
// small fake here that calls the handler as PermissionEngine does (defines, check, resume);
// resume-call-engine.spec.ts runs the real one across a restart.
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type CallInfo, defineTool, type Session, ToolRegistry, type ToolResult } from '../src'
import { BackgroundEngine, createTaskTools } from '../src/background'
import type { ApprovalRequest, AuthorizeRequest, PermissionGate } from '../src/permission-gate'
import type { PendingRecord, ResumedCall, ResumeHandler } from '../src/permissions'
import { flush } from './background-helpers'

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 })
})

afterEach(() => {
  vi.useRealTimers()
})

const stored = { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1, host: { selfId: 'bot-1' } }
const alice = { id: 'u1', platform: 'mock' }

/**
 * A permission engine with durable requests, as the tools host sees one: it takes the
 * handler on `onResume`, and `answer` carries out an answer as PermissionEngine does
 * (defines, then check for an edit, then resume). Every authorize and approve is logged: a
 * resumed call must reach neither.
 */
function fakeEngine(decide: (request: AuthorizeRequest) => 'allow' | 'ask' | 'deny' = () => 'ask') {
  const log: string[] = []
  let handler: ResumeHandler | undefined
  const engine: PermissionGate & { onResume(handler: ResumeHandler): () => void } = {
    authorize(request) {
      log.push(`authorize ${request.tool}`)
      return { decision: decide(request) }
    },
    async approve(request: ApprovalRequest) {
      log.push(`approve ${request.tool} ${request.callId}`)
      return { decision: 'deny', reason: 'nobody answers in this test' }
    },
    onResume(given) {
      handler = given
      return () => {
        if (handler === given) handler = undefined
      }
    },
  }
  const answer = async (record: PendingRecord, edit?: unknown): Promise<{ taskId: string } | { refused: string }> => {
    if (!handler) return { refused: 'no tools host' }
    if (!handler.defines(record.tool)) return { refused: `the tool "${record.tool}" is not defined on this instance` }
    let args = record.args
    let changes: readonly string[] | undefined
    if (edit !== undefined) {
      const checked = handler.check!(record.tool, edit, record)
      if ('error' in checked) return { refused: checked.error }
      if (checked.changes.length) ({ args, changes } = checked)
    }
    const call: ResumedCall = { record, args, ...(changes ? { changes } : {}), by: alice, scope: 'once', via: 'button', reason: 'approved by mock:u1 (once) after a restart' }
    return handler.resume(call)
  }
  return { engine, log, answer, handler: () => handler }
}

/** A request kept from before a restart: `save` of a.txt, asked by `stored`. */
function recordOf(over: Partial<PendingRecord> = {}): PendingRecord {
  return {
    id: 'perm_1',
    callId: 'c1',
    tool: 'save',
    args: { file: 'a.txt', text: 'hello' },
    permission: { name: 'fs.write', target: 'a.txt' },
    effect: 'write',
    summary: 'save a.txt',
    reason: 'it writes a.txt',
    session: stored,
    approvers: { userId: 'u1', platform: 'mock', authority: 4 },
    createdAt: 900_000,
    expiresAt: 1_200_000,
    instance: 'a',
    ...over,
  }
}

async function setup(options: { background?: boolean; decide?: Parameters<typeof fakeEngine>[0] } = {}) {
  const ends: { info: CallInfo; result: ToolResult }[] = []
  const registry = new ToolRegistry({
    emit: (name: string, ...args: any[]) => {
      if (name === 'tools/call-end') ends.push({ info: args[0], result: args[1] })
    },
    redact: { patterns: ['s3cr3t-token'] },
    quotas: [{ tools: 'save', per: 'session', max: 2, window: 60_000 }],
  })
  // Reads (task_status) run; anything else is asked, and nobody answers.
  const fake = fakeEngine(options.decide ?? ((request) => request.effect === 'read' ? 'allow' : 'ask'))
  registry.permissions = fake.engine
  const background = new BackgroundEngine()
  await background.load()
  if (options.background !== false) registry.background = background
  for (const tool of createTaskTools(background)) registry.define(tool)
  const runs: { args: unknown; session: Session; id: string }[] = []
  registry.define(defineTool({
    name: 'save',
    description: 'Save a text to a file',
    args: Schema.object({ file: Schema.string().required(), text: Schema.string().default('') }),
    permission: (args) => ({ name: 'fs.write', target: args.file }),
    traits: { effect: 'write' },
    run: (args, call) => {
      runs.push({ args, session: call.session, id: call.id })
      return `saved ${args.text.length} characters to ${args.file} (token s3cr3t-token)`
    },
  }))
  const taskStatus = async (session: string, id?: string) =>
    (await registry.toolset({ session: { id: session } }).execute([{ id: 'ts', name: 'task_status', arguments: id ? { id } : {} }]))[0]
  return { registry, background, ends, runs, taskStatus, ...fake }
}

describe('ToolRegistry: the ResumeHandler it registers', () => {
  it('is given to a gate that offers onResume as it is set, and taken back when the gate is replaced or removed', async () => {
    const registry = new ToolRegistry()
    const first = fakeEngine()
    registry.permissions = first.engine
    expect(first.handler()).toBeDefined()
    const second = fakeEngine()
    registry.permissions = second.engine
    expect(first.handler()).toBeUndefined()
    expect(second.handler()).toBeDefined()
    registry.permissions = undefined
    expect(second.handler()).toBeUndefined()
    // A plain gate, and an engine that keeps no questions (its onResume throws), are used as before.
    registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
    const allowing = fakeEngine(() => 'allow').engine
    const notDurable = { ...allowing, onResume: (): () => void => { throw new Error('onResume(): this engine does not keep questions (durable: false)') } }
    registry.permissions = notDurable
    registry.define(defineTool({ name: 'w', description: 'Write', traits: { effect: 'write' }, run: () => 'ok' }))
    expect((await registry.execute([{ id: 'c', name: 'w' }], { session: { id: 's' } }))[0]).toMatchObject({ status: 'ok' })
  })

  it('defines the registry\'s tools, and gives the schema of those with fields to edit', async () => {
    const { handler, registry } = await setup()
    expect(handler()!.defines('save')).toBe(true)
    expect(handler()!.defines('gone')).toBe(false)
    expect(handler()!.schema!('save')).toBe(registry.get('save')!.args)
    expect(handler()!.schema!('gone')).toBeUndefined()
  })
})

describe('a call resumed after a restart', () => {
  it('runs once, as a background task of the session that asked, and no one is asked again', async () => {
    const { answer, runs, log, background, taskStatus } = await setup()
    const started = await answer(recordOf())
    expect(started).toEqual({ taskId: expect.stringMatching(/^task_/) })
    const { taskId } = started as { taskId: string }
    await flush()
    expect(runs).toEqual([{ args: { file: 'a.txt', text: 'hello' }, session: expect.objectContaining({ id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1 }), id: 'c1/resumed' }])
    // The host's own session fields (the bot it came through) are kept for the notice.
    expect((runs[0].session as { host?: unknown }).host).toEqual({ selfId: 'bot-1' })
    expect(log).toEqual([])
    const task = background.get(taskId)!
    expect(task).toMatchObject({ callId: 'c1/resumed', tool: 'save', session: { id: 'mock:c1' }, status: 'succeeded' })
    // The result is redacted like any call's, and the session's task_status shows it.
    expect(task.result!.content).toBe('saved 5 characters to a.txt (token [redacted])')
    expect((await taskStatus('mock:c1')).content).toContain(`${taskId} (save): succeeded`)
    expect((await taskStatus('mock:c1', taskId)).content).toContain('Its result:\nsaved 5 characters to a.txt (token [redacted])')
    expect((await taskStatus('mock:other', taskId)).content).toContain(`no background task "${taskId}" in this conversation`)
  })

  it('refuses a second resume of the same request: the call runs once', async () => {
    const { answer, runs } = await setup()
    await answer(recordOf())
    await expect(answer(recordOf())).rejects.toThrow('permission request perm_1 was already resumed on this instance; its call runs once')
    await flush()
    expect(runs).toHaveLength(1)
  })

  it('refuses a tool removed meanwhile, and one its visibility now hides from the session', async () => {
    const { answer, handler, registry, runs } = await setup()
    const remove = registry.define(defineTool({ name: 'gone', description: 'Gone soon', traits: { effect: 'write' }, run: () => { runs.push({ args: 'gone', session: { id: '' }, id: '' }); return 'ran' } }))
    remove()
    expect(await answer(recordOf({ id: 'perm_gone', tool: 'gone' }))).toEqual({ refused: 'the tool "gone" is not defined on this instance' })
    // Gone between the engine's check and the run.
    await expect(handler()!.resume({ record: recordOf({ id: 'perm_gone2', tool: 'gone' }), args: {}, by: alice, scope: 'once', reason: 'approved' })).rejects.toThrow('the tool "gone" is no longer defined on this instance')
    registry.define(defineTool({ name: 'hidden', description: 'Admins only', traits: { effect: 'write' }, visibility: (session) => (session.authority ?? 0) >= 4, run: () => { runs.push({ args: 'hidden', session: { id: '' }, id: '' }); return 'ran' } }))
    await expect(answer(recordOf({ id: 'perm_hidden', tool: 'hidden', args: {} }))).rejects.toThrow('the tool "hidden" is no longer available to session mock:c1 (its visibility hides it)')
    await flush()
    expect(runs).toEqual([])
  })

  it('refuses arguments that no longer validate (a record changed on disk)', async () => {
    const { answer, runs, ends } = await setup()
    await expect(answer(recordOf({ args: { file: 42 } }))).rejects.toThrow(/^its arguments no longer validate: /)
    // A JSON text where the object was is not parsed into one.
    await expect(answer(recordOf({ id: 'perm_text', args: '{"file":"a.txt"}' }))).rejects.toThrow('its arguments are not an object')
    await flush()
    expect(runs).toEqual([])
    expect(ends.at(-1)!.result).toMatchObject({ id: 'c1/resumed', status: 'error', code: 'invalid_arguments' })
  })

  it('validates an edit as the pipeline does, runs the edited call with its own permission, and tells the result it was edited', async () => {
    const { answer, handler, runs, background } = await setup()
    const check = (tool: string, args: unknown, record?: PendingRecord) => handler()!.check!(tool, args, record)
    // Each refusal with its structured form, for a person's locale (describeRevision).
    expect(check('save', { file: 7 }, recordOf())).toEqual({
      error: expect.stringContaining('file'),
      refusal: { kind: 'validation', problems: [{ path: '$.file', kind: 'type', params: { expected: { type: 'string' }, got: { type: 'number', text: '7' } } }] },
    })
    expect(check('save', { file: 'b.txt', txt: 'typo' }, recordOf())).toEqual({
      error: 'the edited arguments set `txt` at $.txt, which is not a field of this tool\'s arguments — did you mean `text`? The fields there are: `file`, `text`.',
      refusal: { kind: 'unknown_field', path: '$.txt', key: 'txt', names: ['file', 'text'], suggestion: 'text' },
    })
    expect(check('save', 'not an object', recordOf())).toEqual({ error: 'the edited arguments must be a JSON object', refusal: { kind: 'not_object' } })
    expect(check('gone', {}, recordOf())).toEqual({ error: 'the tool "gone" is not defined on this instance', refusal: { kind: 'not_editable' } })
    expect(check('save', { file: 'b.txt', text: 'hello' }, recordOf())).toEqual({
      args: { file: 'b.txt', text: 'hello' },
      changes: ['$.file: "a.txt" → "b.txt"'],
      permission: { name: 'fs.write', target: 'b.txt' },
    })
    const { taskId } = await answer(recordOf(), { file: 'b.txt', text: 'hello' }) as { taskId: string }
    await flush()
    expect(runs.map((run) => run.args)).toEqual([{ file: 'b.txt', text: 'hello' }])
    expect(background.get(taskId)!.result!.content).toBe('A person changed your arguments before approving this call; it ran with these changes:\n$.file: "a.txt" → "b.txt"\n\nsaved 5 characters to b.txt (token [redacted])')
  })

  it('denies, without asking, a call that needs another permission than the one approved', async () => {
    // The record says a.txt was approved; its arguments (changed on disk, or a tool updated
    // meanwhile) now need b.txt: nobody approved that.
    const { answer, runs, log, background } = await setup()
    const { taskId } = await answer(recordOf({ args: { file: 'b.txt', text: '' } })) as { taskId: string }
    await flush()
    expect(runs).toEqual([])
    expect(log).toEqual([])
    expect(background.get(taskId)).toMatchObject({ status: 'failed', result: { status: 'denied', content: 'Permission denied: it was approved after a restart for "fs.write" on "a.txt", but the call now needs "fs.write" on "b.txt"' } })
  })

  it('holds an edit checked without its record to the record\'s permission: the engine authorized that one', async () => {
    const { handler, runs, background } = await setup()
    // Without the record, check gives no permission (the engine then authorizes the record's).
    const checked = handler()!.check!('save', { file: 'b.txt', text: 'hello' })
    expect(checked).toEqual({ args: { file: 'b.txt', text: 'hello' }, changes: ['+ $.file: "b.txt"', '+ $.text: "hello"'] })
    const { args, changes } = checked as { args: unknown; changes: readonly string[] }
    const { taskId } = await handler()!.resume({ record: recordOf(), args, changes, by: alice, scope: 'once', reason: 'approved' })
    await flush()
    expect(runs).toEqual([])
    expect(background.get(taskId)!.result).toMatchObject({ status: 'denied', content: 'Permission denied: it was approved after a restart for "fs.write" on "a.txt", but the call now needs "fs.write" on "b.txt"' })
  })

  it('passes the limits of any call: a quota used up ends the task rate_limited, without running', async () => {
    const { answer, runs, background } = await setup()
    await answer(recordOf({ id: 'p1' }))
    await answer(recordOf({ id: 'p2' }))
    const { taskId } = await answer(recordOf({ id: 'p3' })) as { taskId: string }
    await flush()
    expect(runs).toHaveLength(2)
    expect(background.get(taskId)).toMatchObject({ status: 'failed', result: { status: 'rate_limited', code: 'rate_limited' } })
  })

  it('runs through the middlewares, like any call', async () => {
    const { answer, registry, background } = await setup()
    const seen: string[] = []
    registry.use(async (call, next) => {
      seen.push(`${call.name} ${call.id}`)
      return next()
    }, { name: 'trace' })
    const { taskId } = await answer(recordOf()) as { taskId: string }
    await flush()
    expect(seen).toEqual(['save c1/resumed'])
    expect(background.get(taskId)!.status).toBe('succeeded')
  })

  it('reports the call as handed to the background, with the ask it answers, then its end through the task', async () => {
    const { answer, ends, background } = await setup()
    const { taskId } = await answer(recordOf()) as { taskId: string }
    await flush()
    // One `tools/call-end`: the hand-over. The end is the task's (`background/settled`).
    expect(ends).toHaveLength(1)
    expect(ends[0].result).toMatchObject({ id: 'c1/resumed', status: 'background', taskId })
    expect(ends[0].info.resumes).toEqual({ callId: 'c1', requestId: 'perm_1', askedAt: 900_000, by: alice, scope: 'once', via: 'button', approvers: { userId: 'u1', platform: 'mock', authority: 4 } })
    expect(background.get(taskId)!.status).toBe('succeeded')
  })

  it('without a background service, runs all the same: the result reaches tools/call-end only', async () => {
    const { answer, ends, runs } = await setup({ background: false })
    expect(await answer(recordOf())).toEqual({ taskId: '' })
    await flush()
    expect(runs).toHaveLength(1)
    expect(ends.map(({ result }) => [result.id, result.status, result.content])).toEqual([['c1/resumed', 'ok', 'saved 5 characters to a.txt (token [redacted])']])
    expect(ends[0].info.resumes).toMatchObject({ callId: 'c1', requestId: 'perm_1' })
  })

  it('keeps its tool\'s timeout unless the tool may run in the background', async () => {
    const { answer, registry, background } = await setup()
    const running: { signal: AbortSignal }[] = []
    registry.define(defineTool({ name: 'hang', description: 'Never ends', traits: { effect: 'write', timeout: 1_000, background: false }, run: (_, call) => new Promise(() => { running.push(call) }) }))
    registry.define(defineTool({ name: 'long', description: 'Takes long', traits: { effect: 'write', timeout: 1_000, background: true }, run: (_, call) => new Promise((resolve) => { running.push(call); setTimeout(() => resolve('done'), 5_000) }) }))
    const hang = await answer(recordOf({ id: 'p-hang', tool: 'hang', args: {}, permission: { name: 'tool:hang' } })) as { taskId: string }
    const long = await answer(recordOf({ id: 'p-long', tool: 'long', args: {}, permission: { name: 'tool:long' } })) as { taskId: string }
    await vi.advanceTimersByTimeAsync(5_000)
    expect(background.get(hang.taskId)).toMatchObject({ status: 'failed', result: { status: 'timed_out', content: 'Timed out: timed out after 1s.' } })
    expect(background.get(long.taskId)).toMatchObject({ status: 'succeeded', result: { content: 'done' } })
  })

  it('cannot be reached by a model\'s call: the same id, tool and arguments are authorized and asked as usual', async () => {
    const { answer, registry, runs, log } = await setup()
    await answer(recordOf())
    await flush()
    expect(log).toEqual([])
    // The model sends what the resumed call was: its id, tool and arguments, even a field named like a mark.
    const toolset = registry.toolset({ session: { ...stored } })
    const [same] = await toolset.execute([{ id: 'c1/resumed', name: 'save', arguments: { file: 'a.txt', text: 'hello' } }])
    const [marked] = await toolset.execute([{ id: 'c1', name: 'save', arguments: JSON.stringify({ file: 'a.txt', resumes: { requestId: 'perm_1' } }) }])
    expect(same).toMatchObject({ status: 'denied', content: 'Permission denied: nobody answers in this test' })
    expect(marked).toMatchObject({ status: 'denied' })
    expect(log.filter((line) => !line.startsWith('authorize task_'))).toEqual(['authorize save', 'approve save c1/resumed', 'authorize save', 'approve save c1'])
    expect(runs).toHaveLength(1)
  })
})
