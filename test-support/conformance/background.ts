import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type BackgroundTask, defineTool, type ToolCall, type ToolResult } from '@dogu/core'
import { describe, expect, it, vi } from 'vitest'
import { call, session, until, useApps } from './fixture'
import type { ConformanceHost, HostApp, PluginContext } from './host'

interface Slow {
  call: ToolCall
  finish(text: string): void
}

/** A plugin defining `slow`, whose calls run until the test finishes them: a gate, no timer. */
function slowPack(slow: Slow[]) {
  return {
    name: 'slow-pack',
    inject: ['tools'],
    apply(ctx: PluginContext) {
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'Takes its time',
        traits: { effect: 'read', timeout: 1_000 },
        run: (_, call) => new Promise<string>((resolve) => { slow.push({ call, finish: resolve }) }),
      }))
    },
  }
}

/** Runs `slow` past its timeout on fake time (from 1_000_000); resolves with its `background` result. */
async function backgrounded(app: HostApp): Promise<ToolResult> {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
  const pending = call(app, 'slow')
  await vi.advanceTimersByTimeAsync(1_000)
  return pending
}

const interrupted = (taskId: string) =>
  `Task ${taskId} (slow) was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`

/** `ctx.background`: calls past their timeout as tasks, their tools, and what a stop leaves. */
export function backgroundConformance(host: ConformanceHost) {
  describe(`${host.name}: ctx.background`, () => {
    const apps = useApps(host)
    const setup = async () => {
      const app = await apps.app({ permissions: { rules: [{ permission: 'task:cancel', decision: 'allow' }] } })
      const settled: BackgroundTask[] = []
      app.on('background/settled', (task: BackgroundTask) => { settled.push(task) })
      const slow: Slow[] = []
      const pack = await app.plugin(slowPack(slow))
      return { app, pack, settled, slow }
    }
    const stored = async (): Promise<BackgroundTask[]> => JSON.parse(await readFile(join(apps.dir, 'background.json'), 'utf8')).tasks

    it('takes the registry\'s background slot and defines the task tools', async () => {
      const { app } = await setup()
      expect(app.tools.registry.background).toBe(app.background.engine)
      expect(app.tools.list().map((tool) => tool.name)).toEqual(['slow', 'task_cancel', 'task_status'])
    })

    it('hands a call past its timeout to a task: background result, background/settled with the session, task_status', async () => {
      const { app, settled, slow } = await setup()
      const result = await backgrounded(app)
      expect(result).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
      const taskId = result.taskId!
      expect(app.background.get(taskId)).toMatchObject({ status: 'running', tool: 'slow', session: { id: 's1' } })
      expect(app.background.list({ session: 's1', status: 'running' }).map((task) => task.id)).toEqual([taskId])

      await vi.advanceTimersByTimeAsync(4_000)
      slow[0].finish('42')
      await until(() => settled.length === 1, 'the task to settle')
      expect(settled).toEqual([expect.objectContaining({ id: taskId, status: 'succeeded', session, settledAt: 1_005_000 })])
      expect(settled[0].result).toMatchObject({ id: 'c-slow', status: 'ok', content: '42' })
      expect((await call(app, 'task_status', { id: taskId })).content).toBe(`Task ${taskId} (slow) succeeded after 5s. Its result:\n42`)
      // Another conversation's task is not there for it.
      expect(await call(app, 'task_status', { id: taskId }, { ...session, id: 's2' })).toMatchObject({ status: 'error' })
    })

    it('wait resolves after its timeout; cancel and task_cancel abort the call\'s signal', async () => {
      const { app, slow, settled } = await setup()
      const { taskId } = await backgrounded(app)
      let waited: BackgroundTask | undefined
      void app.background.wait(taskId!, { timeout: 10_000 }).then((task) => { waited = task })
      await vi.advanceTimersByTimeAsync(10_000)
      expect(waited).toMatchObject({ status: 'running' })
      const cancelled = await app.background.cancel(taskId!, 'no longer needed')
      expect(slow[0].call.signal.aborted).toBe(true)
      expect(cancelled).toMatchObject({ status: 'cancelled', result: { content: 'Cancelled: no longer needed.' } })
      expect(settled).toEqual([cancelled])

      const pending = call(app, 'slow')
      await vi.advanceTimersByTimeAsync(1_000)
      const second = await pending
      expect(second.status).toBe('background')
      const byModel = await call(app, 'task_cancel', { id: second.taskId })
      expect(byModel).toMatchObject({ status: 'ok' })
      expect(slow[1].call.signal.aborted).toBe(true)
      expect(app.background.get(second.taskId!)).toMatchObject({ status: 'cancelled' })
    })

    it('records a task running at app stop as interrupted; a new app on the same store reads it so', async () => {
      const { app, slow, settled } = await setup()
      const { taskId } = await backgrounded(app)
      await app.stop()
      expect(slow[0].call.signal.reason.message).toBe('the background service stopped')
      expect(settled).toEqual([])
      expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])

      vi.setSystemTime(2_000_000)
      const next = await apps.app()
      expect(next.background.get(taskId!)).toMatchObject({ id: taskId, tool: 'slow', status: 'interrupted', settledAt: 1_001_000 })
      expect((await call(next, 'task_status', { id: taskId })).content).toBe(interrupted(taskId!))
    })

    it('unloading the background service interrupts its tasks and removes its tools; a timeout is a timeout again', async () => {
      const { app, slow, settled } = await setup()
      const { taskId } = await backgrounded(app)
      const engine = app.background.engine
      await app.unload('background')
      expect(app.tools.registry.background).toBeUndefined()
      expect(app.tools.list().map((tool) => tool.name)).toEqual(['slow'])
      expect(slow[0].call.signal.aborted).toBe(true)
      expect(engine.get(taskId!)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
      expect(settled).toEqual([])
      const again = call(app, 'slow')
      await vi.advanceTimersByTimeAsync(1_000)
      expect((await again).status).toBe('timed_out')
    })

    it('unloading only the tool\'s plugin, while the service runs, cancels its task: someone unloaded the tool', async () => {
      const { app, pack, settled, slow } = await setup()
      const { taskId } = await backgrounded(app)
      await pack.dispose()
      await until(() => settled.length === 1, 'the task to settle')
      expect(slow[0].call.signal.reason.message).toBe('tool "slow" was unloaded')
      expect(settled).toEqual([expect.objectContaining({ id: taskId, status: 'cancelled', result: expect.objectContaining({ content: 'Cancelled: tool "slow" was unloaded.' }) })])
    })
  })
}
