import { type AskerContext, type DecisionEvent, defineTool, type ToolResult } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseAnswer, parseDetails } from '../src/answer-parser'
import { chatApprovals, ChatApprovalsConfig } from '../src/chat-approvals'
import { mayAnswer } from '@dogu/core'
import { type ChatApp, chatApp, type ChatAppOptions, descriptions, inBothLanguages } from './chat-harness'

let t: ChatApp | undefined
afterEach(async () => {
  vi.useRealTimers()
  await t?.dispose()
  t = undefined
})

const QUESTION = (number: number, env: string) => `[${number}] 工具 deploy 请求批准：deploy(env=${env})\n`
  + '原因：没有匹配的规则，执行类工具默认需要批准\n'
  + `要先改参数再允许，回复 e {"env": "${env}"}（只写要改的字段，JSON）。\n`
  + '回复 y 允许一次 · s 本会话内允许 · a 总是允许 · n 拒绝（也可回复 允许 / 本会话 / 总是 / 拒绝；'
  + `同时有多个请求时加上编号，如 y ${number}）。5 分钟内无人回复即拒绝。`

/** An app with a `deploy` tool (effect exec: the default rules ask) and an optional second asker. */
async function setup(options: ChatAppOptions = {}) {
  t = await chatApp(options)
  const { app } = t
  app.plugin({
    name: 'deploy-tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy the current build',
        args: Schema.object({ env: Schema.string().required() }),
        traits: { effect: 'exec' },
        run: (args: { env: string }) => `deployed ${args.env}`,
      }))
      ctx.tools.define(defineTool({
        name: 'pay',
        description: 'Pay an invoice',
        args: Schema.object({ invoice: Schema.string().required() }),
        traits: { effect: 'write' },
        confirm: 'always',
        run: (args: { invoice: string }) => `paid ${args.invoice}`,
      }))
    },
  })
  const decisions: DecisionEvent[] = []
  app.on('permissions/decision', (event) => { if (event.phase === 'approve') decisions.push(event) })
  await t.settle()
  return { ...t, decisions }
}

function deploy(env: string, session = t!.session('alice'), signal?: AbortSignal): Promise<ToolResult> {
  return t!.app.tools.execute([{ id: `call-${env}`, name: 'deploy', arguments: { env } }], { session, signal }).then(([result]) => result)
}

/** A second asker, as the WebUI would be: it shows every request and may answer it. */
function webAsker(app: ChatApp['app']) {
  const shown: { id: string; context: AskerContext }[] = []
  let waiter: (() => void) | undefined
  const fork = app.plugin({
    name: 'web-asker',
    apply(ctx) {
      ctx.permissions.asker((request, context) => {
        shown.push({ id: request.id, context })
        waiter?.()
      })
    },
  })
  /** Resolves once the asker has been shown `count` requests. */
  const seen = async (count: number) => {
    while (shown.length < count) await new Promise<void>((resolve) => { waiter = resolve })
  }
  return { shown, fork, seen }
}

describe('parseAnswer', () => {
  it.each([
    ['y', { decision: 'allow', scope: 'once' }],
    ['yes', { decision: 'allow', scope: 'once' }],
    ['允许', { decision: 'allow', scope: 'once' }],
    ['s', { decision: 'allow', scope: 'session' }],
    ['本会话', { decision: 'allow', scope: 'session' }],
    ['a', { decision: 'allow', scope: 'always' }],
    ['总是', { decision: 'allow', scope: 'always' }],
    ['n', { decision: 'deny', scope: 'once' }],
    ['no', { decision: 'deny', scope: 'once' }],
    ['拒绝', { decision: 'deny', scope: 'once' }],
    [' Y ', { decision: 'allow', scope: 'once' }],
    ['ｙ', { decision: 'allow', scope: 'once' }],
    ['y 2', { decision: 'allow', scope: 'once', number: 2 }],
    ['y2', { decision: 'allow', scope: 'once', number: 2 }],
    ['允许 #3', { decision: 'allow', scope: 'once', number: 3 }],
    ['拒绝１２', { decision: 'deny', scope: 'once', number: 12 }],
    ['a.', { decision: 'allow', scope: 'always' }],
  ])('reads %j', (text, answer) => {
    expect(parseAnswer(text)).toEqual(answer)
  })

  it.each(['', 'hello', 'yes please', 'y 0', 'y -1', 'yy', 'y 2 3', '2', 'no way', 'a'.repeat(40)])('leaves %j alone', (text) => {
    expect(parseAnswer(text)).toBeUndefined()
  })
})

describe('parseDetails', () => {
  it.each([
    ['d', {}], ['D', {}], ['details', {}], ['详情', {}], ['ｄ', {}],
    ['d 2', { number: 2 }], ['d2', { number: 2 }], ['详情 #3', { number: 3 }],
  ])('reads %j', (text, details) => {
    expect(parseDetails(text)).toEqual(details)
  })

  it.each(['', 'dd', 'd 0', 'details please', 'y', '详'])('leaves %j alone', (text) => {
    expect(parseDetails(text)).toBeUndefined()
  })
})

