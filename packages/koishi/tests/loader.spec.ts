// A Koishi instance as owners run it: Koishi's own worker (what `koishi start` forks) reads
// koishi.yml with @koishijs/loader, loads Dogu, a SQLite driver that starts asynchronously,
// the mock adapter and a tool plugin by their package names, and a chat approval goes through
// it. The instance's node_modules links this workspace's packages; NODE_PATH points the
// loader there (docs/testing.md). Installing from the tarballs is tested separately.
import { describe, expect, it } from 'vitest'
import { type Instance, instanceDir, startInstance } from './koishi-worker'

/** Started once the database, ctx.background and the notes tool are there. */
const start = (dir: string) => startInstance(dir, (status) => status.database && status.background && status.tools.includes('save_note'), 'the database, ctx.background and the notes tool')

/** Alice (authority 3) runs `save_note` with `dogu.run`; `answer` is her reply to the question, if one comes. */
async function runNote(instance: Instance, text: string, answer?: string) {
  const questions = instance.sent.length
  const replies = instance.op<string[]>('receive', { userId: 'alice', text: `dogu.run save_note {"text":"${text}"}` })
  if (answer === undefined) {
    // No question may come: one would wait for an answer.
    await instance.until(async () => {
      if (instance.sent.length > questions) throw new Error(`asked again: ${instance.sent[questions]}`)
      return Promise.race([replies.then(() => true), new Promise<boolean>((done) => setTimeout(() => done(false), 50))])
    }, 'the reply to dogu.run')
    return { replies: await replies, question: undefined }
  }
  let early: string[] | undefined
  void replies.then((value) => { early = value })
  await instance.until(() => {
    if (early) throw new Error(`dogu.run answered before any question: ${JSON.stringify(early)}`)
    return instance.sent.length > questions
  }, 'the chat question')
  await instance.op('receive', { userId: 'alice', text: answer })
  return { replies: await replies, question: instance.sent[questions] }
}

const yml = (order: string[]) => `plugins:\n${order.map((part) => ({
  mock: `  mock:\n    selfId: '514'\n`,
  database: `  database-sqlite:\n    path: data/koishi.db\n`,
  // Tokens like tok-1a2b3c4d never reach the chat (tools.redact). Four notes per user a month
  // (tools.quotas): a window so long that no test run sees one end.
  dogu: `  dogu:\n    notices:\n      enabled: false\n    tools:\n      redact:\n        patterns:\n          - 'tok-[0-9a-f]{8}'\n`
    + `      quotas:\n        - tools: save_note\n          per: user\n          max: 4\n          window: 30d\n          name: notes per user\n`,
  notes: `  notes: {}\n`,
  probe: `  owner-probe: {}\n`,
}[part])).join('')}`

describe('Koishi\'s loader from koishi.yml', () => {
  it.each([
    ['the database before Dogu', ['probe', 'mock', 'database', 'dogu', 'notes']],
    ['the database after Dogu and the tools', ['probe', 'mock', 'dogu', 'notes', 'database']],
  ])('%s: a chat approval edited and answered "always" runs the edited call and holds after a restart; a tool plugin\'s middleware and a redact pattern from koishi.yml apply; dogu.audit reads the calls back; a quota from koishi.yml counts across the restart and refuses the fifth note; nothing logs an error or warning', async (_, order) => {
    const dir = await instanceDir(yml(order))
    let instance = await start(dir)
    await instance.op('initUser', { userId: 'alice', authority: 3 })
    const first = await runNote(instance, 'hi', 'e a {"text": "hi there"}')
    expect(first.question).toContain('save_note(text=hi)')
    expect(first.replies.join('\n')).toContain('$.text: "hi" → "hi there"')
    expect(first.replies.join('\n')).toContain('saved “hi there”')
    expect(instance.problems()).toEqual([])
    // SIGINT, as Ctrl-C on `koishi start`: the grant and the audit records are in the SQLite file, the next start reads them.
    await instance.stop()
    expect(instance.problems()).toEqual([])
    instance = await start(dir)
    const second = await runNote(instance, 'again')
    expect(second.replies.join('\n')).toContain('saved “again”')
    // The notes plugin's middleware and the redact pattern from koishi.yml, as loaded by the loader.
    const redacted = await runNote(instance, 'key tok-1a2b3c4d')
    expect(redacted.replies.join('\n')).toContain('saved “key [redacted]”')
    expect(redacted.replies.join('\n')).not.toContain('1a2b3c4d')
    const blocked = await runNote(instance, 'the launch date')
    expect(blocked.replies.join('\n')).toContain('notes about the launch are closed')
    expect(instance.sent).toEqual([])
    const audit = (await instance.op<string[]>('receive', { userId: 'alice', text: 'dogu.audit -t save_note' })).join('\n')
    const lines = audit.split('\n').filter((line) => line.includes('save_note'))
    expect(lines).toHaveLength(4)
    // Newest first: the middleware's denial, two calls the grant allowed, then the edited one alice approved in chat.
    expect(lines[0]).toMatch(/no-launch-notes/)
    expect(lines[3]).toMatch(/改过参数|with edited arguments/)
    expect(lines[1]).not.toMatch(/改过参数|with edited arguments/)
    // The quota from koishi.yml: the three notes that ran, counted in the database across the
    // restart (the call the middleware denied gave its unit back); the fifth is refused, saying when to retry.
    const quota = (await instance.op<string[]>('receive', { userId: 'alice', text: 'dogu.quota' })).join('\n')
    expect(quota).toMatch(/^适用于你的配额（1 项）：\nnotes per user（save_note，每人每 30 天 最多 4 次）：已用 3\/4，剩余 1 次，\d+ (天|小时|分钟|秒)后重置$|^Quotas that apply to you \(1\):\nnotes per user \(save_note, 4 per 30 d for each user\): used 3\/4, 1 left, resets in \d+ (d|h|min|s)$/)
    expect((await runNote(instance, 'one more')).replies.join('\n')).toContain('saved “one more”')
    const over = await runNote(instance, 'one too many')
    // In the reader's words and units (dogu.quota's), not the model's English.
    expect(over.replies.join('\n')).toMatch(/^save_note(：超出配额，配额“notes per user”已用完（每 30 天最多 4 次），\d+ (天|小时|分钟|秒)后可再试|: [^:]+: quota "notes per user" is used up \(at most 4 per 30 d\); try again in \d+ (d|h|min|s))$/)
    expect(instance.problems()).toEqual([])
  })
})
