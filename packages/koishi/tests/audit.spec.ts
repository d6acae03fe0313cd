// ctx.audit on Koishi: records on the file store and in dogu_audit (SQLite), across restarts
// and a driver that starts after Dogu; the `dogu.audit` command, its filters and `--export`.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AUDIT_TABLE, type AuditRecord, defineTool, type MinatoDatabase, type Session as DoguSession } from '@dogu/core'
import SQLite from '@minatojs/driver-sqlite'
import { App, type Context, Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as Dogu from '../src'
import { auditCommand } from '../src/audit-command'
import { AuditService } from '../src/audit-service'
import { type ChatApp, chatApp, descriptions, inBothLanguages } from './chat-harness'
import { echoTool } from './echo-tool'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-audit-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const alice: DoguSession = { id: 'mock:room', platform: 'mock', channelId: 'room', userId: 'alice' }


/** A Koishi app with its base directory in `dir`, Dogu, `echo`, and SQLite on `dir/koishi.db` when asked (before or after Dogu). */
async function bot(dir: string, database?: 'sqlite' | 'sqlite-late') {
  const app = new App()
  app.baseDir = dir
  guardLogs(app)
  const sqlite = () => app.plugin(SQLite as never, { path: join(dir, 'koishi.db') })
  if (database === 'sqlite') sqlite()
  await app.start()
  app.plugin(Dogu, {
    approvals: { enabled: false },
    notices: { enabled: false },
    permissions: { syncInterval: 3_600_000 },
    background: { syncInterval: 3_600_000 },
  })
  echoTool(app)
  await app.lifecycle.flush()
  const log = app.audit.log!
  // Taken now: after the app's stop the services are gone, and their last writes must still be awaited.
  const engines = { permissions: app.permissions.engine, background: app.get('background')?.engine }
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await app.stop()
    // What the stop queued is written before the folder goes.
    await Promise.all([log.stop(), engines.permissions?.stop?.(), engines.background?.dispose()])
  }
  cleanups.push(stop)
  const echo = async (text: string) => (await app.tools.execute([{ id: `c-${text}`, name: 'echo', arguments: { text } }], { session: alice }))[0]
  const connect = async () => {
    sqlite()
    while (!app.get('database')) await new Promise((resolve) => setTimeout(resolve, 10))
    await app.lifecycle.flush()
  }
  return { app, log, stop, echo, connect, database: () => app.get('database') as unknown as MinatoDatabase }
}

const summary = (records: AuditRecord[]) => records.map((r) => `${r.tool}(${JSON.stringify(r.args)}) ${r.outcome} by ${r.caller.platform}:${r.caller.userId}`)