describe('mayAnswer', () => {
  const policy = { userId: 'alice', platform: 'mock', authority: 4 }

  it('lets the caller answer, on the caller\'s platform only', () => {
    expect(mayAnswer(policy, { id: 'alice', platform: 'mock', authority: 1 })).toBe(true)
    expect(mayAnswer(policy, { id: 'alice', platform: 'discord', authority: 1 })).toBe(false)
  })

  it('lets anyone at or above the authority answer', () => {
    expect(mayAnswer(policy, { id: 'bob', platform: 'mock', authority: 3 })).toBe(false)
    expect(mayAnswer(policy, { id: 'bob', platform: 'mock', authority: 4 })).toBe(true)
    expect(mayAnswer(policy, { id: 'bob', platform: 'mock' })).toBe(false)
  })
})

describe('chat approvals', () => {
  it('are on by default; the config is described in Chinese and English', () => {
    expect(ChatApprovalsConfig({})).toEqual({ enabled: true, buttons: ['discord', 'telegram'], route: 'channel', approvers: [] })
    expect(descriptions(ChatApprovalsConfig)).toEqual(inBothLanguages(['$', '$.enabled', '$.buttons', '$.route', '$.approvers']))
  })

  it('asks in the channel the call came from: the tool, the call and why', async () => {
    const { outbox, app } = await setup()
    void deploy('prod')
    const question = await outbox.next()
    expect(question).toEqual({ channelId: 'room', text: QUESTION(1, 'prod'), id: 'm1' })
    expect(app.permissions.pending().map((request) => request.summary)).toEqual(['deploy(env=prod)'])
  })

  it('shows a secret field as •••• in the chat question and the reply; the tool still gets it', async () => {
    const { outbox, app } = await setup()
    const TOKEN = 'sk-koishi-9c8d7e'
    const KEY = 'ssh-koishi-0xFACE'
    const releaseArgs = Schema.object({
      env: Schema.string().required(),
      token: Schema.string().role('secret').required(),
      servers: Schema.array(Schema.object({ host: Schema.string(), key: Schema.string().role('secret') })),
    })
    app.plugin({
      name: 'secret-tools',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'release',
          description: 'Release with a token',
          args: releaseArgs,
          traits: { effect: 'exec' },
          run: ({ token, servers }) => `token ${token === TOKEN ? 'right' : 'wrong'}, key ${servers?.[0]?.key === KEY ? 'right' : 'wrong'}`,
        }))
      },
    })
    await t!.settle()
    const result = app.tools.execute([{ id: 'call-release', name: 'release', arguments: { env: 'prod', token: TOKEN, servers: [{ host: 'a', key: KEY }] } }], { session: t!.session('alice') })
    const question = await outbox.next()
    expect(question.text).toContain('[1] 工具 release 请求批准：release(env=prod, token="••••", servers=[{"host":"a","key":"••••"}])\n')
    const reply = await t!.client('alice').receive('y')
    expect(reply).toEqual(['已允许 [1] release(env=prod, token="••••", servers=[{"host":"a","key":"••••"}])（仅此一次）。'])
    expect((await result)[0]).toMatchObject({ status: 'ok', content: 'token right, key right' })
    expect(JSON.stringify([question, reply, outbox.sent])).not.toMatch(new RegExp(`${TOKEN}|${KEY}`))
  })

  it.each([
    ['y', 'ok', '已允许 [1] deploy(env=prod)（仅此一次）。', undefined],
    ['yes', 'ok', '已允许 [1] deploy(env=prod)（仅此一次）。', undefined],
    ['允许', 'ok', '已允许 [1] deploy(env=prod)（仅此一次）。', undefined],
    ['s', 'ok', '已允许 [1] deploy(env=prod)（本会话内）。', { scope: 'session', subject: { sessionId: 'mock:room', userId: 'alice' } }],
    ['本会话', 'ok', '已允许 [1] deploy(env=prod)（本会话内）。', { scope: 'session', subject: { sessionId: 'mock:room', userId: 'alice' } }],
    ['a', 'ok', '已允许 [1] deploy(env=prod)（总是）。', { scope: 'always', subject: { userId: 'alice', platform: 'mock' } }],
    ['总是', 'ok', '已允许 [1] deploy(env=prod)（总是）。', { scope: 'always', subject: { userId: 'alice', platform: 'mock' } }],
    ['n', 'denied', '已拒绝 [1] deploy(env=prod)。', undefined],
    ['no', 'denied', '已拒绝 [1] deploy(env=prod)。', undefined],
    ['拒绝', 'denied', '已拒绝 [1] deploy(env=prod)。', undefined],
  ])('the caller answers %j: the call is %s, with the grant it makes', async (answer, status, reply, grant) => {
    const { outbox, app, passed, decisions } = await setup()
    const result = deploy('prod')
    await outbox.next()
    expect(await t!.client('alice').receive(answer)).toEqual([reply])
    expect((await result).status).toBe(status)
    expect(decisions.map(({ decision, source }) => ({ decision, source }))).toEqual([{
      decision: status === 'ok' ? 'allow' : 'deny',
      source: expect.objectContaining({ kind: 'answer', by: { id: 'alice', platform: 'mock', authority: 1 }, scope: grant?.scope ?? 'once' }),
    }])
    expect(app.permissions.grants()).toEqual(grant
      ? [{ ...grant, id: expect.any(String), permission: 'tool:deploy', tool: 'deploy', by: 'mock:alice', createdAt: expect.any(Number) }]
      : [])
    // The answer was the bot's, not conversation; the question is gone.
    expect(passed).toEqual([])
    expect(app.permissions.pending()).toEqual([])
    if (!grant) return
    // Remembered: the same call runs without asking again.
    expect((await deploy('prod')).status).toBe('ok')
    expect(outbox.unread).toEqual([])
  })

  it('another user\'s reply is ignored: it goes on to the rest of the bot and the question stays open', async () => {
    const { outbox, app, passed } = await setup()
    const result = deploy('prod')
    await outbox.next()
    expect(await t!.client('bob').receive('y')).toEqual([])
    expect(passed).toEqual(['bob: y'])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.client('alice').receive('n')).toEqual(['已拒绝 [1] deploy(env=prod)。'])
    expect((await result).status).toBe('denied')
  })

  it('a user whose authority reaches approverAuthority answers anyone\'s request', async () => {
    const { outbox, decisions } = await setup()
    const result = deploy('prod')
    await outbox.next()
    expect(await t!.client('admin').receive('s')).toEqual(['已允许 [1] deploy(env=prod)（本会话内）。'])
    expect((await result).status).toBe('ok')
    expect(decisions[0].source).toMatchObject({ kind: 'answer', by: { id: 'admin', platform: 'mock', authority: 4 }, scope: 'session' })
  })

  it('without a database, the configured default authority decides who may answer', async () => {
    const { outbox, passed } = await setup({ database: false, defaultAuthority: 1 })
    const result = deploy('prod')
    await outbox.next()
    expect(await t!.client('admin').receive('y')).toEqual([])
    expect(passed).toEqual(['admin: y'])
    expect(await t!.client('alice').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('no answer by the timeout: the call is denied, the chat says so and the question closes', async () => {
    const { outbox, app, passed } = await setup({ permissions: { askTimeout: 60_000 } })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const result = deploy('prod')
    await outbox.next()
    vi.advanceTimersByTime(60_000)
    expect(await result).toMatchObject({ status: 'denied', content: 'Permission denied: timed out waiting for approval (no answer within 1 min)' })
    expect(await outbox.next()).toEqual({ channelId: 'room', text: '[1] deploy(env=prod)：已超时，已拒绝。', id: 'm2' })
    expect(app.permissions.pending()).toEqual([])
    expect(await t!.client('alice').receive('y')).toEqual([])
    expect(passed).toEqual(['alice: y'])
  })

  it('two questions in one channel are numbered; a bare answer asks which; the number picks one', async () => {
    const { outbox, app } = await setup()
    const prod = deploy('prod')
    expect((await outbox.next()).text).toBe(QUESTION(1, 'prod'))
    const staging = deploy('staging')
    expect((await outbox.next()).text).toBe(QUESTION(2, 'staging'))
    const alice = t!.client('alice')
    expect(await alice.receive('y')).toEqual(['有 2 个请求等你批准，请加上编号回复，如 y 1：\n[1] deploy：deploy(env=prod)\n[2] deploy：deploy(env=staging)'])
    expect(app.permissions.pending()).toHaveLength(2)
    expect(await alice.receive('y 2')).toEqual(['已允许 [2] deploy(env=staging)（仅此一次）。'])
    expect(await staging).toMatchObject({ status: 'ok', content: 'deployed staging' })
    // One left: a bare answer settles it.
    expect(await alice.receive('n')).toEqual(['已拒绝 [1] deploy(env=prod)。'])
    expect((await prod).status).toBe('denied')
    // Numbers are free again.
    void deploy('dev')
    expect((await outbox.next()).text).toBe(QUESTION(1, 'dev'))
  })

  it('a reply quoting a question answers that one; a number nobody asked gets the list', async () => {
    const { outbox } = await setup()
    const prod = deploy('prod')
    const first = await outbox.next()
    void deploy('staging')
    await outbox.next()
    const alice = t!.client('alice')
    expect(await alice.receive('y 5')).toEqual(['没有等你批准的 5 号请求。等你批准的有：\n[1] deploy：deploy(env=prod)\n[2] deploy：deploy(env=staging)'])
    expect(await alice.receive(`<quote id="${first.id}"/>y`)).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await prod).status).toBe('ok')
  })

  it('only the questions a user may answer count for them: bob\'s own, not alice\'s', async () => {
    const { outbox } = await setup()
    void deploy('prod')
    await outbox.next()
    const bobs = deploy('staging', t!.session('bob'))
    await outbox.next()
    expect(await t!.client('bob').receive('y')).toEqual(['已允许 [2] deploy(env=staging)（仅此一次）。'])
    expect((await bobs).status).toBe('ok')
  })

  it('a message that is not an answer reaches the rest of the bot, and the question stays open', async () => {
    const { outbox, app, passed } = await setup()
    const result = deploy('prod')
    await outbox.next()
    const alice = t!.client('alice')
    expect(await alice.receive('hello')).toEqual([])
    expect(await alice.receive('yes please')).toEqual([])
    expect(await alice.receive('<at id="carol"/> y')).toEqual([])
    expect(passed).toEqual(['alice: hello', 'alice: yes please', 'alice: <at id="carol"/> y'])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await alice.receive('<at id="514"/> y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('asks a call from a private chat in that chat', async () => {
    const { outbox } = await setup()
    const session = { id: 'mock:private:alice', platform: 'mock', channelId: 'private:alice', userId: 'alice', authority: 1 }
    const result = deploy('prod', session)
    expect(await outbox.next()).toEqual({ channelId: 'private:alice', text: QUESTION(1, 'prod'), id: 'm1' })
    // The same words in the group channel are not an answer to it.
    expect(await t!.client('alice', 'room').receive('y')).toEqual([])
    // A private chat: the mock client without a channel.
    expect(await t!.app.mock.client('alice').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('follows the channel\'s language', async () => {
    const { outbox, app } = await setup()
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    const result = deploy('prod')
    expect((await outbox.next()).text).toBe('[1] Tool deploy asks for approval: deploy(env=prod)\n'
      + 'Why: no rule matches; exec tools need approval by default\n'
      + 'To change the arguments first, reply e {"env": "prod"} (only the fields to change, as JSON).\n'
      + 'Reply y to allow once · s for this session · a always · n to deny (also 允许 / 本会话 / 总是 / 拒绝; '
      + 'with several requests open, add the number: y 1). No answer within 5 min denies it.')
    expect(await t!.client('alice').receive('a')).toEqual(['Allowed [1] deploy(env=prod) (always).'])
    expect((await result).status).toBe('ok')
  })

  it('words the rule that asked in the chat\'s language, and a tool\'s own reason as the tool wrote it', async () => {
    const { outbox, app } = await setup({ permissions: { rules: [
      { permission: 'tool:deploy', decision: 'ask', name: '上线' },
      { permission: 'tool:pay', decision: 'ask' },
    ] } })
    await app.mock.initChannel('en-room', '514', { locales: ['en-US'] })
    void deploy('prod')
    expect((await outbox.next()).text).toContain('\n原因：规则“上线”（config.rules[0]）要求批准\n')
    void deploy('test', t!.session('alice', 'en-room'))
    expect((await outbox.next()).text).toContain('\nWhy: rule "上线" from config.rules[0] asks for it\n')
    void app.tools.execute([{ id: 'p1', name: 'pay', arguments: { invoice: 'INV-1' } }], { session: t!.session('alice') })
    expect((await outbox.next()).text).toContain('\n原因：规则 tool:pay（config.rules[1]）要求批准\n')
    app.plugin({
      name: 'asking-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'clean',
          description: 'Delete build leftovers',
          args: Schema.object({}),
          traits: { effect: 'read' },
          async run(_args, call) {
            await call.ask('要删除 3 个文件')
            return 'cleaned'
          },
        }))
      },
    })
    await t!.settle()
    void app.tools.execute([{ id: 'c1', name: 'clean', arguments: {} }], { session: t!.session('alice') })
    expect((await outbox.next()).text).toContain('\n原因：要删除 3 个文件\n')
  })

  it('a tool that confirms every time is asked without s/a, and an `a` counts once', async () => {
    const { outbox, app } = await setup()
    const result = app.tools.execute([{ id: 'p1', name: 'pay', arguments: { invoice: 'INV-1' } }], { session: t!.session('alice') })
    expect((await outbox.next()).text).toBe('[1] 工具 pay 请求批准：pay(invoice=INV-1)\n'
      + '原因：没有匹配的规则，写入类工具默认需要批准\n'
      + '要先改参数再允许，回复 e {"invoice": "INV-1"}（只写要改的字段，JSON）。\n'
      + '回复 y 允许（此工具每次都要确认）· n 拒绝（也可回复 允许 / 拒绝；同时有多个请求时加上编号，如 y 1）。5 分钟内无人回复即拒绝。')
    expect(await t!.client('alice').receive('a')).toEqual(['已允许 [1] pay(invoice=INV-1)（仅此一次）。'])
    expect((await result)[0].status).toBe('ok')
    expect(app.permissions.grants()).toEqual([])
  })

  describe('the request ending elsewhere closes the question; nothing is left', () => {
    it('answered by another asker (the WebUI)', async () => {
      const { outbox, app, passed } = await setup()
      const web = webAsker(app)
      await t!.settle()
      const result = deploy('prod')
      await outbox.next()
      expect(web.shown[0].context.respond({ decision: 'allow', by: 'alice' })).toBe('accepted')
      expect((await result).status).toBe('ok')
      expect(await t!.client('alice').receive('y')).toEqual([])
      expect(passed).toEqual(['alice: y'])
    })

    it('the call is cancelled', async () => {
      const { outbox, app, passed } = await setup()
      const controller = new AbortController()
      const result = deploy('prod', t!.session('alice'), controller.signal)
      await outbox.next()
      controller.abort()
      expect((await result).status).toBe('cancelled')
      expect(app.permissions.pending()).toEqual([])
      expect(await t!.client('alice').receive('y')).toEqual([])
      expect(passed).toEqual(['alice: y'])
    })

    it('the chat approvals are unloaded: replies go to the bot, another asker still answers', async () => {
      const { outbox, app, passed, forks } = await setup()
      const web = webAsker(app)
      await t!.settle()
      const result = deploy('prod')
      await outbox.next()
      forks.approvals!.dispose()
      await t!.settle()
      expect(await t!.client('alice').receive('y')).toEqual([])
      expect(passed).toEqual(['alice: y'])
      expect(app.permissions.pending()).toHaveLength(1)
      web.shown[0].context.respond({ decision: 'deny', by: 'alice' })
      expect((await result).status).toBe('denied')
    })

    it('durable: false, the chat approvals are unloaded with no other asker: the call is denied at once', async () => {
      const { outbox, forks } = await setup({ permissions: { durable: false } })
      const result = deploy('prod')
      await outbox.next()
      forks.approvals!.dispose()
      expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('every asker showing the permission request was unloaded') })
    })

    it('kept (the default), the chat approvals reloaded: the question waits, is posted again, and its answer runs the call', async () => {
      const { outbox, forks, app } = await setup()
      const result = deploy('prod')
      await outbox.next()
      forks.approvals!.dispose()
      expect(app.permissions.pending()).toHaveLength(1)
      app.plugin({ name: 'dogu-chat-approvals', inject: ['tools'], apply: chatApprovals }, {})
      await t!.settle()
      expect((await outbox.next()).text).toBe(QUESTION(1, 'prod'))
      expect(await t!.client('alice').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
      expect(await result).toMatchObject({ status: 'ok', content: 'deployed prod' })
    })

    it('durable: false, the permissions service stops', async () => {
      const { outbox, passed, forks } = await setup({ permissions: { durable: false } })
      const result = deploy('prod')
      await outbox.next()
      forks.permissions.dispose()
      expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('the permissions service stopped') })
      await t!.settle()
      expect(await t!.client('alice').receive('y')).toEqual([])
      expect(passed).toEqual(['alice: y'])
    })

    it('kept (the default), the permissions service stops: the call ends interrupted, its request kept for the next start', async () => {
      const { outbox, passed, forks } = await setup()
      const result = deploy('prod')
      await outbox.next()
      forks.permissions.dispose()
      expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('interrupted while waiting for approval (the request is kept and asked again after a restart)') })
      await t!.settle()
      expect(await t!.client('alice').receive('y')).toEqual([])
      expect(passed).toEqual(['alice: y'])
    })
  })

  it('a call that did not come from a chat channel is left to the other askers', async () => {
    const { app, outbox } = await setup()
    const web = webAsker(app)
    await t!.settle()
    const result = app.tools.execute([{ id: 'w1', name: 'deploy', arguments: { env: 'prod' } }], { session: { id: 'webui:1', userId: 'alice' } })
    await web.seen(1)
    web.shown[0].context.respond({ decision: 'allow', by: 'alice' })
    expect((await result)[0].status).toBe('ok')
    expect(outbox.sent).toEqual([])
  })

  it('a channel no bot can reach: the request is denied at once, saying why', async () => {
    await setup()
    t!.guard.expect(/^\[dogu\] an asker failed on permission request perm_\S+ \(deploy\(env=prod\)\): ChatError: cannot ask in discord:9: no bot of platform "discord" is there$/)
    const session = { id: 'discord:9', platform: 'discord', channelId: '9', userId: 'alice' }
    const [result] = await t!.app.tools.execute([{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }], { session })
    expect(result.status).toBe('denied')
    expect(result.content).toContain('cannot ask in discord:9: no bot of platform "discord" is there')
  })
})

