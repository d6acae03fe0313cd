import type { ToolCall } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { pluginApp, session } from './plugin-app'
import * as Countdown from '../src/countdown'

/** The countdown plugin (see plugin-app.ts), with the progress messages it reports. */
async function setup(config?: Partial<Countdown.Config>, options?: { dogu?: boolean }) {
  const app = await pluginApp(Countdown, 'countdown', config, options)
  const progress: string[] = []
  app.ctx.on('tools/call-progress', (_, message: string) => { progress.push(message) })
  return { ...app, progress }
}

describe('the countdown tool', () => {
  it('is a read-only tool whose timeout is shorter than its run, so it moves to the background', async () => {
    const { ctx } = await setup()
    const tool = ctx.tools.list().find((tool) => tool.name === 'countdown')!
    expect(tool.traits).toMatchObject({ effect: 'read', timeout: 5_000, background: true })
    expect(tool.args({})).toEqual({ seconds: 15 })
    expect(() => tool.args({ seconds: 121 })).toThrow()
  })

  it('reports each second, then says it finished', async () => {
    const { call, progress } = await setup()
    const result = await call({ seconds: 2 })
    expect(result).toMatchObject({ status: 'ok', content: 'Countdown of 2 s finished.' })
    expect(progress).toEqual(['2 s left', '1 s left'])
  })

  it('refuses more than 120 seconds', async () => {
    const { call } = await setup()
    expect(await call({ seconds: 121 })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })

  it('stops at once when its signal aborts', async () => {
    const { ctx } = await setup()
    const tool = ctx.tools.list().find((tool) => tool.name === 'countdown')!
    const controller = new AbortController()
    const progress: string[] = []
    const call = { id: 'c1', name: 'countdown', session, signal: controller.signal, progress: (message: string) => { progress.push(message) } } as unknown as ToolCall
    const run = Promise.resolve(tool.run({ seconds: 120 }, call))
    controller.abort(new Error('stop'))
    // Two minutes of countdown would outlast the test's timeout.
    await expect(run).rejects.toMatchObject({ name: 'AbortError', cause: new Error('stop') })
    expect(progress).toEqual(['120 s left'])
  })

  it('continues in the background past its timeout, and the task ends with its text', async () => {
    const { ctx, call } = await setup({ timeout: 200 }, { dogu: true })
    const result = await call({ seconds: 1 })
    expect(result).toMatchObject({ status: 'background' })
    const task = await ctx.background.wait(result.taskId!, { timeout: 10_000 })
    expect(task).toMatchObject({ status: 'succeeded', result: { content: 'Countdown of 1 s finished.' } })
  })
})
