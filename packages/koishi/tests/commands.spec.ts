import { defineTool, PERMISSION_MODES } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { CommandsConfig } from '../src/commands'
import { type ChatApp, chatApp, type ChatAppOptions, descriptions, inBothLanguages } from './chat-harness'

let t: ChatApp | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

let release: (() => void) | undefined

/** An app with `echo` (read), `deploy` (exec, asks, targets an environment) and `build` (outlives its timeout). */
async function setup(options: ChatAppOptions = {}) {
  t = await chatApp(options)
  let done!: () => void
  const finished = new Promise<void>((resolve) => { done = resolve })
  release = done
  t.app.plugin({
    name: 'tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text\nSecond line, not listed.',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'read' },
        run: (args: { text: string }) => args.text,
      }))
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy the current build',
        args: Schema.object({ env: Schema.string().required() }),
        traits: { effect: 'exec' },
        permission: (args: { env: string }) => ({ name: 'deploy:run', target: args.env }),
        run: (args: { env: string }) => `deployed ${args.env}`,
      }))
      ctx.tools.define(defineTool({
        name: 'build',
        description: 'Build the project (slow)',
        traits: { effect: 'read', timeout: 1 },
        run: async () => {
          await finished
          return 'build finished: 0 errors'
        },
      }))
    },
  })
  await t.settle()
  return t
}

const send = (user: string, text: string, channel = 'room') => t!.client(user, channel).receive(text)

describe('dogu.tools', () => {
  it('lists the tools of this session, first lines only', async () => {
    await setup()
    const [reply] = await send('alice', 'dogu.tools')
    const lines = reply.split('\n')
    expect(lines[0]).toBe('本会话可用的工具（5 个）：')
    expect(lines.slice(1).map((line) => line.split(' — ')[0])).toEqual(['build', 'deploy', 'echo', 'task_cancel', 'task_status'])
    expect(lines[3]).toBe('echo — Repeat a text')
  })

  it('lists at most listLimit tools', async () => {
    await setup({ commands: { listLimit: 2 } })
    expect(await send('alice', 'dogu.tools')).toEqual(['本会话可用的工具（5 个）：\nbuild — Build the project (slow)\ndeploy — Deploy the current build\n……另有 3 个'])
  })

  it('searches with tool_search\'s ranking', async () => {
    await setup()
    const [reply] = await send('alice', 'dogu.tools deploy the build')
    expect(reply.split('\n').slice(0, 2)).toEqual(['与“deploy the build”最相关的工具：', 'deploy — Deploy the current build'])
    expect(await send('alice', 'dogu.tools weather forecast')).toEqual(['没有与“weather forecast”相关的工具。'])
  })

  it('speaks the user\'s language', async () => {
    await setup()
    await t!.app.mock.initUser('eve', 1, { locales: ['en-US'] })
    expect(await send('eve', 'dogu.tools weather')).toEqual(['No tool matches "weather".'])
  })

  it('needs authority 1', async () => {
    await setup()
    expect(await send('guest', 'dogu.tools')).toEqual(['权限不足。'])
  })
})

