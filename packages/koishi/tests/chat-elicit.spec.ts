import { type AskAnswer, defineTool, type Elicitation, type FormField, parseFormReply, type ToolResult } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { parseCancel } from '../src/answer-parser'
import { type ChatApp, chatApp, type ChatAppOptions } from './chat-harness'

let t: ChatApp | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

/**
 * An app with `signup` (a read tool: never asked about), which asks its caller for an
 * account's details with `call.elicit` and answers with what it got.
 */
async function setup(options: ChatAppOptions = {}) {
  t = await chatApp(options)
  const answers: Elicitation[] = []
  t.app.plugin({
    name: 'signup-tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'signup',
        description: 'Create an account',
        args: Schema.object({}),
        traits: { effect: 'read' },
        async run(_args, call) {
          const answer = await call.elicit(Schema.object({
            username: Schema.string().required().description('Account name'),
            age: Schema.natural().max(150),
            newsletter: Schema.boolean().default(false),
            plan: Schema.union(['free', 'pro']).default('free'),
          }), 'Which account should I create?')
          answers.push(answer)
          return answer.action === 'accept' ? `created ${JSON.stringify(answer.value)}` : answer.action
        },
      }))
    },
  })
  await t.settle()
  return { ...t, answers }
}

function signup(user = 'alice'): Promise<ToolResult> {
  return t!.app.tools.execute([{ id: 'c1', name: 'signup', arguments: {} }], { session: t!.session(user) }).then(([result]) => result)
}

const FIELDS: FormField[] = [
  { key: 'username', type: 'string', required: true },
  { key: 'age', type: 'integer', required: false },
  { key: 'newsletter', type: 'boolean', required: false },
  { key: 'tags', type: 'array', required: false, choices: [{ value: 'a' }, { value: 'b' }] },
]

describe('parseFormReply', () => {
  it.each([
    ['username=bob', { values: { username: 'bob' } }],
    ['username=bob age=30 newsletter=是', { values: { username: 'bob', age: 30, newsletter: true } }],
    ['username＝bob，age=３０', { values: { username: 'bob', age: 30 } }],
    ['username="Ada Lovelace"; newsletter=no', { values: { username: 'Ada Lovelace', newsletter: false } }],
    ['username=bob,age=3', { values: { username: 'bob', age: 3 } }],
    ['tags=a,b username=x', { values: { tags: ['a', 'b'], username: 'x' } }],
    ['age=abc', { values: { age: 'abc' } }],
    ['2 username=bob', { number: 2, values: { username: 'bob' } }],
    ['#3 {"username": "bob", "age": 4}', { number: 3, values: { username: 'bob', age: 4 } }],
    ['{"username": "x=y"}', { values: { username: 'x=y' } }],
    ['username=bob\nage=7', { values: { username: 'bob', age: 7 } }],
  ])('reads %j', (text, expected) => {
    expect(parseFormReply(text, FIELDS)).toEqual(expected)
  })

  it.each([
    ['nickname=bob', 'unknown-field'],
    ['{"username": 1', 'json'],
    ['{"nickname": "bob"}', 'unknown-field'],
    ['username="unclosed', 'json'],
  ])('names the problem of %j', (text, problem) => {
    expect(parseFormReply(text, FIELDS)).toMatchObject({ problem })
  })

  it('leaves conversation alone: no `=`, or words between the pairs', () => {
    expect(parseFormReply('hello there', FIELDS)).toBeUndefined()
    expect(parseFormReply('I think x=1 is right', FIELDS)).toBeUndefined()
    expect(parseFormReply('username=bob is my name', FIELDS)).toBeUndefined()
    expect(parseFormReply('42', FIELDS)).toBeUndefined()
  })

  it('reads the cancel words in both languages', () => {
    expect(parseCancel('取消')).toEqual({})
    expect(parseCancel('Cancel 2')).toEqual({ number: 2 })
    expect(parseCancel('c。')).toEqual({})
    expect(parseCancel('cancel it')).toBeUndefined()
  })
})

