// A question that outlives the bot's process, answered from Koishi's console (docs/koishi.md,
// "after a restart"), as an owner runs the bot: Koishi's own worker reads koishi.yml with the
// server, the console and its login (@koishijs/plugin-auth) and SQLite before or after Dogu.
// The test is the owner's browser: a WebSocket on the console, logged in as admin, calling
// Dogu's page's listeners (dogu/approvals.list, dogu/approvals.answer). And a task notice
// after a restart waits for the channel's bot to be online: the probe holds the mock bot
// offline across the start (DOGU_PROBE_BOT=held, loader-instance/probe) and refuses what is
// sent through it meanwhile, as an adapter still connecting would.
import { describe, expect, it } from 'vitest'
import { CONSOLE_LINKS, ConsoleClient, type Instance, instanceDir, startInstance } from './koishi-worker'
import { freePort } from '../../../test-support/free-port'
import { join } from 'node:path'

const PASSWORD = 'change-me'

/** Started once the database, ctx.background, the notes tool and the console are there. */
const start = (dir: string, env: Record<string, string> = {}) => startInstance(dir, (status) => status.database && status.background && status.tools.includes('save_note'), 'the database, ctx.background and the notes tool', env)

const yml = (order: readonly string[], port: number) => `plugins:\n${order.map((part) => ({
  probe: `  owner-probe: {}\n`,
  mock: `  mock:\n    selfId: '514'\n`,
  server: `  server:\n    host: 127.0.0.1\n    port: ${port}\n`,
  console: `  console:\n    open: false\n`,
  auth: `  auth:\n    admin:\n      password: ${PASSWORD}\n`,
  database: `  database-sqlite:\n    path: data/koishi.db\n`,
  dogu: `  dogu:\n    permissions:\n      askTimeout: 600000\n`,
  notes: `  notes: {}\n`,
  slow: `  slow-build: {}\n`,
}[part])).join('')}`

const ORDERS = [
  ['the database before Dogu', ['probe', 'mock', 'server', 'console', 'auth', 'database', 'dogu', 'notes']],
  ['the database after Dogu and the tools', ['probe', 'mock', 'server', 'console', 'auth', 'dogu', 'notes', 'database']],
] as const

/** An instance folder of this file's koishi.yml on a free port, with what the console needs. */
async function consoleInstance(order: readonly string[]) {
  const port = await freePort()
  const dir = await instanceDir(yml(order, port), { ...CONSOLE_LINKS, 'koishi-plugin-slow-build': join(__dirname, 'loader-instance/slow') })
  return { dir, base: `http://127.0.0.1:${port}` }
}

/** Alice (authority 3) runs save_note with dogu.run; resolves with the question once the bot posts it. */
async function ask(instance: Instance, text: string) {
  const before = instance.sent.length
  // Never answered in this process: the SIGINT ends it, and the op with it.
  instance.op('receive', { userId: 'alice', text: `dogu.run save_note {"text":"${text}"}` }).catch(() => {})
  return instance.posted(before, 'the question')
}

/** The owner's browser on the console, logged in as admin (authority 5). */
async function owner(base: string) {
  const console = await ConsoleClient.open(base)
  await console.call('login/password', 'admin', PASSWORD)
  return console
}

interface Listed { id: string; tool: string; summary: string; restored?: { originalId: string } }
type Reply<T> = { value: T } | { error: { code: string; message: string } }

/** The console's questions once there are `count` (the restored ones are listed as the engine reads its store). */
async function questions(instance: Instance, console: ConsoleClient, count = 1) {
  let listed: Listed[] = []
  await instance.until(async () => {
    const reply = await console.call<Reply<Listed[]>>('dogu/approvals.list', {})
    listed = 'value' in reply ? reply.value : []
    return listed.length >= count
  }, `${count} questions listed in the console`)
  return listed
}

