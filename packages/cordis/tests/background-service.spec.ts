import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BackgroundTask, BackgroundEngine, defineTool, type ToolCall, type ToolResult } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { DoguPlugin, ToolService } from '../src'
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
  const guard = guardLogs(ctx)
  const settled: BackgroundTask[] = []
  const warnings: string[] = []
  ctx.on('background/settled', (task) => { settled.push(task) })
  ctx.on('internal/warn', (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' | ')) })
  loaded.push(await ctx.plugin(ToolService))
  const background = await ctx.plugin(BackgroundService, { storePath: join(dir, 'tasks.json'), ...config })
  loaded.push(background)
  const slow: Slow[] = []
  const pack = await ctx.plugin(slowPack(slow))
  loaded.push(pack)
  return { ctx, background, pack, settled, warnings, slow, guard }
}

/** A plugin defining `slow`, whose calls run until the test finishes them: a gate, no timer. */
function slowPack(slow: Slow[]) {
  return {
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
  }
}

/** The app as the README sets it up: the Dogu plugin, then a plugin with a tool. */
async function setupDogu() {
  const ctx = new Context()
  guardLogs(ctx)
  const config: DoguPlugin.Config = {
    permissions: { storePath: join(dir, 'permissions.json') },
    background: { storePath: join(dir, 'tasks.json') },
    audit: { storePath: join(dir, 'audit.jsonl') },
  }
  const dogu = await ctx.plugin(DoguPlugin, config)
  loaded.push(dogu)
  const slow: Slow[] = []
  loaded.push(await ctx.plugin(slowPack(slow)))
  return { ctx, dogu, config, slow }
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

const stored = async (): Promise<BackgroundTask[]> => JSON.parse(await readFile(join(dir, 'tasks.json'), 'utf8')).tasks

const interruptedText = (taskId: string) =>
  `Task ${taskId} (slow) was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`

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
    const { ctx, warnings, guard } = await setup()
    guard.expect(/^\[BackgroundService\] background task store \S+\/tasks\.json is not valid JSON \(.*\); moved it aside to \S+\/tasks\.json\.corrupt-\d+ and kept 0 readable task\(s\)$/)
    expect(ctx.background.list()).toEqual([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('is not valid JSON')
    expect((await readdir(dir)).some((file) => file.startsWith('tasks.json.corrupt-'))).toBe(true)
  })
})

// Cordis disposes the plugins of a stopping app (or of a stopping Dogu plugin) in reverse
// order, so the tool's plugin goes before the background service. The task must still
// end `interrupted`: nobody cancelled it, the service stopped.
describe('BackgroundService: a task running when the service stops', () => {
  it('an app stop (root.fiber.dispose()) records it interrupted; a new app on the same store reads it so', async () => {
    const { ctx, settled, slow } = await setup()
    const { taskId } = await backgrounded(ctx)
    await ctx.fiber.dispose()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(settled).toEqual([])
    expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])
    expect((await stored())[0].result).toBeUndefined()

    vi.setSystemTime(2_000_000)
    const next = await setup()
    expect(next.ctx.background.get(taskId!)).toMatchObject({ id: taskId, tool: 'slow', status: 'interrupted', settledAt: 1_001_000 })
    expect((await call(next.ctx, 'task_status', { id: taskId })).content).toBe(interruptedText(taskId!))
  })

  it('an app stop with the Dogu plugin, as the README sets it up, records it interrupted', async () => {
    const { ctx, config, slow } = await setupDogu()
    const { taskId } = await backgrounded(ctx)
    await ctx.fiber.dispose()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])

    const next = new Context()
    guardLogs(next)
    loaded.push(await next.plugin(DoguPlugin, config))
    expect(next.background.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    expect((await call(next, 'task_status', { id: taskId })).content).toBe(interruptedText(taskId!))
  })

  it('disposing the Dogu plugin records it interrupted; the Dogu plugin loaded again reads it so', async () => {
    const { ctx, dogu, config, slow } = await setupDogu()
    const { taskId } = await backgrounded(ctx)
    await dogu.dispose()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])

    loaded.push(await ctx.plugin(DoguPlugin, config))
    expect(ctx.background.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    expect((await call(ctx, 'task_status', { id: taskId })).content).toBe(interruptedText(taskId!))
  })

  it('a reload of the Dogu plugin (a config update) records it interrupted', async () => {
    const { ctx, dogu, config, slow } = await setupDogu()
    const { taskId } = await backgrounded(ctx)
    dogu.update({ ...config, tools: { maxContentLength: 10_000 } })
    await dogu.await()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(ctx.background.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    expect((await call(ctx, 'task_status', { id: taskId })).content).toBe(interruptedText(taskId!))
  })

  it('a reload of the background service alone (a config update) records it interrupted', async () => {
    const { ctx, background, slow } = await setup()
    const { taskId } = await backgrounded(ctx)
    background.update({ storePath: join(dir, 'tasks.json'), maxTasks: 100 })
    await background.await()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(ctx.background.engine.limits.maxTasks).toBe(100)
    expect(ctx.background.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
  })

  it('unloading the tools service, which the background service needs, records it interrupted', async () => {
    const { ctx, slow } = await setup()
    const { taskId } = await backgrounded(ctx)
    await loaded[0].dispose()
    expect(ctx.get('background')).toBeUndefined()
    expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
    expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])
  })

  it('unloading only the tool\'s plugin, while the service runs, cancels it: someone unloaded the tool', async () => {
    const { ctx, pack, settled, slow } = await setup()
    const { taskId } = await backgrounded(ctx)
    await pack.dispose()
    await flush()
    expect(slow[0].call.signal.reason.message).toBe('tool "slow" was unloaded')
    const task = ctx.background.get(taskId!)
    expect(task).toMatchObject({ status: 'cancelled', settledAt: 1_001_000, result: { status: 'cancelled', content: 'Cancelled: tool "slow" was unloaded.' } })
    expect(settled).toEqual([task])
    await ctx.background.engine.dispose()
    expect(await stored()).toEqual([task])
  })
})