describe('dogu.run', () => {
  it('calls a tool as the caller and shows the result', async () => {
    await setup()
    expect(await send('ops', 'dogu.run echo {"text": "hi <b>there</b> & you"}')).toEqual(['echo：成功\nhi <b>there</b> & you'])
  })

  it('asks in chat when the call needs approval, and waits for the answer', async () => {
    await setup()
    const run = send('ops', 'dogu.run deploy {"env":"prod"}')
    const question = await t!.outbox.next()
    expect(question.text).toMatch(/^\[1\] 工具 deploy 请求批准：deploy\(env=prod\) — deploy:run "prod"\n/)
    expect(await send('ops', 'y')).toEqual(['已允许 [1] deploy(env=prod) — deploy:run "prod"（仅此一次）。'])
    expect(await run).toEqual(['deploy：成功\ndeployed prod'])
  })

  it('reports a denial, a bad call and a long result as the model would get them', async () => {
    await setup({ commands: { maxOutput: 5 } })
    const run = send('ops', 'dogu.run deploy {"env":"prod"}')
    await t!.outbox.next()
    await send('ops', 'n')
    const [denied] = await run
    expect(denied).toMatch(/^deploy：被拒绝\n/)
    const [invalid] = await send('ops', 'dogu.run echo {"text": 1}')
    expect(invalid).toMatch(/^echo：出错\n/)
    expect(await send('ops', 'dogu.run echo {"text":"hello world"}')).toEqual(['echo：成功\nhello\n……（已截断，共 11 字）'])
  })

  it('hands a slow call to the background', async () => {
    await setup()
    const [reply] = await send('ops', 'dogu.run build')
    expect(reply).toMatch(/^build 已转入后台任务 task_\w+，完成后会通知。$/)
  })

  it('needs authority 3, by Koishi\'s user table', async () => {
    await setup()
    expect(await send('alice', 'dogu.run echo {"text":"hi"}')).toEqual(['权限不足。'])
  })

  it('needs authority 3 without a database too: the configured default decides', async () => {
    await setup({ database: false, defaultAuthority: 1 })
    expect(await send('ops', 'dogu.run echo {"text":"hi"}')).toEqual(['权限不足。'])
  })

  it('runs without a database when the default authority is enough', async () => {
    await setup({ database: false, defaultAuthority: 3 })
    expect(await send('anyone', 'dogu.run echo {"text":"hi"}')).toEqual(['echo：成功\nhi'])
  })
})

describe('dogu.tasks', () => {
  it('lists this session\'s background tasks with their status', async () => {
    await setup()
    expect(await send('alice', 'dogu.tasks')).toEqual(['本会话没有后台任务。'])
    const [started] = await send('ops', 'dogu.run build')
    const id = /task_\w+/.exec(started)![0]
    const [running] = await send('alice', 'dogu.tasks')
    expect(running).toMatch(new RegExp(`^本会话的后台任务（1 个）：\n${id} build：运行中（\\d+ 秒前开始）$`))
    // Another channel has its own tasks.
    expect(await send('alice', 'dogu.tasks', 'elsewhere')).toEqual(['本会话没有后台任务。'])
    release!()
    await t!.app.background.wait(id, { timeout: 5_000 })
    const [settled] = await send('alice', 'dogu.tasks')
    expect(settled).toMatch(new RegExp(`^本会话的后台任务（1 个）：\n${id} build：已完成（`))
  })

  it('says when the background service is not loaded', async () => {
    await setup()
    t!.forks.background.dispose()
    await t!.settle()
    expect(await send('alice', 'dogu.tasks')).toEqual(['后台任务服务没有加载。'])
  })
})

describe('dogu.grants and dogu.revoke', () => {
  /** ops approves a deploy in a channel with the given scope. */
  async function grant(answer: string, env: string, channel = 'room') {
    const run = send('ops', `dogu.run deploy {"env":"${env}"}`, channel)
    await t!.outbox.next()
    await send('ops', answer, channel)
    await run
  }

  it('lists the grants of this session and of the caller; -a lists all', async () => {
    await setup()
    expect(await send('ops', 'dogu.grants')).toEqual(['没有授权。'])
    await grant('a', 'prod')
    await grant('s', 'staging', 'other')
    const [always, session] = t!.app.permissions.grants()
    expect(await send('ops', 'dogu.grants')).toEqual([`授权（1 条）：\n${always.id} · 总是 · deploy:run（prod） · 工具 deploy · 由 mock:ops 批准`])
    // admin sees neither without -a: the always grant is ops', the session grant another channel's.
    expect(await send('admin', 'dogu.grants')).toEqual(['没有授权。'])
    expect(await send('admin', 'dogu.grants -a')).toEqual([`授权（2 条）：\n${always.id} · 总是 · deploy:run（prod） · 工具 deploy · 由 mock:ops 批准\n`
      + `${session.id} · 本会话 · deploy:run（staging） · 工具 deploy · 由 mock:ops 批准`])
  })

  it('revokes a grant by id', async () => {
    await setup()
    await grant('a', 'prod')
    const [{ id }] = t!.app.permissions.grants()
    expect(await send('ops', `dogu.revoke ${id}`)).toEqual([`已撤销授权 ${id}。`])
    expect(t!.app.permissions.grants()).toEqual([])
    expect(await send('ops', `dogu.revoke ${id}`)).toEqual([`没有 id 为 ${id} 的授权。`])
  })

  it('need authority 3', async () => {
    await setup()
    expect(await send('alice', 'dogu.grants')).toEqual(['权限不足。'])
    expect(await send('alice', 'dogu.revoke x')).toEqual(['权限不足。'])
  })
})