describe('a question across a restart of koishi start, answered from Koishi\'s console', () => {
  it.each(ORDERS)('%s: the console lists the restored question; its answer runs the call once, the channel gets the task notice, dogu.audit shows the console\'s answer after the restart; nothing logs an error or warning', async (_, order) => {
    const { dir, base } = await consoleInstance(order)
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    await ask(instance, 'hi')
    await instance.stop()
    expect(instance.problems()).toEqual([])

    instance = await start(dir)
    expect(await instance.posted(0, 'the question posted again')).toMatch(/机器人重启过，这个请求仍在等待回答。|The bot restarted, and this request is still open\./)
    const console = await owner(base)
    const [question, ...more] = await questions(instance, console)
    expect(more).toEqual([])
    expect(question).toMatchObject({ tool: 'save_note', summary: 'save_note(text=hi)', restored: { originalId: expect.any(String) } })
    const answered = await console.call<Reply<{ status: string; taskId: string; reason: string }>>('dogu/approvals.answer', { id: question.id, decision: 'allow' })
    // The login on platform console: console:admin, as chat and dogu.audit write it.
    expect(answered).toEqual({ value: { status: 'accepted', taskId: expect.stringMatching(/^task_\w+$/), reason: 'approved by console:admin (once) after a restart' } })
    const { taskId } = (answered as { value: { taskId: string } }).value
    // The question posted again says who answered it; the task notice brings the result.
    await instance.posted(2, 'the closing and the task notice')
    const [closing, notice] = [instance.sent.slice(1).find((text) => !text.includes(taskId)), instance.sent.find((text) => text.includes(taskId))]
    expect(closing).toMatch(/^\[1\] save_note\(text=hi\)(：已由 console:admin 处理（仅此一次）。|: answered by console:admin \(once\)\.)$/)
    expect(notice).toContain(taskId)
    expect(notice).toContain('saved “hi”')
    // The chat question closed with the console's answer: alice's `y` is conversation again.
    expect(await instance.receive('y')).toEqual([])
    expect(await instance.receive('dogu.pending')).toEqual([expect.stringMatching(/本频道中没有等你批准的请求。|No request in this channel is waiting for you\./)])
    expect(await console.call('dogu/approvals.answer', { id: question.id, decision: 'allow' })).toMatchObject({ error: { code: 'NOT_FOUND' } })
    // Newest first: the task's end (the call ran once), the console's answer after the restart, the wait SIGINT cut off.
    const audit = (await instance.receive('dogu.audit -t save_note')).join('\n').split('\n').slice(1)
    expect(audit).toHaveLength(3)
    expect(audit[0]).toMatch(/ mock:alice save_note(：|: )(成功|ok) · /)
    expect(audit[1]).toMatch(/(重启后答复|answered after a restart).* · console:admin (通过控制台答复允许|answered allow)/)
    expect(audit.join('\n')).not.toContain('console:console')
    expect(audit[2]).toMatch(/(等待批准时机器人停止，请求已保留，重启后再问|stopped while waiting; the request was kept)/)
    expect(instance.sent).toHaveLength(3)
    console.close()
    await instance.stop()
    expect(instance.problems()).toEqual([])
  })

  it('after the restart, what the bot posts on its own waits for it to be online: the task the restart cut off and the call the console approved meanwhile are told once it connects, the question still open is posted again then; nothing is sent through it before; nothing logs an error or warning', async () => {
    const { dir, base } = await consoleInstance(['probe', 'mock', 'server', 'console', 'auth', 'database', 'dogu', 'notes', 'slow'])
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    const [moved] = await instance.receive('dogu.run build {"target":"web"}')
    const buildId = /(task_\w+)/.exec(moved)?.[1]
    expect(buildId).toBeDefined()
    await ask(instance, 'hi')
    expect(await ask(instance, 'later')).toMatch(/^\[2\] /)
    await instance.stop()
    expect(instance.problems()).toEqual([])

    // The bot is still connecting as the start announces the build the restart cut off, and
    // as the console answers the first question.
    instance = await start(dir, { DOGU_PROBE_BOT: 'held' })
    const console = await owner(base)
    const listed = await questions(instance, console, 2)
    const first = listed.find((question) => question.summary === 'save_note(text=hi)')!
    const answered = await console.call<Reply<{ taskId: string }>>('dogu/approvals.answer', { id: first.id, decision: 'allow' })
    const { taskId } = (answered as { value: { taskId: string } }).value
    expect(await console.call('dogu/tasks.wait', { id: taskId })).toMatchObject({ value: { status: 'succeeded', result: { content: 'saved “hi”' } } })
    expect(await console.call('dogu/tasks.wait', { id: buildId })).toMatchObject({ value: { status: 'interrupted' } })
    // Nothing went through the bot that is not online (the probe would have refused it, and Dogu warned).
    expect(instance.sent).toEqual([])
    expect(instance.problems()).toEqual([])

    await instance.op('online')
    await instance.posted(2, 'two notices and the question posted again')
    const posted = (pattern: RegExp) => instance.sent.filter((text) => pattern.test(text))
    expect(posted(new RegExp(buildId!))).toEqual([expect.stringMatching(/已中断|interrupted/)])
    expect(posted(new RegExp(taskId))).toEqual([expect.stringContaining('saved “hi”')])
    expect(posted(/save_note\(text=later\)/)).toEqual([expect.stringMatching(/^\[\d\] [\s\S]*(机器人重启过，这个请求仍在等待回答。|The bot restarted, and this request is still open\.)/)])
    // The question answered before the bot was online is not posted again.
    expect(posted(/text=hi/)).toEqual([])
    expect((await instance.receive('dogu.pending')).join('\n')).not.toContain('text=hi')
    expect(instance.sent).toHaveLength(3)
    console.close()
    await instance.stop()
    expect(instance.problems()).toEqual([])
  })
})