describe('ctx.audit on Koishi', () => {
  it('keeps records in data/dogu/audit.jsonl under the base directory without a database, across a restart', async () => {
    const dir = await tempDir()
    const one = await bot(dir)
    expect(await one.echo('hi')).toMatchObject({ status: 'ok' })
    expect(await one.app.tools.execute([{ id: 'c2', name: 'nope', arguments: {} }], { session: alice })).toMatchObject([{ status: 'error' }])
    expect(summary(await one.app.audit.query())).toEqual(['nope(undefined) error by mock:alice', 'echo({"text":"hi"}) ok by mock:alice'])
    await one.stop()
    const lines = (await readFile(join(dir, 'data/dogu/audit.jsonl'), 'utf8')).trim().split('\n')
    expect(lines.map((line) => JSON.parse(line).tool)).toEqual(['echo', 'nope'])

    const two = await bot(dir)
    expect(await two.echo('again')).toMatchObject({ status: 'ok' })
    expect(summary(await two.app.audit.query())).toEqual([
      'echo({"text":"again"}) ok by mock:alice', 'nope(undefined) error by mock:alice', 'echo({"text":"hi"}) ok by mock:alice',
    ])
    expect((await two.app.audit.query({ tool: 'echo', limit: 1 }))[0]).toMatchObject({
      tool: 'echo', outcome: 'ok', decided: { kind: 'default', effect: 'read' }, caller: { sessionId: 'mock:room', userId: 'alice', platform: 'mock' },
    })
  })

  it('keeps records in the dogu_audit table on SQLite, across a restart', async () => {
    const dir = await tempDir()
    const one = await bot(dir, 'sqlite')
    await one.echo('first')
    await one.echo('second')
    // A running bot writes every 200 ms; the driver, loaded first, stops before Dogu.
    await one.app.audit.flush()
    await one.stop()

    const two = await bot(dir, 'sqlite')
    expect(summary(await two.app.audit.query())).toEqual(['echo({"text":"second"}) ok by mock:alice', 'echo({"text":"first"}) ok by mock:alice'])
    await two.echo('third')
    expect(summary(await two.app.audit.query({ limit: 1 }))).toEqual(['echo({"text":"third"}) ok by mock:alice'])
    expect((await two.database().get(AUDIT_TABLE, {})).map((row) => [row.tool, row.userId, row.platform, row.outcome])).toEqual([
      ['echo', 'alice', 'mock', 'ok'], ['echo', 'alice', 'mock', 'ok'], ['echo', 'alice', 'mock', 'ok'],
    ])
    // Nothing went to the file.
    await expect(readFile(join(dir, 'data/dogu/audit.jsonl'), 'utf8')).rejects.toThrow(/ENOENT/)
  })

  it('moves the file\'s records and new ones into dogu_audit when the database starts after Dogu; the file is kept aside', async () => {
    const dir = await tempDir()
    const one = await bot(dir, 'sqlite-late')
    await one.echo('before')
    expect(summary(await one.app.audit.query())).toEqual(['echo({"text":"before"}) ok by mock:alice'])
    await one.connect()
    await one.echo('after')
    // Queries read the table now, and it holds what the file held, in order.
    expect(summary(await one.app.audit.query())).toEqual(['echo({"text":"after"}) ok by mock:alice', 'echo({"text":"before"}) ok by mock:alice'])
    expect((await one.database().get(AUDIT_TABLE, {})).map((row) => JSON.parse(row.record as string).args)).toEqual([{ text: 'before' }, { text: 'after' }])
    await expect(readFile(join(dir, 'data/dogu/audit.jsonl'), 'utf8')).rejects.toThrow(/ENOENT/)
    const kept = (await readFile(join(dir, 'data/dogu/audit.jsonl.migrated'), 'utf8')).trim().split('\n')
    expect(kept.map((line) => JSON.parse(line).args)).toEqual([{ text: 'before' }])
    // Restarted on the database: nothing is migrated twice.
    await one.stop()
    const two = await bot(dir, 'sqlite')
    expect(summary(await two.app.audit.query())).toEqual(['echo({"text":"after"}) ok by mock:alice', 'echo({"text":"before"}) ok by mock:alice'])
  })

  it('records how a call that moved to the background ended, as a second record', async () => {
    const dir = await tempDir()
    const { app } = await bot(dir)
    let finish!: () => void
    app.plugin({
      name: 'slow-tool',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'build',
          description: 'A long build',
          traits: { effect: 'read', timeout: 50, background: true },
          run: () => new Promise<string>((resolve) => { finish = () => resolve('built') }),
        }))
      },
    })
    await app.lifecycle.flush()
    const [moved] = await app.tools.execute([{ id: 'c-build', name: 'build' }], { session: alice })
    expect(moved).toMatchObject({ status: 'background' })
    const settled = new Promise<void>((resolve) => app.on('background/settled', () => resolve()))
    finish()
    await settled
    const [end, start] = await app.audit.query({ tool: 'build' })
    expect(start).toMatchObject({ callId: 'c-build', outcome: 'background', taskId: moved.taskId })
    expect(end).toMatchObject({ callId: 'c-build', outcome: 'ok', taskId: moved.taskId, taskStatus: 'succeeded', caller: { userId: 'alice' } })
  })

  it('is off with enabled: false: nothing is kept, and dogu.audit is not registered', async () => {
    const dir = await tempDir()
    const app = new App()
    app.baseDir = dir
    guardLogs(app)
    await app.start()
    app.plugin(Dogu, { approvals: { enabled: false }, notices: { enabled: false }, audit: { enabled: false } })
    echoTool(app)
    await app.lifecycle.flush()
    cleanups.push(() => app.stop() as unknown as Promise<void>)
    await app.tools.execute([{ id: 'c1', name: 'echo', arguments: { text: 'x' } }], { session: alice })
    expect(app.audit.enabled).toBe(false)
    expect(await app.audit.query()).toEqual([])
    expect(app.$commander.get('dogu.audit')).toBeUndefined()
    expect(await readdir(dir)).toEqual([])
  })

  it('describes its config in both languages', () => {
    const schema = (Dogu.Config as any).dict.audit
    expect(descriptions(schema)).toMatchObject(inBothLanguages([
      '$', '$.enabled', '$.hashArguments', '$.maxRecords', '$.maxAgeMs', '$.storePath', '$.authority',
    ]))
  })
})