/** A diff of `count` changed lines, as an edit tool's preview would carry it. */
const DIFF = (count: number) => ['--- a/src/app.ts', '+++ b/src/app.ts', `@@ -1,${count} +1,${count} @@`,
  ...Array.from({ length: count }, (_, i) => `-const v${i} = ${i}\n+const v${i} = ${i + 1}`)].join('\n')

/** The setup above, plus `edit` (a write tool with a diff preview) and `sh` (a command preview). */
async function withPreviews(options: ChatAppOptions = {}, diffLines = 20) {
  const app = await setup(options)
  app.app.plugin({
    name: 'preview-tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'edit',
        description: 'Edit a file',
        args: Schema.object({ path: Schema.string().required() }),
        traits: { effect: 'write' },
        preview: () => ({ diff: DIFF(diffLines) }),
        run: () => 'edited',
      }))
      ctx.tools.define(defineTool({
        name: 'sh',
        description: 'Run a command',
        args: Schema.object({ command: Schema.string().required() }),
        traits: { effect: 'exec' },
        preview: (args: { command: string }) => ({ command: args.command, text: 'in /work/app, no network' }),
        run: () => 'ran',
      }))
    },
  })
  await t!.settle()
  return app
}

function call(name: string, args: Record<string, unknown>, session = t!.session('alice')): Promise<ToolResult> {
  return t!.app.tools.execute([{ id: `call-${name}`, name, arguments: args }], { session }).then(([result]) => result)
}

