import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defineTool, type ToolCall, ToolRegistry, type ToolResult, type Toolset } from '../src'
import { BackgroundEngine, createTaskTools } from '../src/background'
import { flush } from './background-helpers'
import { testGate } from './gate'

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 })
})

afterEach(() => {
  vi.useRealTimers()
})

interface Slow {
  call: ToolCall
  finish(text: string): void
  abortedWith?: string
}

async function setup(options: { background?: boolean; engine?: boolean } = {}) {
  const events: string[] = []
  const engine = new BackgroundEngine({ onSettled: (task) => events.push(`settled ${task.tool} ${task.status} ${task.session.id}`) })
  await engine.load()
  const registry = new ToolRegistry({
    emit: (name: string, ...args: any[]) => {
      if (name === 'tools/call-end') events.push(`end ${args[0].name} ${args[1].status}`)
    },
  })
  registry.permissions = testGate().gate
  if (options.engine !== false) registry.background = engine
  for (const tool of createTaskTools(engine)) registry.define(tool)
  const slow: Slow[] = []
  registry.define(defineTool({
    name: 'slow',
    description: 'Takes its time',
    traits: { effect: 'read', timeout: 1_000, background: options.background ?? true },
    run: (_, call) => new Promise<string>((resolve) => {
      const entry: Slow = { call, finish: resolve }
      call.signal.addEventListener('abort', () => { entry.abortedWith = String(call.signal.reason?.message) })
      slow.push(entry)
    }),
  }))
  const toolset = (id = 's1') => registry.toolset({ session: { id } })
  return { engine, registry, events, slow, toolset }
}

const call = async (toolset: Toolset, name: string, args: object = {}, id = 'c1'): Promise<ToolResult> =>
  (await toolset.execute([{ id, name, arguments: args as Record<string, unknown> }]))[0]

/** Runs `slow` until its timeout hands it to the background; returns the task id. */
async function backgrounded(toolset: Toolset): Promise<ToolResult> {
  const pending = call(toolset, 'slow', {}, 'c-slow')
  await vi.advanceTimersByTimeAsync(1_000)
  return pending
}

describe('background: timeout hands the call over', () => {
  it('timeout → background result → settled event → task_status returns the result', async () => {
    const { engine, events, slow, toolset } = await setup()
    const set = toolset()
    const result = await backgrounded(set)
    expect(result).toMatchObject({ id: 'c-slow', name: 'slow', status: 'background', code: 'background' })
    const taskId = result.taskId!
    expect(taskId).toMatch(/^task_/)
    expect(result.content).toBe(`The call is still running and continues in the background as task ${taskId}. Check it later with task_status({ "id": "${taskId}" }) or stop it with task_cancel.`)
    expect(engine.get(taskId)).toMatchObject({ tool: 'slow', callId: 'c-slow', session: { id: 's1' }, status: 'running', startedAt: 1_000_000 })
    expect(slow[0].call.signal.aborted).toBe(false)

    const running = await call(set, 'task_status', { id: taskId })
    expect(running).toMatchObject({ status: 'ok' })
    expect(running.content).toBe(`Task ${taskId} (slow) is still running (started 1s ago). Check again later with task_status — wait_seconds (up to 60) waits for it — or stop it with task_cancel.`)

    await vi.advanceTimersByTimeAsync(1_500)
    slow[0].finish('the answer')
    await flush()
    expect(events).toEqual(['end slow background', 'end task_status ok', 'settled slow succeeded s1'])
    const task = await engine.wait(taskId, { timeout: 0 })
    expect(task).toMatchObject({ status: 'succeeded', settledAt: 1_002_500, result: { id: 'c-slow', name: 'slow', status: 'ok', content: 'the answer' } })

    const done = await call(set, 'task_status', { id: taskId })
    expect(done.content).toBe(`Task ${taskId} (slow) succeeded after 2.5s. Its result:\nthe answer`)
    expect(done.data).toEqual(task)
  })

  it('times out instead when the tool opts out of the background', async () => {
    const { engine, slow, toolset } = await setup({ background: false })
    const result = await backgrounded(toolset())
    expect(result).toMatchObject({ status: 'timed_out', code: 'timed_out', content: 'Timed out: timed out after 1s.' })
    expect(result.taskId).toBeUndefined()
    expect(slow[0].abortedWith).toBe('timed out after 1s')
    expect(engine.list()).toEqual([])
  })

  it('times out instead when no background service is set', async () => {
    const { engine, slow, toolset } = await setup({ engine: false })
    const result = await backgrounded(toolset())
    expect(result).toMatchObject({ status: 'timed_out' })
    expect(slow[0].call.signal.aborted).toBe(true)
    expect(engine.list()).toEqual([])
  })

  it('times out instead when the background service refuses (disposed)', async () => {
    const { engine, slow, toolset } = await setup()
    await engine.dispose()
    const result = await backgrounded(toolset())
    expect(result).toMatchObject({ status: 'timed_out' })
    expect(slow[0].call.signal.aborted).toBe(true)
  })
})