describe('dogu.audit', () => {
  let t: ChatApp
  let dir: string

  /** The chat harness with ctx.audit (its file in a temp dir) and the command; tools echo, save (asks) and deploy (a rule denies it). */
  async function setup() {
    dir = await tempDir()
    t = await chatApp({ permissions: { rules: [{ permission: 'tool:deploy', decision: 'deny', name: 'no deploys' }] } })
    t.app.baseDir = dir
    t.app.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') })
    t.app.plugin({ name: 'dogu-audit-command', inject: ['audit'], apply: auditCommand }, {})
    t.app.plugin({
      name: 'tools',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({ name: 'echo', description: 'Echo', args: Schema.object({ text: Schema.string() }), traits: { effect: 'read' }, run: (args: { text?: string }) => args.text ?? '' }))
        ctx.tools.define(defineTool({ name: 'save', description: 'Save', traits: { effect: 'write' }, run: () => 'saved' }))
        ctx.tools.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
      },
    })
    await t.settle()
    const log = t.app.audit.log!
    cleanups.push(async () => {
      await log.stop()
      await t.dispose()
    })
  }

  const send = (user: string, text: string) => t.client(user).receive(text)
  const call = async (user: string, name: string, args: Record<string, unknown> = {}) => (await t.app.tools.execute([{ id: `${name}-${user}`, name, arguments: args }], { session: t.session(user) }))[0]
  const two = (n: number) => String(n).padStart(2, '0')
  const time = (at: number) => {
    const d = new Date(at)
    return `${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
  }
  const ms = (n: number) => n < 1000 ? `${Math.round(n)} 毫秒` : `${(n / 1000).toFixed(1)} 秒`

  /** Alice echoes and is denied deploy by a rule; bob saves, answering his own question in chat. */
  async function history() {
    expect(await call('alice', 'echo', { text: 'hi' })).toMatchObject({ status: 'ok' })
    expect(await call('alice', 'deploy')).toMatchObject({ status: 'denied' })
    const saving = call('bob', 'save')
    expect((await t.outbox.next()).text).toContain('[1] 工具 save 请求批准')
    expect(await send('bob', 'y')).toEqual(['已允许 [1] save()（仅此一次）。'])
    expect(await saving).toMatchObject({ status: 'ok' })
    const [save, deploy, echo] = await t.app.audit.query()
    return { save, deploy, echo }
  }

  it('shows the newest records to an admin: time, user, tool, outcome, what decided, who answered how, waits and run times', async () => {
    await setup()
    const { save, deploy, echo } = await history()
    const reply = await send('ops', 'dogu.audit')
    expect(reply).toEqual([[
      '审计记录，最新的在前（3 条）：',
      // The effect, the decision and the answer's channel in the chat's terms; the rule's name as written.
      `${time(save.at)} mock:bob save：成功 · 写入类工具的默认 · mock:bob 通过文字消息答复允许 · 等待 ${ms(save.waitMs!)}，运行 ${ms(save.durationMs)}`,
      `${time(deploy.at)} mock:alice deploy：被拒绝 · 规则 no deploys（拒绝） · 运行 ${ms(deploy.durationMs)}`,
      `${time(echo.at)} mock:alice echo：成功 · 只读类工具的默认 · 运行 ${ms(echo.durationMs)}`,
    ].join('\n')])
    expect(save).toMatchObject({ ask: { ended: 'answer', decision: 'allow', by: { id: 'bob', platform: 'mock' }, via: 'text' }, waitMs: expect.any(Number) })
  })

  it('shows a batch of calls nobody authorized as one line with its count, beside the approved save it could not push out', async () => {
    await setup()
    const { save } = await history()
    const flood = Array.from({ length: 120 }, (_, i) => ({ id: `u${i}`, name: `nope_${i}`, arguments: {} }))
    await t.app.tools.execute(flood, { session: t.session('alice') })
    await t.app.tools.execute([{ id: 'bad', name: 'echo', arguments: '{"text":' }, { id: 'bad2', name: 'echo', arguments: '{"text":' }], { session: t.session('alice') })
    const [bad, unknown] = await t.app.audit.query({ limit: 2 })
    expect(await send('ops', 'dogu.audit -n 2')).toEqual([[
      '审计记录，最新的在前（2 条）：',
      `${time(bad.at)} mock:alice echo：出错 · 2 次调用在权限检查前结束（invalid_arguments） · 运行 0 毫秒`,
      `${time(unknown.at)} mock:alice nope_0：出错 · 120 次调用未知工具（首个 nope_0），未到权限检查 · 运行 0 毫秒`,
    ].join('\n')])
    expect((await t.app.audit.query()).map((record) => record.id)).toContain(save.id)
  })

  it('words an ask answered on another instance: who answered, on which instance, and that the call runs there (both languages)', async () => {
    await setup()
    // The record the asking instance keeps when another instance's answer claimed its request
    // (AuditAsk.elsewhere, as the shared pending store said it).
    const at = Date.now()
    t.app.audit.log!.record({
      at, endedAt: at + 2_000, tool: 'save', callId: 'call-1', args: {}, caller: { sessionId: 'mock:room', platform: 'mock', userId: 'bob' },
      outcome: 'denied', reason: 'the request was answered on another instance (b) by mock:alice; the call runs there, not here', durationMs: 0, waitMs: 2_000,
      ask: { requestId: 'a-1', ended: 'elsewhere', decision: 'deny', elsewhere: { instance: 'b', by: 'mock:alice' } },
    })
    await t.app.audit.log!.flush()
    expect(await send('ops', 'dogu.audit')).toEqual([[
      '审计记录，最新的在前（1 条）：',
      `${time(at)} mock:bob save：被拒绝 · 未经权限检查 · mock:alice 在实例 b 上答复，调用在那里运行 · 等待 2.0 秒，运行 0 毫秒`,
    ].join('\n')])
    await t.app.database.set('channel', { platform: 'mock', id: 'room' }, { locales: ['en-US'] })
    expect((await send('ops', 'dogu.audit'))[0].split('\n')[1]).toBe(`${time(at)} mock:bob save: denied · no permission check · mock:alice answered on instance b, where the call runs · waited 2.0 s, ran 0 ms`)
  })

  it('words a grant\'s scope, a mode and a console answer in the chat\'s terms (both languages)', async () => {
    await setup()
    const at = Date.now()
    const caller = { sessionId: 'mock:room', platform: 'mock', userId: 'bob' }
    t.app.audit.log!.record({
      at, endedAt: at + 1, tool: 'save', callId: 'call-1', args: {}, caller, outcome: 'ok', durationMs: 1,
      decided: { kind: 'grant', id: 'grant_1', scope: 'always', by: 'mock:ops' },
    } as AuditRecord)
    t.app.audit.log!.record({
      at: at + 2, endedAt: at + 3, tool: 'save', callId: 'call-2', args: {}, caller, outcome: 'denied', durationMs: 1,
      decided: { kind: 'mode', mode: 'readOnly' },
    } as AuditRecord)
    t.app.audit.log!.record({
      at: at + 4, endedAt: at + 1_504, tool: 'save', callId: 'call-3', args: {}, caller, outcome: 'ok', durationMs: 4, waitMs: 1_500,
      decided: { kind: 'default', effect: 'exec' },
      ask: { requestId: 'a-3', ended: 'answer', decision: 'allow', by: { id: 'admin', platform: 'console' }, via: 'console' },
    } as AuditRecord)
    await t.app.audit.log!.flush()
    expect(await send('ops', 'dogu.audit')).toEqual([[
      '审计记录，最新的在前（3 条）：',
      `${time(at + 4)} mock:bob save：成功 · 执行类工具的默认 · console:admin 通过控制台答复允许 · 等待 1.5 秒，运行 4 毫秒`,
      `${time(at + 2)} mock:bob save：被拒绝 · 只读模式 · 运行 1 毫秒`,
      `${time(at)} mock:bob save：成功 · 授权 grant_1（总是） · 运行 1 毫秒`,
    ].join('\n')])
    await t.app.database.set('channel', { platform: 'mock', id: 'room' }, { locales: ['en-US'] })
    expect(await send('ops', 'dogu.audit')).toEqual([[
      'Audit records, newest first (3):',
      `${time(at + 4)} mock:bob save: ok · default for exec tools · console:admin answered allow via console · waited 1.5 s, ran 4 ms`,
      `${time(at + 2)} mock:bob save: denied · read-only mode · ran 1 ms`,
      `${time(at)} mock:bob save: ok · grant grant_1 (always) · ran 1 ms`,
    ].join('\n')])
  })

  it('filters by user, tool and outcome, and shows at most -n records', async () => {
    await setup()
    const { save, deploy, echo } = await history()
    const lines = async (command: string) => (await send('ops', command))[0].split('\n')
    expect(await lines('dogu.audit -u alice')).toEqual(['审计记录，最新的在前（2 条）：', expect.stringContaining(' mock:alice deploy：被拒绝'), expect.stringContaining(' mock:alice echo：成功')])
    expect(await lines('dogu.audit -u mock:bob')).toEqual(['审计记录，最新的在前（1 条）：', expect.stringContaining(`${time(save.at)} mock:bob save：成功`)])
    expect(await lines('dogu.audit -t echo')).toEqual(['审计记录，最新的在前（1 条）：', expect.stringContaining(`${time(echo.at)} mock:alice echo：成功`)])
    expect(await lines('dogu.audit -o denied')).toEqual(['审计记录，最新的在前（1 条）：', expect.stringContaining(`${time(deploy.at)} mock:alice deploy：被拒绝 · 规则 no deploys（拒绝）`)])
    expect(await lines('dogu.audit -u alice -o ok')).toEqual(['审计记录，最新的在前（1 条）：', expect.stringContaining(' mock:alice echo：成功')])
    expect(await lines('dogu.audit -n 1')).toEqual(['审计记录，最新的在前（1 条）：', expect.stringContaining(' mock:bob save：成功')])
    expect(await send('ops', 'dogu.audit -u carol')).toEqual(['没有匹配的审计记录。'])
  })

  it('says what is wrong with an unknown outcome or a count below 1, and refuses a user without the authority', async () => {
    await setup()
    await history()
    expect(await send('ops', 'dogu.audit -o fine')).toEqual(['没有 fine 这种结果。可选：ok, error, denied, timed_out, cancelled, background, rate_limited'])
    expect(await send('ops', 'dogu.audit -n 0')).toEqual(['-n 须为不小于 1 的整数，而不是 0。'])
    expect(await send('ops', 'dogu.audit -n two')).toEqual(['-n 须为不小于 1 的整数，而不是 two。'])
    expect(await send('alice', 'dogu.audit')).toEqual(['权限不足。'])
  })

  it('--export writes the matching records, oldest first, to data/dogu/audit-export-<time>.jsonl and says where', async () => {
    await setup()
    const { deploy, echo } = await history()
    const [reply] = await send('ops', 'dogu.audit --export -u alice')
    const match = /^已将 2 条审计记录写入 (.+)。$/.exec(reply)
    expect(match, reply).not.toBeNull()
    const path = match![1]
    expect(path.startsWith(join(dir, 'data/dogu/audit-export-'))).toBe(true)
    expect(path).toMatch(/audit-export-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.jsonl$/)
    const records = (await readFile(path, 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(records).toEqual([echo, deploy].map((r) => JSON.parse(JSON.stringify(r))))
    const [none] = await send('ops', 'dogu.audit --export -t nothing')
    expect(none).toMatch(/^已将 0 条审计记录写入 .+audit-export-.+\.jsonl。$/)
  })
})
