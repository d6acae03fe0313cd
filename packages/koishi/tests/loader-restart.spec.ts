// A question that outlives the bot's process (`permissions.durable`, docs/koishi.md), as an
// owner runs the bot: Koishi's own worker (what `koishi start` forks) reads koishi.yml with
// SQLite loaded before or after Dogu; a chat user's write call is asked about; SIGINT (Ctrl-C);
// a new start posts the question again, and `y` runs the call once, its result coming to the
// channel as a task notice. The mock adapter is driven across the restart through the probe
// plugin (loader-instance/probe), which reports what the bot posts on its own.
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Instance, instanceDir, startInstance } from './koishi-worker'

/** Started once the database, ctx.background and the notes tool are there. */
const start = (dir: string, env: Record<string, string> = {}) => startInstance(dir, (status) => status.database && status.background && status.tools.includes('save_note'), 'the database, ctx.background and the notes tool', env)

/** Runs the worker this much later than the real clock (loader-instance/clock/later.cjs). */
const later = (ms: number) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${resolve(__dirname, 'loader-instance/clock/later.cjs')}`.trim(),
  DOGU_CLOCK_OFFSET_MS: String(ms),
})

const yml = (order: string[], permissions = '') => `plugins:\n${order.map((part) => ({
  mock: `  mock:\n    selfId: '514'\n`,
  database: `  database-sqlite:\n    path: data/koishi.db\n`,
  dogu: `  dogu:\n    permissions:\n      askTimeout: 600000\n${permissions}`,
  notes: `  notes: {}\n`,
  probe: `  owner-probe: {}\n`,
}[part])).join('')}`

const ORDERS = [
  ['the database before Dogu', ['probe', 'mock', 'database', 'dogu', 'notes']],
  ['the database after Dogu and the tools', ['probe', 'mock', 'dogu', 'notes', 'database']],
] as const

/** Alice (authority 3) runs save_note with dogu.run; resolves with the question once the bot posts it. */
async function ask(instance: Instance, text: string) {
  const before = instance.sent.length
  // Never answered in this process: the SIGINT ends it, and the op with it.
  instance.op('receive', { userId: 'alice', text: `dogu.run save_note {"text":"${text}"}` }).catch(() => {})
  await instance.until(() => instance.sent.length > before, 'the question')
  return instance.sent[before]
}

const NONE_WAITING = /本频道中没有等你批准的请求。|No request in this channel is waiting for you\./

describe('a question across a restart of koishi start', () => {
  it.each(ORDERS)('%s: posted again after SIGINT and a new start; y runs the call once, the channel gets the result, dogu.audit shows the wait, the restart and the answer; nothing logs an error or warning', async (_, order) => {
    const dir = await instanceDir(yml([...order]))
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    const question = await ask(instance, 'hi')
    expect(question).toMatch(/^\[1\] (工具 save_note 请求批准：|Tool save_note asks for approval: )save_note\(text=hi\)\n/)
    expect(question).not.toMatch(/重启|restarted/)
    await instance.stop()
    expect(instance.problems()).toEqual([])

    instance = await start(dir)
    const again = await instance.posted(0, 'the question posted again')
    expect(again).toContain('save_note(text=hi)')
    expect(again).toMatch(/机器人重启过，这个请求仍在等待回答。|The bot restarted, and this request is still open\./)
    expect((await instance.receive('dogu.pending')).join('\n')).toMatch(/\[1\] save_note(：|: )save_note\(text=hi\) ?[（(](重启前提出|from before the restart)/)
    const [reply] = await instance.receive('y')
    expect(reply).toMatch(/^(已允许|Allowed) \[1\] save_note\(text=hi\)/)
    const taskId = /(task_\w+)/.exec(reply)?.[1]
    expect(taskId).toBeDefined()
    const notice = await instance.posted(1, 'the task notice')
    expect(notice).toContain(taskId!)
    expect(notice).toContain('saved “hi”')
    expect(await instance.receive('dogu.pending')).toEqual([expect.stringMatching(NONE_WAITING)])
    // Newest first: the task's end (the call ran once), the answer after the restart, the wait SIGINT cut off.
    const audit = (await instance.receive('dogu.audit -t save_note')).join('\n').split('\n').slice(1)
    expect(audit).toHaveLength(3)
    expect(audit[0]).toMatch(/ mock:alice save_note(：|: )(成功|ok) · /)
    expect(audit[1]).toMatch(/(重启后答复|answered after a restart).* · mock:alice (通过文字消息答复允许|answered allow)/)
    expect(audit[2]).toMatch(/(等待批准时机器人停止，请求已保留，重启后再问|stopped while waiting; the request was kept)/)
    expect(instance.sent).toHaveLength(2)
    await instance.stop()
    expect(instance.problems()).toEqual([])

    // Answered, it is gone: the next start posts nothing and runs nothing again.
    instance = await start(dir)
    expect(await instance.receive('dogu.pending')).toEqual([expect.stringMatching(NONE_WAITING)])
    expect(instance.sent).toEqual([])
    expect(instance.problems()).toEqual([])
  })

  it.each(ORDERS)('%s: an edit after SIGINT and a new start (e {…}): a field the schema does not have is refused and the question keeps waiting; a valid edit is authorized again and the edited call runs once; nothing logs an error or warning', async (_, order) => {
    const dir = await instanceDir(yml([...order]))
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    await ask(instance, 'hi')
    await instance.stop()

    instance = await start(dir)
    // The question posted again offers the edit, as the first one did.
    expect(await instance.posted(0, 'the question posted again')).toMatch(/要先改参数再允许，回复 e \{|To change the arguments first, reply e \{/)
    const [refused] = await instance.receive('e {"text":"edited","tags":["x"]}')
    expect(refused).toMatch(/^(修改没有生效，请求 \[1\] 仍在等待：|The edit did not apply; request \[1\] is still waiting: )/)
    expect(refused).toContain('tags')
    expect((await instance.receive('dogu.pending')).join('\n')).toMatch(/\[1\] save_note(：|: )save_note\(text=hi\)/)
    const [reply] = await instance.receive('e {"text":"edited"}')
    expect(reply).toMatch(/^(已按修改后的参数允许 \[1\] save_note\(text=hi\)（仅此一次）。改动：|Allowed \[1\] save_note\(text=hi\) with edited arguments \(once\)\. Changes:)\n\$\.text: "hi" → "edited"\n(实际运行的参数：|It runs with: )\{"text":"edited"\}\n/)
    const taskId = /(task_\w+)/.exec(reply)?.[1]
    expect(taskId).toBeDefined()
    const notice = await instance.posted(1, 'the task notice')
    expect(notice).toContain(taskId!)
    expect(notice).toContain('saved “edited”')
    expect(await instance.receive('dogu.pending')).toEqual([expect.stringMatching(NONE_WAITING)])
    // Once: one end of the call, after the answer that approved the edit.
    const audit = (await instance.receive('dogu.audit -t save_note')).join('\n').split('\n').slice(1)
    expect(audit).toHaveLength(3)
    expect(audit[0]).toMatch(/ mock:alice save_note(：|: )(成功|ok) · /)
    expect(audit[1]).toMatch(/(重启后答复|answered after a restart).* · mock:alice /)
    expect(instance.sent).toHaveLength(2)
    await instance.stop()
    expect(instance.problems()).toEqual([])
  })

  it('an expiry that passes while the bot is down: the new start closes the question and tells the channel; nothing runs', async () => {
    const dir = await instanceDir(yml(['probe', 'mock', 'database', 'dogu', 'notes']))
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    await ask(instance, 'late')
    await instance.stop()
    // Started as if the bot had been down for twenty minutes: the 10-minute question expired meanwhile.
    instance = await start(dir, later(20 * 60_000))
    const told = await instance.posted(0, 'the closure')
    expect(told).toMatch(/^(机器人重启后，请求 save_note\(text=late\) 已关闭，没有运行：它在机器人停机期间超时了|After the bot restarted, the request save_note\(text=late\) was closed and did not run: it timed out while the bot was down)$/)
    expect(await instance.receive('y')).toEqual([])
    const audit = (await instance.receive('dogu.audit -t save_note')).join('\n')
    expect(audit).not.toMatch(/(成功|ok) · /)
    expect(instance.sent).toHaveLength(1)
    expect(instance.problems()).toEqual([])
  })

  it('a deny rule added while the bot was down: y is refused and says why; nothing runs', async () => {
    const dir = await instanceDir(yml(['probe', 'mock', 'database', 'dogu', 'notes']))
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    await ask(instance, 'plans')
    await instance.stop()
    const { writeFile } = await import('node:fs/promises')
    await writeFile(join(dir, 'koishi.yml'), yml(['probe', 'mock', 'database', 'dogu', 'notes'], '      rules:\n        - permission: tool:save_note\n          decision: deny\n          name: no notes\n'))
    instance = await start(dir)
    await instance.posted(0, 'the question posted again')
    const [reply] = await instance.receive('y')
    expect(reply).toMatch(/^\[1\] save_note\(text=plans\)(：这个回答没有生效，现在的规则不允许这次调用|: that answer did not count, the rules deny this call now)/)
    expect(reply).toContain('no notes')
    expect(await instance.receive('dogu.pending')).toEqual([expect.stringMatching(NONE_WAITING)])
    expect(instance.sent).toHaveLength(1)
    expect(instance.problems()).toEqual([])
  })
})