describe('background: cancel', () => {
  it('engine.cancel aborts the running call\'s signal and records it cancelled', async () => {
    const { engine, events, slow, toolset } = await setup()
    const { taskId } = await backgrounded(toolset())
    const task = await engine.cancel(taskId!, 'stop it')
    expect(slow[0].call.signal.aborted).toBe(true)
    expect(slow[0].abortedWith).toBe('stop it')
    expect(task).toMatchObject({ status: 'cancelled', result: { status: 'cancelled', content: 'Cancelled: stop it.' } })
    expect(events).toEqual(['end slow background', 'settled slow cancelled s1'])
    // The handler's late answer is dropped.
    slow[0].finish('too late')
    await flush()
    expect(engine.get(taskId!)!.result!.content).toBe('Cancelled: stop it.')
  })

  it('task_cancel stops the session\'s own task', async () => {
    const { engine, slow, toolset } = await setup()
    const set = toolset()
    const { taskId } = await backgrounded(set)
    const result = await call(set, 'task_cancel', { id: taskId })
    expect(result).toMatchObject({ status: 'ok', content: `Task ${taskId} (slow) was cancelled.` })
    expect(slow[0].call.signal.aborted).toBe(true)
    expect(engine.get(taskId!)!.status).toBe('cancelled')
    const again = await call(set, 'task_cancel', { id: taskId })
    expect(again.content).toBe(`Task ${taskId} (slow) had already ended: cancelled. Nothing was cancelled.`)
  })

  it('task_cancel asks for task:cancel with the task\'s tool as target', async () => {
    const { engine, registry, slow, toolset } = await setup()
    const { gate, log } = testGate((request) => ({ decision: request.tool === 'task_cancel' ? 'deny' : 'allow', reason: 'not today' }))
    registry.permissions = gate
    const set = toolset()
    const { taskId } = await backgrounded(set)
    const result = await call(set, 'task_cancel', { id: taskId })
    expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: not today' })
    expect(log).toContain('authorize task:cancel:slow write')
    expect(slow[0].call.signal.aborted).toBe(false)
    expect(engine.get(taskId!)!.status).toBe('running')
  })

  it('unloading the tool cancels its background task', async () => {
    const { engine, registry, toolset } = await setup()
    const { taskId } = await backgrounded(toolset())
    registry.dispose()
    await flush()
    expect(engine.get(taskId!)).toMatchObject({ status: 'cancelled', result: { content: 'Cancelled: the tool service stopped.' } })
  })
})

