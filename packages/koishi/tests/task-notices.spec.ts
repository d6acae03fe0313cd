import { defineTool, type Session } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { TaskNoticesConfig, taskNotices } from '../src/task-notices'
import { type ChatApp, chatApp, type ChatAppOptions, descriptions, inBothLanguages } from './chat-harness'
import { until } from './owner-app'

let t: ChatApp | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

/**
 * An app with `build` (read, outlives its 1 ms timeout, ends when the test says so) and
 * `deploy` (exec: asks in chat, which serves as a message sent after any notice).
 */
async function setup(options: ChatAppOptions = {}) {
  t = await chatApp(options)
  const finishes = new Map<string, (outcome: { output?: string; error?: string }) => void>()
  t.app.plugin({
    name: 'tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'build',
        description: 'Build the project (slow)',
        args: Schema.object({ target: Schema.string().required() }),
        traits: { effect: 'read', timeout: 1 },
        run: async (args: { target: string }) => {
          const outcome = await new Promise<{ output?: string; error?: string }>((resolve) => finishes.set(args.target, resolve))
          if (outcome.error) throw new Error(outcome.error)
          return outcome.output
        },
      }))
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy',
        traits: { effect: 'exec' },
        run: () => 'deployed',
      }))
    },
  })
  await t.settle()
  /** Starts a build that moves to the background; `finish` ends it. */
  const build = async (target: string, session: Session = t!.session('alice')) => {
    const [result] = await t!.app.tools.execute([{ id: `b-${target}`, name: 'build', arguments: { target } }], { session })
    expect(result.status).toBe('background')
    return {
      id: result.taskId!,
      finish: async (outcome: { output?: string; error?: string }) => {
        finishes.get(target)!(outcome)
        return (await t!.app.background.wait(result.taskId!, { timeout: 5_000 }))!
      },
    }
  }
  /** A question in `room`: a message the bot sends after any notice already on its way. */
  const marker = async () => {
    void t!.app.tools.execute([{ id: 'marker', name: 'deploy', arguments: {} }], { session: t!.session('alice') })
    const sent = await t!.outbox.next()
    expect(sent.text).toMatch(/^\[1\] 工具 deploy 请求批准/)
  }
  return { ...t, build, marker }
}

describe('task notices', () => {
  it('are on by default with a 200-character preview; the config is described in Chinese and English', () => {
    expect(TaskNoticesConfig({})).toEqual({ enabled: true, preview: 200 })
    expect(descriptions(TaskNoticesConfig)).toEqual(inBothLanguages(['$', '$.enabled', '$.preview']))
  })

  it('tell the channel a background task came from how it ended, with the start of its result', async () => {
    const { build, outbox } = await setup()
    const { id, finish } = await build('web')
    expect((await finish({ output: 'build finished: 0 errors' })).status).toBe('succeeded')
    expect(await outbox.next()).toEqual({ channelId: 'room', text: `后台任务 ${id}（build）已完成：build finished: 0 errors`, id: 'm1' })
  })

  it('tell a failure too', async () => {
    const { build, outbox } = await setup()
    const { id, finish } = await build('web')
    expect((await finish({ error: 'disk full' })).status).toBe('failed')
    expect((await outbox.next()).text).toMatch(new RegExp(`^后台任务 ${id}（build）失败：.*disk full`))
  })

  it('cut the preview at `preview` characters, or leave it out with 0', async () => {
    const { build, outbox } = await setup({ notices: { preview: 5 } })
    const { id, finish } = await build('web')
    await finish({ output: 'build finished' })
    expect((await outbox.next()).text).toBe(`后台任务 ${id}（build）已完成：build…`)
    await t!.dispose()
    const again = await setup({ notices: { preview: 0 } })
    const second = await again.build('web')
    await second.finish({ output: 'build finished' })
    expect((await again.outbox.next()).text).toBe(`后台任务 ${second.id}（build）已完成。`)
  })

  it('speak the channel\'s language', async () => {
    const { build, outbox, app } = await setup()
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    const { id, finish } = await build('web')
    await finish({ output: 'ok' })
    expect((await outbox.next()).text).toBe(`Background task ${id} (build) succeeded: ok`)
  })

  it('go to the task\'s own channel; a task without one is told nowhere', async () => {
    const { build, outbox } = await setup()
    const web = await build('web', { id: 'webui:1', userId: 'alice' })
    const other = await build('other', t!.session('bob', 'lab'))
    await web.finish({ output: 'first' })
    await other.finish({ output: 'second' })
    expect(await outbox.next()).toEqual({ channelId: 'lab', text: `后台任务 ${other.id}（build）已完成：second`, id: 'm1' })
    expect(outbox.sent).toHaveLength(1)
  })

  it('are not sent when disabled', async () => {
    const { build, marker, outbox, app } = await setup({ notices: { enabled: false } })
    const { finish } = await build('web')
    await finish({ output: 'done' })
    await marker()
    expect(outbox.sent).toHaveLength(1)
    expect(app.i18n.get('dogu.notices.settled')).toEqual({})
  })

  it('wait for their channel\'s bot to be online; one that is not within the wait gets none, and the log says so', async () => {
    // loader-restart-console.spec.ts has the bot coming online after a koishi start; here it never does.
    const { app, bot, build, marker, outbox, guard } = await setup({ notices: false })
    app.plugin({ name: 'notices', inject: ['background'], apply: (ctx) => taskNotices(ctx, {}, 50) })
    await t!.settle()
    const given = /\[dogu\] bot mock:514 was not online within 50 ms: mock:room was not told that task task_\w+ ended/
    guard.expect(given)
    bot.offline()
    const { finish } = await build('web')
    await finish({ output: 'done' })
    await until(app, () => guard.lines.some((line) => given.test(`[${line.name}] ${line.message}`)), 'the notice given up')
    bot.online()
    await marker()
    expect(outbox.sent).toHaveLength(1)
  })

  it('stop with their plugin', async () => {
    const { build, marker, outbox, forks } = await setup()
    const { finish } = await build('web')
    forks.notices!.dispose()
    await t!.settle()
    await finish({ output: 'done' })
    await marker()
    expect(outbox.sent).toHaveLength(1)
  })
})
