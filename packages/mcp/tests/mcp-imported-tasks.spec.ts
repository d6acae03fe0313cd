import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import type { BackgroundTask, ToolCall, ToolResult } from '@dogu/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { fromCallToolResult } from '../src'
import { callImportedTask, callsAsTask } from '../src/imported-task-call'
import { TaskServerFixture } from './fixtures/task-server'

const SESSION = { id: 'test:imported-tasks', userId: 'tester', platform: 'test', authority: 1 }

describe('an imported tool of a task-capable MCP server (the SDK\'s McpServer)', () => {
  let dir: string
  let ctx: Context
  let fixture: TaskServerFixture
  let client: Client
  const progress: string[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-imported-tasks-'))
    fixture = new TaskServerFixture()
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await fixture.server().connect(serverSide)
    client = new Client({ name: 'dogu', version: '0.1.0' })
    await client.connect(clientSide)
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, {
      audit: { storePath: join(dir, 'audit.jsonl') },
      permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'background.json') },
    })
    // What the client connection's `run` does for a task-capable tool.
    const run = async (_args: unknown, call: ToolCall) => {
      const result = await callImportedTask(client, 'brew', {}, call, { server: 'brewery', requestTimeout: 5_000, pollBounds: [10, 1_000] })
      return fromCallToolResult(result, call, false)
    }
    const tools = (ctx as any).tools
    tools.define({ name: 'brewery_brew', description: 'Brews', traits: { effect: 'read', background: true, timeout: 30_000 }, run })
    tools.define({ name: 'brewery_brew_long', description: 'Brews for longer than its timeout', traits: { effect: 'read', background: true, timeout: 50 }, run })
    ctx.on('tools/call-progress' as any, (_info: unknown, message: string) => { progress.push(message) })
  })
  afterAll(async () => {
    await client?.close()
    fixture?.close()
    await ctx?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const call = (name: string): Promise<ToolResult> => (ctx as any).tools.toolset({ session: SESSION }).execute([{ id: `call_${name}_${Math.random()}`, name, arguments: {} }]).then(([result]: ToolResult[]) => result)
  const background = () => (ctx as any).background as { wait(id: string, options: { timeout: number }): Promise<BackgroundTask | undefined>; cancel(id: string): Promise<BackgroundTask | undefined> }

  it('is called in task mode when the tool accepts it and the server declared tasks for tools/call', async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const capabilities = client.getServerCapabilities()
    expect(callsAsTask(byName.get('brew')!, capabilities)).toBe(true)
    expect(callsAsTask(byName.get('plain')!, capabilities)).toBe(false)
    expect(callsAsTask(byName.get('brew')!, { tools: {} })).toBe(false)
  })

  it('polls the task to its result, reporting its status messages as the call\'s progress', async () => {
    const pending = call('brewery_brew')
    const taskId = await fixture.nextTask()
    await fixture.say(taskId, 'grinding beans')
    await expect.poll(() => progress).toContain('grinding beans')
    await fixture.finish(taskId, 'coffee')
    expect(await pending).toMatchObject({ status: 'ok', content: 'coffee' })
  })

  it('a remote task that fails ends the call as an error with the server\'s text', async () => {
    const pending = call('brewery_brew')
    await fixture.fail(await fixture.nextTask(), 'burnt')
    expect(await pending).toMatchObject({ status: 'error', content: 'Error: burnt' })
  })

  it('a call that outlives its timeout moves to Dogu\'s background and keeps polling there', async () => {
    const next = fixture.nextTask()
    const result = await call('brewery_brew_long')
    expect(result.status).toBe('background')
    await fixture.finish(await next, 'late coffee')
    const task = await background().wait(result.taskId!, { timeout: 10_000 })
    expect(task).toMatchObject({ status: 'succeeded', result: { status: 'ok', content: 'late coffee' } })
  })

  it('cancelling the Dogu background task cancels the remote task', async () => {
    const next = fixture.nextTask()
    const result = await call('brewery_brew_long')
    expect(result.status).toBe('background')
    const remote = await next
    const cancelled = fixture.nextCancel()
    const task = await background().cancel(result.taskId!)
    expect(task?.status).toBe('cancelled')
    expect(await cancelled).toBe(remote)
    expect((await client.experimental.tasks.getTask(remote)).status).toBe('cancelled')
  })
})