describe('chat: a tool\'s form (call.elicit)', () => {
  it('is asked as a form, not an approval: the tool, its message and fields, in Chinese first', async () => {
    const { outbox } = await setup()
    void signup()
    const { text } = await outbox.next()
    expect(text).toBe([
      '[1] 工具 signup 请你填写：Which account should I create?',
      '· username（文本，必填）：Account name',
      '· age（整数）',
      '· newsletter（是 / 否，默认 false）',
      '· plan（文本，可选 free / pro，默认 free）',
      '回复 字段=值 填写，如 username=… age=1（也可回复 JSON，如 {"username": "…", "age": 1}）· n 或 拒绝 表示不填 · c 或 取消 不作答（同时有多个请求时在前面加上编号，如 1 username=… age=1）。5 分钟内无人回复即取消。',
    ].join('\n'))
    expect(text).not.toMatch(/批准|允许/)
    expect(await t!.client('alice').receive('取消')).toEqual(['已取消 [1] signup 的表单。'])
  })

  it('`key=value` fills it: the tool gets the values, typed, with the defaults', async () => {
    const { outbox, answers } = await setup()
    const result = signup()
    await outbox.next()
    expect(await t!.client('alice').receive('username=bob age=30 newsletter=是')).toEqual(['已提交 [1] signup 的表单。'])
    const done = await result
    expect(done).toMatchObject({ status: 'ok', content: 'created {"username":"bob","age":30,"newsletter":true,"plan":"free"}' })
    expect(answers).toEqual([{ action: 'accept', value: { username: 'bob', age: 30, newsletter: true, plan: 'free' }, by: expect.objectContaining({ id: 'alice', platform: 'mock' }) }])
  })

  it('a JSON reply fills it too', async () => {
    const { outbox, answers } = await setup()
    const result = signup()
    await outbox.next()
    expect(await t!.client('alice').receive('{"username": "Ada Lovelace", "plan": "pro"}')).toEqual(['已提交 [1] signup 的表单。'])
    expect((await result).status).toBe('ok')
    expect(answers[0]).toMatchObject({ action: 'accept', value: { username: 'Ada Lovelace', plan: 'pro', newsletter: false } })
  })

  it('a bad value is explained and the form keeps waiting; then a good one is taken', async () => {
    const { outbox, answers, app, passed } = await setup()
    const result = signup()
    await outbox.next()
    const alice = t!.client('alice')
    // The form's own problem, in the channel's language.
    expect(await alice.receive('username=bob age=500')).toEqual(['表单没有提交，[1] 仍在等待：参数无效：\n- $.age：应为不大于 150 的数字，实际是 500'])
    expect(await alice.receive('plan=gold username=bob')).toEqual([expect.stringMatching(/^表单没有提交，\[1\] 仍在等待：.*\$\.plan/s)])
    expect(await alice.receive('nickname=bob')).toEqual(['表单 [1] 没有字段 nickname，它的字段有：username, age, newsletter, plan。'])
    // `y` sends the defaults: here the required name is missing.
    expect(await alice.receive('y')).toEqual([expect.stringMatching(/^表单没有提交，\[1\] 仍在等待：.*\$\.username/s)])
    // Conversation is not an answer.
    expect(await alice.receive('let me think')).toEqual([])
    expect(passed).toContain('alice: let me think')
    expect(app.permissions.pending()).toHaveLength(1)
    expect(answers).toEqual([])
    expect(await alice.receive('username=bob')).toEqual(['已提交 [1] signup 的表单。'])
    expect((await result).status).toBe('ok')
    expect(answers[0]).toMatchObject({ action: 'accept', value: { username: 'bob' } })
  })

  it('`n` declines it and `取消` dismisses it: the tool tells them apart', async () => {
    const { outbox, answers } = await setup()
    let result = signup()
    await outbox.next()
    expect(await t!.client('alice').receive('拒绝')).toEqual(['已拒绝填写 [1] signup 的表单。'])
    expect((await result).content).toBe('decline')
    result = signup()
    await outbox.next()
    expect(await t!.client('alice').receive('cancel')).toEqual(['已取消 [1] signup 的表单。'])
    expect((await result).content).toBe('cancel')
    expect(answers).toEqual([
      { action: 'decline', reason: expect.any(String), by: expect.objectContaining({ id: 'alice' }) },
      { action: 'cancel', reason: expect.any(String) },
    ])
  })

  it('only someone who may answer fills it: another user\'s reply goes on to the rest of the bot', async () => {
    const { outbox, passed, app } = await setup()
    void signup()
    await outbox.next()
    expect(await t!.client('bob').receive('username=mallory')).toEqual([])
    expect(await t!.client('bob').receive('取消')).toEqual([])
    expect(passed).toEqual(expect.arrayContaining(['bob: username=mallory', 'bob: 取消']))
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.client('alice').receive('c')).toEqual(['已取消 [1] signup 的表单。'])
  })

  it('without a form open, `取消` and `a=b` are conversation', async () => {
    const { passed } = await setup()
    expect(await t!.client('alice').receive('取消')).toEqual([])
    expect(await t!.client('alice').receive('a=b')).toEqual([])
    expect(passed).toEqual(['alice: 取消', 'alice: a=b'])
  })

  it('beside an approval, a fill goes to the form and `y` to the approval', async () => {
    const { outbox, app } = await setup()
    t!.app.plugin({
      name: 'purge-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({ name: 'purge', description: 'Purge', args: Schema.object({}), traits: { effect: 'write' }, run: () => 'purged' }))
      },
    })
    await t!.settle()
    const form = signup()
    await outbox.next()
    const purge = app.tools.execute([{ id: 'c2', name: 'purge', arguments: {} }], { session: t!.session('alice') }).then(([result]) => result)
    expect((await outbox.next()).text).toContain('[2] 工具 purge 请求批准')
    const alice = t!.client('alice')
    expect(await alice.receive('username=bob')).toEqual(['已提交 [1] signup 的表单。'])
    expect(await alice.receive('y')).toEqual([expect.stringContaining('已允许 [2]')])
    expect((await form).status).toBe('ok')
    expect((await purge).status).toBe('ok')
  })

  it('with two forms open, a fill without a number asks which; with one, it fills that form', async () => {
    const { outbox, answers } = await setup()
    const first = signup()
    await outbox.next()
    const second = signup()
    await outbox.next()
    const alice = t!.client('alice')
    expect(await alice.receive('username=bob')).toEqual(['有 2 个表单等你填写，请在回复前加上编号，如 1 字段=值：\n[1] signup：Which account should I create?\n[2] signup：Which account should I create?'])
    expect(await alice.receive('3 username=bob')).toEqual(['没有等你填写的 3 号表单。等你填写的有：\n[1] signup：Which account should I create?\n[2] signup：Which account should I create?'])
    expect(await alice.receive('2 username=bob')).toEqual(['已提交 [2] signup 的表单。'])
    expect(await alice.receive('取消 1')).toEqual(['已取消 [1] signup 的表单。'])
    expect((await second).status).toBe('ok')
    expect((await first).content).toBe('cancel')
    expect(answers.map((answer) => answer.action)).toEqual(['accept', 'cancel'])
  })

  it('buttons decline and dismiss it, worded as a form\'s', async () => {
    const { outbox, answers } = await setup({ approvals: { buttons: ['mock'] } })
    const result = signup()
    const question = await outbox.next()
    expect(question.buttons!.map((button) => button.label)).toEqual(['拒绝填写', '取消'])
    expect(await t!.press('alice', question.buttons![1].id)).toEqual(['已取消 [1] signup 的表单。'])
    expect((await result).content).toBe('cancel')
    expect(answers[0].action).toBe('cancel')
  })

  it('a form nobody fills in time is cancelled, and the chat says so', async () => {
    const { outbox, answers } = await setup({ permissions: { askTimeout: 200 } })
    const result = signup()
    await outbox.next()
    expect((await result).content).toBe('cancel')
    expect((await outbox.next()).text).toBe('[1] signup 的表单：已超时，已取消。')
    expect(answers[0]).toEqual({ action: 'cancel', reason: expect.any(String) })
  })

  it('answered elsewhere first (another asker: a console), the chat\'s copy says it is closed', async () => {
    const { outbox, app, answers } = await setup()
    let elsewhere: ((answer: AskAnswer) => unknown) | undefined
    app.permissions.asker((_request, { respond }) => { elsewhere = respond })
    const result = signup()
    await outbox.next()
    expect(elsewhere!({ decision: 'allow', value: { username: 'carol' }, by: { id: 'console', authority: 4 }, via: 'console' })).toBe('accepted')
    expect((await outbox.next()).text).toBe('[1] signup 的表单已关闭：已在别处回答，或调用已结束。')
    expect((await result).status).toBe('ok')
    expect(answers[0]).toMatchObject({ action: 'accept', value: { username: 'carol' } })
    expect(await t!.client('alice').receive('username=bob')).toEqual([])
  })

  it('`y` sends a form whose fields all have defaults, as offered; `dogu.pending` lists it as a form', async () => {
    const { outbox } = await setup()
    t!.app.plugin({
      name: 'prefs-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'prefs',
          description: 'Ask for preferences',
          args: Schema.object({}),
          traits: { effect: 'read' },
          async run(_args, call) {
            const answer = await call.elicit(Schema.object({ theme: Schema.union(['light', 'dark']).default('light') }), 'Pick a theme')
            return JSON.stringify(answer.action === 'accept' ? answer.value : answer.action)
          },
        }))
      },
    })
    await t!.settle()
    const result = t!.app.tools.execute([{ id: 'c1', name: 'prefs', arguments: {} }], { session: t!.session('alice') }).then(([r]) => r)
    expect((await outbox.next()).text).toContain('（也可回复 JSON，如 {"theme": "light"}）· y 按默认值提交 · n 或 拒绝 表示不填')
    const alice = t!.client('alice')
    expect(await alice.receive('dogu.pending')).toEqual(['本频道中等你批准的请求（1 个），回复 y 编号 允许、n 编号 拒绝，如 y 1：\n[1] prefs 的表单：Pick a theme（回复 字段=值 填写；5 分钟后取消）'])
    expect(await alice.receive('y')).toEqual(['已提交 [1] prefs 的表单。'])
    expect((await result).content).toBe('{"theme":"light"}')
  })

  it('a form given as MCP\'s requestedSchema (an imported server\'s): formats, titled choices and defaults shown, values typed', async () => {
    const { outbox } = await setup()
    t!.app.plugin({
      name: 'mcp-form-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'register',
          description: 'Register',
          args: Schema.object({}),
          traits: { effect: 'read' },
          async run(_args, call) {
            const answer = await call.elicit({
              type: 'object',
              properties: {
                username: { type: 'string', description: 'Your name' },
                email: { type: 'string', format: 'email' },
                color: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'r' },
                seats: { type: 'integer', minimum: 1, default: 1 },
              },
              required: ['username', 'email'],
            }, 'Please provide your information')
            return JSON.stringify(answer.action === 'accept' ? answer.value : answer.action)
          },
        }))
      },
    })
    await t!.settle()
    const result = t!.app.tools.execute([{ id: 'c1', name: 'register', arguments: {} }], { session: t!.session('alice') }).then(([r]) => r)
    expect((await outbox.next()).text).toContain([
      '[1] 工具 register 请你填写：Please provide your information',
      '· username（文本，必填）：Your name',
      '· email（文本，必填，格式 email）',
      '· color（文本，可选 r（Red） / g（Green），默认 r）',
      '· seats（整数，默认 1）',
      '回复 字段=值 填写，如 username=… email=name@example.com（',
    ].join('\n'))
    expect(await t!.client('alice').receive('username="Ada L" email=ada@example.com seats=3 color=g')).toEqual(['已提交 [1] register 的表单。'])
    expect(JSON.parse((await result).content)).toEqual({ username: 'Ada L', email: 'ada@example.com', color: 'g', seats: 3 })
  })

  it('in English', async () => {
    const { outbox, app } = await setup()
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    const result = signup()
    const { text } = await outbox.next()
    expect(text).toContain('[1] Tool signup asks you to fill in: Which account should I create?\n· username (text, required): Account name\n')
    expect(text).toContain('Reply field=value to fill it in, such as username=… age=1')
    expect(text).not.toMatch(/approv|allow/i)
    const alice = t!.client('alice')
    expect(await alice.receive('age=x username=bob')).toEqual([expect.stringMatching(/^The form was not sent; \[1\] is still waiting: .*\$\.age/s)])
    expect(await alice.receive('username=bob')).toEqual(['Sent the form of [1] signup.'])
    expect((await result).status).toBe('ok')
  })
})
