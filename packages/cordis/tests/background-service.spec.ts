import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BackgroundTask, BackgroundEngine, defineTool, type ToolCall, type ToolResult } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ToolService } from '../src'
import { BackgroundService } from '../src/background-service'

let dir: string
// Fibers of the apps a test made, disposed after it: the service's dispose flushes the task
// store, so no write is still in flight (creating a temp file) when the dir is removed.
const loaded: Fiber[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-background-service-'))
})

afterEach(async () => {
  vi.useRealTimers()
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await rm(dir, { recursive: true, force: true })
})

interface Slow {
  call: ToolCall
  finish(text: string): void
}

async function setup(config: BackgroundService.Config = {}) {
  const ctx = new Context()
  const settled: BackgroundTask[] = []
  const warnings: string[] = []
  ctx.on('background/settled', (task) => { settled.push(task) })
  ctx.on('internal/warn', (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' | ')) })
  loaded.push(await ctx.plugin(ToolService))
  const background = await ctx.plugin(BackgroundService, { storePath: join(dir, 'tasks.json'), ...config })
  loaded.push(background)
  const slow: Slow[] = []
  loaded.push(await ctx.plugin({
    name: 'slow-pack',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'Takes its time',
        traits: { effect: 'read', timeout: 1_000 },
        run: (_, call) => new Promise<string>((resolve) => { slow.push({ call, finish: resolve }) }),
      }))
    },
  }))
  return { ctx, background, settled, warnings, slow }
}

const call = async (ctx: Context, name: string, args: object = {}, session = 's1'): Promise<ToolResult> =>
  (await ctx.tools.execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }], { session: { id: session } }))[0]

/** Runs `slow` past its timeout; resolves with the `background` result. */
async function backgrounded(ctx: Context): Promise<ToolResult> {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
  const pending = call(ctx, 'slow')
  await vi.advanceTimersByTimeAsync(1_000)
  return pending
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

describe('BackgroundService: provision', () => {
  it('provides ctx.background, takes the registry\'s background slot and defines the task tools', async () => {
    const { ctx } = await setup()
    expect(ctx.background).toBeInstanceOf(BackgroundService)
    expect(ctx.background.engine).toBeInstanceOf(BackgroundEngine)
    expect(ctx.tools.registry.background).toBe(ctx.background.engine)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['slow', 'task_cancel', 'task_status'])
    expect(ctx.tools.registry.ownerOf('task_status')).toBe('plugin "BackgroundService"')
  })

  it('fills config defaults', () => {
    expect(BackgroundService.Config({})).toEqual({ maxTasks: 200, maxAgeMs: 7 * 24 * 3600_000, maxResultLength: 50_000 })
    expect(() => BackgroundService.Config({ maxTasks: 0 })).toThrow()
  })

  it('on unload frees the slot, removes the task tools, and interrupts running tasks; a second dispose is harmless', async () => {
    const { ctx, background, slow, settled } = await setup()
    const { taskId } = await backgrounded(ctx)
    const engine = ctx.background.engine
    await background.dispose()
    expect(ctx.tools.registry.background).toBeUndefined()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['slow'])
    expect(slow[0].call.signal.aborted).toBe(true)
    expect(engine.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    expect(settled).toEqual([])
    await background.dispose()
    // Without the service a timeout is a timeout again.
    const result = await backgrounded(ctx)
    expect(result.status).toBe('timed_out')
    const stored = JSON.parse(await readFile(join(dir, 'tasks.json'), 'utf8'))
    expect(stored.tasks).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted' })])
  })
})

describe('BackgroundService: tasks', () => {
  it('timeout → background → background/settled (with the session) → task_status returns the result', async () => {
    const { ctx, settled, slow } = await setup()
    const result = await backgrounded(ctx)
    expect(result).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
    const taskId = result.taskId!
    expect(ctx.background.get(taskId)).toMatchObject({ status: 'running', tool: 'slow', session: { id: 's1' } })
    expect(ctx.background.list({ session: 's1', status: 'running' }).map((task) => task.id)).toEqual([taskId])

    await vi.advanceTimersByTimeAsync(4_000)
    slow[0].finish('42')
    await flush()
    expect(settled).toEqual([expect.objectContaining({ id: taskId, status: 'succeeded', session: { id: 's1' }, settledAt: 1_005_000 })])
    expect(settled[0].result).toMatchObject({ id: 'c-slow', status: 'ok', content: '42' })

    const status = await call(ctx, 'task_status', { id: taskId })
    expect(status.content).toBe(`Task ${taskId} (slow) succeeded after 5s. Its result:\n42`)
    expect(await call(ctx, 'task_status', { id: taskId }, 's2')).toMatchObject({ status: 'error' })
  })

  it('wait resolves on settle or after its timeout; cancel aborts the call\'s signal', async () => {
    const { ctx, slow } = await setup()
    const { taskId } = await backgrounded(ctx)
    let waited: BackgroundTask | undefined
    void ctx.background.wait(taskId!, { timeout: 10_000 }).then((task) => { waited = task })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(waited).toMatchObject({ status: 'running' })
    const cancelled = await ctx.background.cancel(taskId!, 'no longer needed')
    expect(slow[0].call.signal.aborted).toBe(true)
    expect(cancelled).toMatchObject({ status: 'cancelled', result: { content: 'Cancelled: no longer needed.' } })
  })

  it('after a restart on the same store, a task that was running is interrupted', async () => {
    const first = await setup()
    const { taskId } = await backgrounded(first.ctx)
    // The process dies without disposing: only what reached the file survives.
    await (first.ctx.background.engine as any).store.flush()
    vi.setSystemTime(2_000_000)
    const second = await setup()
    expect(second.ctx.background.get(taskId!)).toMatchObject({ id: taskId, tool: 'slow', status: 'interrupted', settledAt: 2_000_000 })
    const status = await call(second.ctx, 'task_status', { id: taskId })
    expect(status.content).toBe(`Task ${taskId} (slow) was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`)
  })

  it('reports a corrupted store through internal/warn and moves it aside', async () => {
    const { writeFile, readdir } = await import('node:fs/promises')
    await writeFile(join(dir, 'tasks.json'), 'not json')
    const { ctx, warnings } = await setup()
    expect(ctx.background.list()).toEqual([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('is not valid JSON')
    expect((await readdir(dir)).some((file) => file.startsWith('tasks.json.corrupt-'))).toBe(true)
  })
})
