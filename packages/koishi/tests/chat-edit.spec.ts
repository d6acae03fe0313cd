import { type DecisionEvent, defineTool, type ToolResult } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { parseEdit } from '../src/answer-parser'
import { type ChatApp, chatApp, type ChatAppOptions } from './chat-harness'

let t: ChatApp | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

/** An app with `purge` (a write tool: asked by default) whose permission targets its table. */
async function setup(options: ChatAppOptions = {}) {
  t = await chatApp(options)
  const runs: unknown[] = []
  t.app.plugin({
    name: 'purge-tools',
    inject: ['tools'],
    apply(ctx) {
      const args = Schema.object({
        table: Schema.string().required(),
        limit: Schema.natural().max(100).default(10),
        token: Schema.string().role('secret').required(),
      })
      ctx.tools.define(defineTool({
        name: 'purge',
        description: 'Delete old rows of a table',
        args,
        traits: { effect: 'write' },
        permission: (args) => ({ name: 'db.purge', target: args.table }),
        run: (args) => {
          runs.push(args)
          return `purged ${args.limit} rows of ${args.table}`
        },
      }))
    },
  })
  const decisions: DecisionEvent[] = []
  t.app.on('permissions/decision', (event) => { if (event.phase === 'approve') decisions.push(event) })
  await t.settle()
  return { ...t, runs, decisions }
}

function purge(args: object = { table: 'logs', limit: 50, token: 'tok-123' }, user = 'alice'): Promise<ToolResult> {
  return t!.app.tools.execute([{ id: 'c1', name: 'purge', arguments: args as Record<string, unknown> }], { session: t!.session(user) }).then(([result]) => result)
}

describe('parseEdit', () => {
  it.each([
    ['e {"limit": 5}', { scope: 'once', changes: { limit: 5 } }],
    ['改 {"limit": 5}', { scope: 'once', changes: { limit: 5 } }],
    ['E 2 {"limit": 5}', { number: 2, scope: 'once', changes: { limit: 5 } }],
    ['edit #3 a {"path": "docs"}', { number: 3, scope: 'always', changes: { path: 'docs' } }],
    ['修改 2 总是 {"path": "docs"}', { number: 2, scope: 'always', changes: { path: 'docs' } }],
    ['e s {"x":\n 1}', { scope: 'session', changes: { x: 1 } }],
    ['e{"x":1}', { scope: 'once', changes: { x: 1 } }],
  ])('reads %j', (text, expected) => {
    expect(parseEdit(text)).toEqual(expected)
  })

  it.each([
    ['e {limit: 5}', { problem: 'json', at: { line: 1, column: 2, before: '{', after: 'limit: 5}', end: false } }],
    // Cut off: the JSON ends before it is complete.
    ['e {"a":', { problem: 'json', at: { line: 1, column: 6, before: '{"a":', after: '', end: true } }],
    ['e 2 {"a": 1', { problem: 'json', number: 2, at: { line: 1, column: 8, before: '{"a": 1', after: '', end: true } }],
    ['e {"a": 1,\n  "b" 2}', { problem: 'json', at: { line: 2, column: 7, before: '"a": 1, "b" ', after: '2}', end: false } }],
    ['e [1, 2] {', { problem: 'json', at: { line: 1, column: 8, before: '[1, 2] ', after: '{', end: false } }],
    ['e ["x"]', { problem: 'object', got: 'array' }],
    ['e', { problem: 'shape' }],
    ['改', { problem: 'shape' }],
    ['e 2', { problem: 'shape', number: 2 }],
    ['e 2 a', { problem: 'shape', number: 2 }],
    ['e "x" {"a": 1}', { problem: 'scope', word: '"x"' }],
    ['e n {"a": 1}', { problem: 'scope', word: 'n' }],
    ['e 0 {"a": 1}', { problem: 'shape' }],
    ['e 2 a b {"a": 1}', { problem: 'shape' }],
    ['e {"a": "x…"} past the length limit'.replace('x…', 'x'.repeat(17_000)), { problem: 'too-long', max: 16_384 }],
  ])('names the problem of edit %# (%s)', (text, problem) => {
    expect(parseEdit(text)).toEqual(problem)
  })

  it('leaves conversation alone: no edit word, or words after it that are no number, scope or JSON', () => {
    expect(parseEdit('e la la')).toBeUndefined()
    expect(parseEdit('e la')).toBeUndefined()
    expect(parseEdit('e 3 "x"')).toBeUndefined()
    expect(parseEdit('easy {"a": 1}')).toBeUndefined()
    expect(parseEdit('y')).toBeUndefined()
  })
})