describe('background: task tools', () => {
  it('a session sees only its own tasks: another session\'s task is not found', async () => {
    const { engine, slow, toolset } = await setup()
    const { taskId } = await backgrounded(toolset('s1'))
    const other = toolset('s2')
    const status = await call(other, 'task_status', { id: taskId })
    expect(status).toMatchObject({ status: 'error', code: 'tool_error' })
    expect(status.content).toBe(`Error: no background task "${taskId}" in this conversation (it may have been removed after it ended). This conversation has no background tasks.`)
    const cancel = await call(other, 'task_cancel', { id: taskId })
    expect(cancel.content).toBe(status.content)
    expect(slow[0].call.signal.aborted).toBe(false)
    expect(engine.get(taskId!)!.status).toBe('running')
    expect((await call(other, 'task_status')).content).toBe('This conversation has no background tasks.')
    expect((await call(toolset('s1'), 'task_status')).content).toBe(`Background tasks of this conversation, oldest first:\n- ${taskId} (slow): running`)
  })

  it('names the session\'s own tasks when an id is unknown', async () => {
    const { toolset } = await setup()
    const set = toolset()
    const { taskId } = await backgrounded(set)
    const result = await call(set, 'task_status', { id: 'task_nope' })
    expect(result.content).toContain(`Tasks of this conversation: ${taskId}.`)
  })

  it('task_status waits up to wait_seconds, and returns as soon as the task settles', async () => {
    const { slow, toolset } = await setup()
    const set = toolset()
    const { taskId } = await backgrounded(set)
    let answer: ToolResult | undefined
    void call(set, 'task_status', { id: taskId, wait_seconds: 30 }).then((value) => { answer = value })
    await vi.advanceTimersByTimeAsync(29_000)
    expect(answer).toBeUndefined()
    slow[0].finish('ready')
    await flush()
    expect(answer!.content).toBe(`Task ${taskId} (slow) succeeded after 30s. Its result:\nready`)
    // The wait's own timer is gone; what is left is the registry's one shared deadline
    // timer, idle and unreferenced until the next call.
    expect(vi.getTimerCount()).toBe(1)
  })

  it('task_status gives the running status when the wait runs out', async () => {
    const { toolset } = await setup()
    const set = toolset()
    const { taskId } = await backgrounded(set)
    let answer: ToolResult | undefined
    void call(set, 'task_status', { id: taskId, wait_seconds: 2 }).then((value) => { answer = value })
    await vi.advanceTimersByTimeAsync(1_999)
    expect(answer).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(answer!.content).toContain(`Task ${taskId} (slow) is still running (started 3s ago).`)
  })

  it('bounds wait_seconds at 60', async () => {
    const { toolset } = await setup()
    const result = await call(toolset(), 'task_status', { id: 'task_x', wait_seconds: 61 })
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain('wait_seconds')
  })

  it('never moves itself to the background', async () => {
    const { registry } = await setup()
    expect(registry.get('task_status')!.traits).toMatchObject({ background: false, effect: 'read', timeout: 90_000 })
    expect(registry.get('task_cancel')!.traits).toMatchObject({ background: false, effect: 'write' })
  })
})

describe('backgroundAtStart: a toolset that hands calls over as they start (MCP task mode)', () => {
  it('answers with the task as soon as the handler starts, and the task carries the result', async () => {
    const { registry, engine, slow } = await setup()
    const toolset = registry.toolset({ session: { id: 's1' }, backgroundAtStart: true })
    const pending = call(toolset, 'slow')
    await vi.advanceTimersByTimeAsync(0)
    const result = await pending
    expect(result.status).toBe('background')
    expect(engine.get(result.taskId!)?.status).toBe('running')
    slow[0]!.finish('done at last')
    await flush()
    expect(engine.get(result.taskId!)).toMatchObject({ status: 'succeeded', result: { content: 'done at last' } })
  })

  it('keeps the bound of a wait for a place under maxRunning: a call that waits is handed over once it starts', async () => {
    const { engine, slow } = await setup()
    const registry = new ToolRegistry({ maxRunning: { session: 1 } })
    registry.permissions = testGate().gate
    registry.background = engine
    registry.define(defineTool({
      name: 'slow',
      description: 'Takes its time',
      traits: { effect: 'read', timeout: 1_000 },
      run: (_, call) => new Promise<string>((resolve) => slow.push({ call, finish: resolve })),
    }))
    const toolset = registry.toolset({ session: { id: 's1' }, backgroundAtStart: true })
    const first = await (async () => { const p = call(toolset, 'slow', {}, 'a'); await vi.advanceTimersByTimeAsync(0); return p })()
    expect(first.status).toBe('background')
    // The first still runs in the background and holds the session's one place: the second waits.
    const second = call(toolset, 'slow', {}, 'b')
    await vi.advanceTimersByTimeAsync(500)
    expect(slow).toHaveLength(1)
    slow[0]!.finish('first')
    await vi.advanceTimersByTimeAsync(0)
    const handed = await second
    expect(handed.status).toBe('background')
    expect(slow).toHaveLength(2)
  })
})