describe('dogu.mode', () => {
  const modes = Object.keys(PERMISSION_MODES).join(', ')

  it('shows, sets and resets the mode of this session', async () => {
    await setup({ permissions: { mode: 'acceptEdits' } })
    expect(await send('admin', 'dogu.mode')).toEqual([`本会话的权限模式：acceptEdits（可选：${modes}）`])
    expect(await send('admin', 'dogu.mode readOnly')).toEqual(['本会话的权限模式已设为 readOnly。'])
    expect(t!.app.permissions.modeOf('mock:room')).toBe('readOnly')
    expect(t!.app.permissions.modeOf('mock:other')).toBe('acceptEdits')
    // The mode decides: a read-only session's exec call is denied without asking.
    const [denied] = await send('admin', 'dogu.run deploy {"env":"prod"}')
    expect(denied).toMatch(/^deploy：被拒绝\n/)
    expect(t!.outbox.sent).toEqual([])
    expect(await send('admin', 'dogu.mode sideways')).toEqual([`没有 sideways 这种模式。可选：${modes}`])
    expect(await send('admin', 'dogu.mode -r')).toEqual(['本会话的权限模式已恢复为默认：acceptEdits。'])
    expect(t!.app.permissions.modeOf('mock:room')).toBe('acceptEdits')
  })

  it('needs authority 4: trust approves everything', async () => {
    await setup()
    expect(await send('ops', 'dogu.mode trust')).toEqual(['权限不足。'])
    expect(t!.app.permissions.modeOf('mock:room')).toBe('default')
  })
})

describe('command texts', () => {
  it('config: defaults, and every field described in Chinese and English', () => {
    expect(CommandsConfig({})).toEqual({
      enabled: true,
      authority: { tools: 1, tasks: 1, run: 3, grants: 3, revoke: 3, mode: 4, mcp: 3, mcpAuth: 4 },
      maxOutput: 1000,
      listLimit: 20,
    })
    expect(descriptions(CommandsConfig)).toEqual(inBothLanguages([
      '$', '$.enabled', '$.authority', '$.authority.tools', '$.authority.tasks', '$.authority.run',
      '$.authority.grants', '$.authority.revoke', '$.authority.mode', '$.authority.mcp', '$.authority.mcpAuth', '$.maxOutput', '$.listLimit',
    ]))
  })

  it('describe every command in both languages', async () => {
    await setup()
    const names = ['dogu', 'dogu.tools', 'dogu.run', 'dogu.tasks', 'dogu.grants', 'dogu.revoke', 'dogu.mode', 'dogu.mcp', 'dogu.mcp.auth']
    for (const locale of ['zh-CN', 'en-US']) {
      for (const name of names) {
        const path = `commands.${name}.description`
        expect(t!.app.i18n.get(path)[locale], `${locale} ${path}`).toEqual(expect.any(String))
      }
    }
    expect(t!.app.$commander.get('dogu.run')?.config.authority).toBe(3)
  })

  it('go away with the plugin', async () => {
    await setup()
    t!.forks.commands!.dispose()
    await t!.settle()
    expect(t!.app.$commander.get('dogu.tools')).toBeUndefined()
    expect(t!.app.i18n.get('commands.dogu.tools.description')).toEqual({})
    expect(await send('alice', 'dogu.tools')).toEqual([])
  })
})
