import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, BOB, Gates, startTaskApp, type TaskApp } from './task-harness'

/** Calls a tool in task mode: the answer is the task. */
async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  const { task } = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CreateTaskResultSchema, { task: { ttl: 60_000 } })
  return task
}

function textOf(result: { content: unknown }): string {
  return (result.content as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n')
}

describe('Dogu tools as MCP tasks over Streamable HTTP', () => {
  let dir: string
  let app: TaskApp
  let gates: Gates
  let alice: Client

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-tasks-'))
    gates = new Gates()
    app = await startTaskApp(dir, gates)
    alice = await app.connect(ALICE)
  })
  afterAll(async () => {
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('declares tasks and lists the tools that may move to the background as task-capable', async () => {
    expect(alice.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
    const { tools } = await alice.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    expect(byName.get('held')?.execution).toEqual({ taskSupport: 'optional' })
    expect(byName.get('quick')?.execution).toEqual({ taskSupport: 'optional' })
    expect(byName.get('plain')?.execution).toBeUndefined()
  })

  it('a slow call in task mode answers with a working task at once; polling sees it complete; tasks/result is the call\'s result', async () => {
    const task = await startTask(alice, 'held', { key: 'poll' })
    expect(task).toMatchObject({ status: 'working', pollInterval: expect.any(Number) })
    expect(task.taskId).toMatch(/^task_/)
    // The MCP task is the Dogu background task.
    expect(app.task(task.taskId)).toMatchObject({ tool: 'held', status: 'running', session: { userId: 'alice', platform: 'mcp' } })
    expect(await alice.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working' })
    // tasks/result blocks until the task is done.
    const result = alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    await gates.running('poll')
    gates.release('poll', 'done polling')
    const settled = await result
    expect(textOf(settled)).toBe('done polling')
    expect(settled.isError).toBeUndefined()
    expect(settled._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId })
    const done = await alice.experimental.tasks.getTask(task.taskId)
    expect(done.status).toBe('completed')
    expect(done.pollInterval).toBeUndefined()
    const { tasks } = await alice.experimental.tasks.listTasks()
    expect(tasks.find((listed) => listed.taskId === task.taskId)?.status).toBe('completed')
  })

  it('a call that settles at once in task mode is a completed task', async () => {
    const task = await startTask(alice, 'quick', { word: 'now' })
    expect(task.status).toBe('completed')
    expect(textOf(await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toBe('quick now')
  })

  it('a write in task mode is authorized first: the client is asked, then the task starts; declined, the task failed', async () => {
    const asked: string[] = []
    let answer: 'once' | 'deny' = 'once'
    const client = await app.connect(ALICE, (message) => {
      asked.push(message)
      return { action: 'accept', content: { decision: answer } }
    })
    const task = await startTask(client, 'stamp', { key: 'stamp' })
    expect(asked).toHaveLength(1)
    expect(task.status).toBe('working')
    gates.release('stamp', 'stamped')
    expect(textOf(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toBe('stamped')

    answer = 'deny'
    const denied = await startTask(client, 'stamp', { key: 'refused' })
    expect(asked).toHaveLength(2)
    expect(denied).toMatchObject({ status: 'failed', statusMessage: expect.stringMatching(/^Permission denied: /) })
    const result = await client.experimental.tasks.getTaskResult(denied.taskId, CallToolResultSchema)
    expect(result.isError).toBe(true)
  })

  it('refuses task mode for a tool that cannot move to the background (-32601), and an unknown tool (-32602)', async () => {
    await expect(startTask(alice, 'plain', {})).rejects.toMatchObject({ code: -32601 })
    await expect(startTask(alice, 'nope', {})).rejects.toMatchObject({ code: -32602 })
  })

  it('a plain call that outlives its timeout moves to the background, and its task is an MCP task too', async () => {
    const result = await alice.callTool({ name: 'soon', arguments: { key: 'moved' } })
    const taskId = (result._meta?.['dogu.dev/result'] as { taskId?: string }).taskId!
    expect(taskId).toMatch(/^task_/)
    expect(await alice.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'working' })
    gates.release('moved', 'moved and done')
    expect(textOf(await alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toBe('moved and done')
  })

  it('tasks/cancel cancels the Dogu background task: its call\'s signal aborts', async () => {
    const task = await startTask(alice, 'held', { key: 'cancel' })
    await gates.running('cancel')
    const cancelled = await alice.experimental.tasks.cancelTask(task.taskId)
    expect(cancelled.status).toBe('cancelled')
    expect(gates.aborted.get('cancel')).toBe('the MCP client cancelled the task')
    expect(app.task(task.taskId)?.status).toBe('cancelled')
    const result = await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/^Cancelled: the MCP client cancelled the task/)
    // A task that is done cannot be cancelled again.
    await expect(alice.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602 })
  })

  it('another user, or a client without a token, can neither see, wait for, list nor cancel the task', async () => {
    const task = await startTask(alice, 'held', { key: 'private' })
    for (const intruder of [await app.connect(BOB), await app.connect()]) {
      await expect(intruder.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: -32602 })
      await expect(intruder.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toMatchObject({ code: -32602 })
      await expect(intruder.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602 })
      const { tasks } = await intruder.experimental.tasks.listTasks()
      expect(tasks.map((listed) => listed.taskId)).not.toContain(task.taskId)
    }
    // Untouched, and still the owner's from another connection of theirs.
    expect(app.task(task.taskId)?.status).toBe('running')
    const again = await app.connect(ALICE)
    expect(await again.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'working' })
    gates.release('private', 'mine')
    expect(textOf(await again.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toBe('mine')
  })

  it('a client without a token sees its own session\'s tasks only', async () => {
    const first = await app.connect()
    const task = await startTask(first, 'quick', { word: 'anon' })
    expect((await first.experimental.tasks.getTask(task.taskId)).status).toBe('completed')
    const second = await app.connect()
    await expect(second.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: -32602 })
  })
})

describe('MCP tasks across a server restart', () => {
  let dir: string
  let app: TaskApp | undefined

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-restart-'))
  })
  afterEach(async () => {
    await app?.close()
    app = undefined
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('a task running when the server stopped reads as failed, interrupted, after it starts again over the same records', async () => {
    const gates = new Gates()
    app = await startTaskApp(dir, gates)
    const task = await startTask(await app.connect(ALICE), 'held', { key: 'restart' })
    await gates.running('restart')
    await app.close()
    expect(gates.aborted.get('restart')).toBe('the background service stopped')

    app = await startTaskApp(dir, new Gates())
    const alice = await app.connect(ALICE)
    const after = await alice.experimental.tasks.getTask(task.taskId)
    expect(after).toMatchObject({ taskId: task.taskId, status: 'failed', statusMessage: expect.stringMatching(/^Interrupted: the server stopped or restarted/) })
    expect(app.task(task.taskId)?.status).toBe('interrupted')
    const result = await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/^Interrupted/)
    expect((await alice.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).toContain(task.taskId)
    // Still nobody else's.
    await expect((await app.connect(BOB)).experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: -32602 })
  })
})
