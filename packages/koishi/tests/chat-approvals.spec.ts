import { type AskerContext, type DecisionEvent, defineTool, type ToolResult } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseAnswer } from '../src/answer-parser'
import { ChatApprovalsConfig } from '../src/chat-approvals'
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
    expect(ChatApprovalsConfig({})).toEqual({ enabled: true })
    expect(descriptions(ChatApprovalsConfig)).toEqual(inBothLanguages(['$', '$.enabled']))
  })

  it('asks in the channel the call came from: the tool, the call and why', async () => {
    const { outbox, app } = await setup()
    void deploy('prod')
    const question = await outbox.next()
    expect(question).toEqual({ channelId: 'room', text: QUESTION(1, 'prod'), id: 'm1' })
    expect(app.permissions.pending().map((request) => request.summary)).toEqual(['deploy(env=prod)'])
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

  it('no answer by the timeout: the call is denied and the question closes', async () => {
    const { outbox, app, passed } = await setup({ permissions: { askTimeout: 60_000 } })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const result = deploy('prod')
    await outbox.next()
    vi.advanceTimersByTime(60_000)
    expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('nobody answered the permission request within 1 min') })
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

    it('the chat approvals are unloaded with no other asker: the call is denied at once', async () => {
      const { outbox, forks } = await setup()
      const result = deploy('prod')
      await outbox.next()
      forks.approvals!.dispose()
      expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('every asker showing the permission request was unloaded') })
    })

    it('the permissions service stops', async () => {
      const { outbox, passed, forks } = await setup()
      const result = deploy('prod')
      await outbox.next()
      forks.permissions.dispose()
      expect(await result).toMatchObject({ status: 'denied', content: expect.stringContaining('the permissions service stopped') })
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