describe('chat approvals: previews', () => {
  it('a question shows a diff to 15 lines, says how much is left, and `d` posts all of it; the question stays open', async () => {
    const { outbox, app } = await withPreviews({}, 20)
    const result = call('edit', { path: 'src/app.ts' })
    const question = (await outbox.next()).text
    expect(question).toBe('[1] 工具 edit 请求批准：edit(path=src/app.ts)\n'
      + '原因：没有匹配的规则，写入类工具默认需要批准\n'
      + '改动：\n--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,20 +1,20 @@\n'
      + Array.from({ length: 6 }, (_, i) => `-const v${i} = ${i}\n+const v${i} = ${i + 1}\n`).join('')
      + '……另有 28 行\n'
      + '预览未显示完整：回复 d 或 详情 查看全部（同时有多个请求时加上编号，如 d 1）。\n'
      + '要先改参数再允许，回复 e {"path": "src/app.ts"}（只写要改的字段，JSON）。\n'
      + '回复 y 允许一次 · s 本会话内允许 · a 总是允许 · n 拒绝（也可回复 允许 / 本会话 / 总是 / 拒绝；同时有多个请求时加上编号，如 y 1）。5 分钟内无人回复即拒绝。')
    const [details] = await t!.client('alice').receive('详情')
    expect(details).toBe(`[1] edit(path=src/app.ts) 的完整预览（1/1）：\n改动：\n${DIFF(20)}`)
    expect(app.permissions.pending()).toHaveLength(1)
    // `d` with the number, from an approver, works too.
    expect(await t!.client('admin').receive('d 1')).toEqual([details])
    expect(await t!.client('alice').receive('y')).toEqual(['已允许 [1] edit(path=src/app.ts)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('a long preview comes in several messages, each under 2000 characters, nothing left out', async () => {
    const { outbox } = await withPreviews({}, 100)
    void call('edit', { path: 'src/app.ts' })
    await outbox.next()
    const messages = await t!.client('alice').receive('d')
    expect(messages.length).toBeGreaterThan(1)
    for (const [index, message] of messages.entries()) {
      expect(message.length).toBeLessThan(2000)
      expect(message.startsWith(`[1] edit(path=src/app.ts) 的完整预览（${index + 1}/${messages.length}）：\n`)).toBe(true)
    }
    const bodies = messages.map((message) => message.slice(message.indexOf('\n') + 1))
    expect(bodies.join('\n')).toBe(`改动：\n${DIFF(100)}`)
  })

  it('a command is shown whole, with the words, and no hint when nothing is left out', async () => {
    const { outbox } = await withPreviews()
    void call('sh', { command: 'npm test -- --run' })
    expect((await outbox.next()).text).toBe('[1] 工具 sh 请求批准：sh(command="npm test -- --run")\n'
      + '原因：没有匹配的规则，执行类工具默认需要批准\n'
      + '说明：in /work/app, no network\n'
      + '命令：npm test -- --run\n'
      + '要先改参数再允许，回复 e {"command": "npm test -- --run"}（只写要改的字段，JSON）。\n'
      + '回复 y 允许一次 · s 本会话内允许 · a 总是允许 · n 拒绝（也可回复 允许 / 本会话 / 总是 / 拒绝；同时有多个请求时加上编号，如 y 1）。5 分钟内无人回复即拒绝。')
  })

  it('a command too long for a question is cut, saying how much is left', async () => {
    const { outbox } = await withPreviews()
    const command = `echo ${'x'.repeat(600)}`
    void call('sh', { command })
    const { text } = await outbox.next()
    expect(text).toContain(`\n命令：${command.slice(0, 400)}…（另有 ${command.length - 400} 字）\n预览未显示完整：`)
    expect((await t!.client('alice').receive('d'))[0]).toContain(`\n命令：\n${command}`)
  })

  it('markup in a preview stays text', async () => {
    const { outbox } = await withPreviews()
    void call('sh', { command: 'echo "<at id=\\"all\\"/>" &amp;' })
    expect((await outbox.next()).text).toContain('\n命令：echo "<at id=\\"all\\"/>" &amp;\n')
  })

  it('in English', async () => {
    const { outbox, app } = await withPreviews({}, 20)
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    void call('edit', { path: 'a' })
    const { text } = await outbox.next()
    expect(text).toContain('\nChanges: \n--- a/src/app.ts\n')
    expect(text).toContain('\n… 28 more lines\nPreview shortened: reply d or 详情 for all of it (with several requests open, add the number: d 1).\nTo change the arguments first, reply e {"path": "a"} (only the fields to change, as JSON).\nReply y')
    expect((await t!.client('alice').receive('details'))[0]).toMatch(/^Whole preview of \[1\] edit\(path=a\) \(1\/1\):\nChanges: \n--- a/)
  })

  it('`d` from someone who may not answer goes on to the bot; without a preview it says so', async () => {
    const { outbox, passed } = await withPreviews()
    void deploy('prod')
    await outbox.next()
    expect(await t!.client('bob').receive('d')).toEqual([])
    expect(passed).toEqual(['bob: d'])
    expect(await t!.client('alice').receive('d')).toEqual(['请求 [1] 没有预览。'])
  })
})

describe('chat approvals: buttons', () => {
  const LABELS = ['允许一次', '本会话', '总是', '拒绝']

  it('only on the platforms configured (by default discord and telegram, not the mock)', async () => {
    const { outbox } = await setup()
    void deploy('prod')
    expect((await outbox.next()).buttons).toBeUndefined()
  })

  it('a question carries the four answers, each an unguessable id of its own; the caller\'s press answers it', async () => {
    const { outbox, app, passed } = await setup({ approvals: { buttons: ['mock'] } })
    const result = deploy('prod')
    const question = await outbox.next()
    // The text is the same as without buttons: a text answer works everywhere.
    expect(question.text).toBe(QUESTION(1, 'prod'))
    expect(question.buttons!.map((button) => button.label)).toEqual(LABELS)
    const ids = question.buttons!.map((button) => button.id)
    for (const id of ids) expect(id).toMatch(/^dogu:[\w-]{22}$/)
    expect(new Set(ids).size).toBe(4)
    expect(await t!.press('alice', ids[1])).toEqual(['已允许 [1] deploy(env=prod)（本会话内）。'])
    expect((await result).status).toBe('ok')
    expect(app.permissions.grants()).toMatchObject([{ scope: 'session', by: 'mock:alice' }])
    expect(passed).toEqual([])
  })

  it('a bystander\'s press is refused and spends nothing: the question stays open and the caller\'s press still works', async () => {
    const { outbox, app } = await setup({ approvals: { buttons: ['mock'] } })
    const result = deploy('prod')
    const { buttons } = await outbox.next()
    expect(await t!.press('bob', buttons![0].id)).toEqual(['你不能回答请求 [1]：只有调用者本人或审批人可以。'])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.press('alice', buttons![0].id)).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('an approver\'s press answers anyone\'s request', async () => {
    const { outbox } = await setup({ approvals: { buttons: ['mock'] } })
    const result = deploy('prod')
    const { buttons } = await outbox.next()
    expect(await t!.press('admin', buttons![3].id)).toEqual(['已拒绝 [1] deploy(env=prod)。'])
    expect((await result).status).toBe('denied')
  })

  it('a replayed id, a forged id and a press after the question closed are refused', async () => {
    const { outbox, app } = await setup({ approvals: { buttons: ['mock'] } })
    const first = deploy('prod')
    const one = (await outbox.next()).buttons!
    const second = deploy('staging')
    const two = (await outbox.next()).buttons!
    const USED = ['这个按钮已失效：请求已结束，或按钮已经用过。']
    // Forged: the prefix and the shape, but never issued. The question stays open.
    expect(await t!.press('alice', `dogu:${'A'.repeat(22)}`)).toEqual(USED)
    expect(app.permissions.pending()).toHaveLength(2)
    // Pressed in another channel than the question's.
    expect(await t!.press('alice', one[0].id, 'elsewhere')).toEqual(USED)
    expect(app.permissions.pending()).toHaveLength(2)
    // A button settles only its own question.
    expect(await t!.press('alice', two[0].id)).toEqual(['已允许 [2] deploy(env=staging)（仅此一次）。'])
    expect((await second).status).toBe('ok')
    expect(app.permissions.pending()).toHaveLength(1)
    // Replayed, and any other button of the closed question.
    expect(await t!.press('alice', two[0].id)).toEqual(USED)
    expect(await t!.press('alice', two[3].id)).toEqual(USED)
    // Closed by a text answer: its buttons are dead too.
    expect(await t!.client('alice').receive('n')).toEqual(['已拒绝 [1] deploy(env=prod)。'])
    expect((await first).status).toBe('denied')
    expect(await t!.press('alice', one[0].id)).toEqual(USED)
    expect(app.permissions.grants()).toEqual([])
  })

  it('a press of another plugin\'s button is left alone', async () => {
    const { outbox, app } = await setup({ approvals: { buttons: ['mock'] } })
    void deploy('prod')
    await outbox.next()
    expect(await t!.press('alice', 'vote-42')).toEqual([])
    expect(app.permissions.pending()).toHaveLength(1)
  })

  it('详情 is there when the preview was cut: it posts the whole preview and leaves the question open', async () => {
    const { outbox, app } = await withPreviews({ approvals: { buttons: ['mock'] } }, 20)
    const result = call('edit', { path: 'src/app.ts' })
    const { buttons } = await outbox.next()
    expect(buttons!.map((button) => button.label)).toEqual([...LABELS, '详情'])
    expect(await t!.press('bob', buttons![4].id)).toEqual(['你不能回答请求 [1]：只有调用者本人或审批人可以。'])
    expect(await t!.press('alice', buttons![4].id)).toEqual([`[1] edit(path=src/app.ts) 的完整预览（1/1）：\n改动：\n${DIFF(20)}`])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.press('alice', buttons![0].id)).toEqual(['已允许 [1] edit(path=src/app.ts)（仅此一次）。'])
    expect((await result).status).toBe('ok')
  })

  it('a tool that confirms every time has only 允许一次 and 拒绝', async () => {
    const { outbox } = await setup({ approvals: { buttons: ['mock'] } })
    void t!.app.tools.execute([{ id: 'p1', name: 'pay', arguments: { invoice: 'INV-1' } }], { session: t!.session('alice') })
    expect((await outbox.next()).buttons!.map((button) => button.label)).toEqual(['允许一次', '拒绝'])
  })

  it('a press after the timeout is refused; the chat said it timed out', async () => {
    const { outbox } = await setup({ approvals: { buttons: ['mock'] }, permissions: { askTimeout: 60_000 } })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const result = deploy('prod')
    const { buttons } = await outbox.next()
    vi.advanceTimersByTime(60_000)
    expect((await result).content).toBe('Permission denied: timed out waiting for approval (no answer within 1 min)')
    expect((await outbox.next()).text).toBe('[1] deploy(env=prod)：已超时，已拒绝。')
    vi.useRealTimers()
    expect(await t!.press('alice', buttons![0].id)).toEqual(['这个按钮已失效：请求已结束，或按钮已经用过。'])
  })

  it('unloading the chat approvals takes the buttons down', async () => {
    const { outbox, forks } = await setup({ approvals: { buttons: ['mock'] }, permissions: { durable: false } })
    const result = deploy('prod')
    const { buttons } = await outbox.next()
    forks.approvals!.dispose()
    expect((await result).status).toBe('denied')
    expect(await t!.press('alice', buttons![0].id)).toEqual([])
  })
})

describe('chat approvals: expiry', () => {
  it('says so in the channel\'s language; an answered question says nothing more', async () => {
    const { outbox, app } = await setup({ permissions: { askTimeout: 60_000 } })
    await app.mock.initChannel('en-room', '514', { locales: ['en-US'] })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const answered = deploy('prod')
    await outbox.next()
    const expiring = deploy('test', t!.session('alice', 'en-room'))
    await outbox.next()
    expect(await t!.client('alice').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await answered).status).toBe('ok')
    vi.advanceTimersByTime(60_000)
    expect((await expiring).status).toBe('denied')
    expect(await outbox.next()).toEqual({ channelId: 'en-room', text: '[1] deploy(env=test): timed out, denied.', id: 'm3' })
    expect(outbox.unread).toEqual([])
  })
})

describe('dogu.pending', () => {
  it('lists the questions in this channel that the sender may answer, with their numbers', async () => {
    const { outbox } = await setup()
    void deploy('prod')
    await outbox.next()
    void deploy('staging', t!.session('bob'))
    await outbox.next()
    void deploy('elsewhere', t!.session('alice', 'other'))
    await outbox.next()
    const HEAD = (count: number, number: number) => `本频道中等你批准的请求（${count} 个），回复 y 编号 允许、n 编号 拒绝，如 y ${number}：`
    expect(await t!.client('alice').receive('dogu.pending')).toEqual([`${HEAD(1, 1)}\n[1] deploy：deploy(env=prod)（5 分钟后超时）`])
    expect(await t!.client('bob').receive('dogu.pending')).toEqual([`${HEAD(1, 2)}\n[2] deploy：deploy(env=staging)（5 分钟后超时）`])
    expect(await t!.client('admin').receive('dogu.pending')).toEqual([`${HEAD(2, 1)}\n[1] deploy：deploy(env=prod)（5 分钟后超时）\n[2] deploy：deploy(env=staging)（5 分钟后超时）`])
    expect(await t!.client('ops').receive('dogu.pending')).toEqual(['本频道中没有等你批准的请求。'])
    // The numbers are the ones that answer.
    expect(await t!.client('admin').receive('y 2')).toEqual(['已允许 [2] deploy(env=staging)（仅此一次）。'])
  })

  it('in English, described in both languages, gone with the chat approvals', async () => {
    const { outbox, app, forks } = await setup()
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    void deploy('prod')
    await outbox.next()
    expect(await t!.client('alice').receive('dogu.pending')).toEqual(['Requests in this channel waiting for you (1); reply y or n with the number, such as y 1:\n[1] deploy: deploy(env=prod) (times out in 5 min)'])
    for (const locale of ['zh-CN', 'en-US']) expect(app.i18n.get('commands.dogu.pending.description')[locale]).toEqual(expect.any(String))
    forks.approvals!.dispose()
    await t!.settle()
    expect(app.$commander.get('dogu.pending')).toBeUndefined()
    expect(app.i18n.get('commands.dogu.pending.description')).toEqual({})
  })
})