describe('chat approvals: a repaired call', () => {
  it('shows the repaired arguments, marked as repaired; approved, the call runs with them', async () => {
    const { outbox, runs } = await setup()
    const sloppy = t!.app.tools.execute([{ id: 'c1', name: 'purge', arguments: `{table: 'logs', limit: 50, token: 'tok-123',}` }], { session: t!.session('alice') }).then(([result]) => result)
    const question = (await outbox.next()).text
    expect(question).toContain('purge(table=logs, limit=50, token="••••")')
    expect(question).toContain('\n（模型发来的参数不是合法 JSON，Dogu 已修复：单引号改为双引号、给键名加上引号、去掉了多余的逗号。上面显示的是修复后的参数。）\n')
    expect(question).not.toContain('tok-123')
    expect(await t!.client('alice').receive('y')).toEqual([expect.stringContaining('已允许')])
    const done = await sloppy
    expect(done).toMatchObject({ status: 'ok', repaired: { steps: ['quotes', 'unquoted-keys', 'trailing-comma'] } })
    expect(runs).toEqual([{ table: 'logs', limit: 50, token: 'tok-123' }])
  })
})

describe('chat approvals: editing before approving', () => {
  it('`e {json}` changes the fields named, approves the edited call, and tells the model and the chat', async () => {
    const { outbox, runs, decisions } = await setup()
    const result = purge()
    const question = (await outbox.next()).text
    // The example uses the call's first field; the secret is never shown.
    expect(question).toContain('\n要先改参数再允许，回复 e {"table": "logs"}（只写要改的字段，JSON）。\n')
    expect(question).not.toContain('tok-123')
    expect(await t!.client('alice').receive('e {"limit": 5}')).toEqual(['已按修改后的参数允许 [1] purge(table=logs, limit=50, token="••••") — db.purge "logs"（仅此一次）。改动：\n$.limit: 50 → 5\n实际运行的参数：{"table":"logs","limit":5,"token":"••••"}'])
    const done = await result
    expect(done.status).toBe('ok')
    expect(done.content).toBe('A person changed your arguments before approving this call; it ran with these changes:\n$.limit: 50 → 5\n\npurged 5 rows of logs')
    // The secret kept its value; the decision says who edited, and how.
    expect(runs).toEqual([{ table: 'logs', limit: 5, token: 'tok-123' }])
    expect(decisions.at(-1)!.source).toMatchObject({ kind: 'answer', edited: true, via: 'text', by: { id: 'alice', platform: 'mock' } })
  })

  it('an edit that fails validation or is not JSON is explained, and the question stays open', async () => {
    const { runs, outbox, app } = await setup()
    const result = purge()
    await outbox.next()
    const alice = t!.client('alice')
    expect(await alice.receive('e {"limit": 500}')).toEqual(['修改没有生效，请求 [1] 仍在等待：参数无效：\n- $.limit：应为不大于 100 的数字，实际是 500'])
    expect(await alice.receive('e {limit: 5}')).toEqual([expect.stringMatching(/^修改不是有效的 JSON：/)])
    expect(await alice.receive('e x {"limit": 5}')).toEqual(['“x”不是有效的范围：可写 s（本会话）或 a（总是），不写即仅此一次。'])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(runs).toEqual([])
    expect(await alice.receive('改 {"limit": 1}')).toEqual([expect.stringContaining('$.limit: 50 → 1')])
    expect((await result).status).toBe('ok')
  })

  it('an edited call is authorized again: one the rules deny is denied, and said so', async () => {
    const { runs, outbox } = await setup({ permissions: { rules: [{ permission: 'db.purge', target: 'users', decision: 'deny', name: 'never purge users' }] } })
    const result = purge()
    await outbox.next()
    const [reply] = await t!.client('alice').receive('e {"table": "users"}')
    // Why the edited call is denied, in the chat's language (the model reads it in English).
    expect(reply).toBe('[1] purge(table=logs, limit=50, token="••••") — db.purge "logs"：修改后的调用被拒绝：来自 config.rules[0] 的规则 "never purge users"拒绝了它')
    const done = await result
    expect(done.status).toBe('denied')
    expect(runs).toEqual([])
  })

  it('`e a {json}` grants the edited target, never the original one', async () => {
    const { outbox, app } = await setup()
    const first = purge()
    await outbox.next()
    expect(await t!.client('alice').receive('e a {"table": "tmp"}')).toEqual([expect.stringContaining('（总是）。改动：\n$.table: "logs" → "tmp"')])
    expect((await first).status).toBe('ok')
    expect(app.permissions.engine.grants().map((grant) => [grant.permission, grant.target, grant.scope])).toEqual([['db.purge', 'tmp', 'always']])
    expect((await purge({ table: 'tmp', token: 'x' })).status).toBe('ok')
    // The original table is still asked about.
    const again = purge()
    expect((await outbox.next()).text).toContain('purge(table=logs')
    expect(await t!.client('alice').receive('n')).toEqual([expect.stringContaining('已拒绝')])
    expect((await again).status).toBe('denied')
  })

  it('only someone who may answer can edit: another user\'s edit goes on to the rest of the bot', async () => {
    const { outbox, passed, app } = await setup()
    void purge()
    await outbox.next()
    expect(await t!.client('bob').receive('e {"limit": 1}')).toEqual([])
    expect(passed).toContain('bob: e {"limit": 1}')
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.client('alice').receive('n')).toEqual([expect.stringContaining('已拒绝')])
  })

  it('refuses a misspelled field with a "did you mean" (the original call would run otherwise), in both languages', async () => {
    const { outbox, app, runs } = await setup()
    const result = purge()
    await outbox.next()
    // `Limit` passes the schema (schemastery keeps unknown keys): approved, `limit: 50` would run.
    expect(await t!.client('alice').receive('e {"Limit": 5}')).toEqual([
      '修改没有生效，请求 [1] 仍在等待：修改后的参数在 $.Limit 处设置了 `Limit`，这个工具的参数里没有这个字段——是不是想写 `limit`？那里的字段有：`table`、`limit`、`token`。',
    ])
    expect(app.permissions.pending()).toHaveLength(1)
    expect(await t!.client('alice').receive('e {"limit": 5}')).toEqual([expect.stringContaining('实际运行的参数：{"table":"logs","limit":5,"token":"••••"}')])
    expect((await result).status).toBe('ok')
    expect(runs).toEqual([{ table: 'logs', limit: 5, token: 'tok-123' }])

    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    const second = purge()
    await outbox.next()
    expect(await t!.client('alice').receive('e {"tabel": "users"}')).toEqual([expect.stringMatching(/^The edit did not apply; request \[\d+\] is still waiting: the edited arguments set `tabel` at \$\.tabel, .*did you mean `table`\?/)])
    expect(await t!.client('alice').receive('n')).toEqual([expect.stringContaining('Denied')])
    expect((await second).status).toBe('denied')
    expect(runs).toHaveLength(1)
  })

  it('in English', async () => {
    const { outbox, app } = await setup()
    await app.mock.initChannel('room', '514', { locales: ['en-US'] })
    const result = purge()
    expect((await outbox.next()).text).toContain('\nTo change the arguments first, reply e {"table": "logs"} (only the fields to change, as JSON).\n')
    expect(await t!.client('alice').receive('e {"limit": 7}')).toEqual(['Allowed [1] purge(table=logs, limit=50, token="••••") — db.purge "logs" with edited arguments (once). Changes:\n$.limit: 50 → 7\nIt runs with: {"table":"logs","limit":7,"token":"••••"}'])
    expect((await result).status).toBe('ok')
  })
})
