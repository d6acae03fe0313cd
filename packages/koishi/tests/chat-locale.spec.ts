// Every reply a person reads in chat, in the channel's locale: the results of dogu.run
// (denial, expiry, invalid arguments, invalid JSON, unknown tool, quota, an edited call),
// the refusals of an edit, a question's folded arguments, background task notices and the
// notice of a request closed at a restart. In zh-CN no English word is left outside code
// identifiers, tool names and argument values; the same replies in en-US read in English.
// What the model reads (`content`) is the English of the same result, unchanged.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type ClosedRequest, defineTool, type PermissionRule } from '@dogu/core'
import { App, type Context, Schema } from 'koishi'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { englishWords } from '../../../test-support/english-words'
import { guardLogs } from '../../../test-support/log-guard'
import { within } from '../../../test-support/within'
import * as Dogu from '../src'
import { closedRequestsOf } from '../src/closed-requests'
import { Outbox } from './chat-harness'
import { koishiApp, settle } from './koishi-app'
import { MockAdapter, noteTools, tempDir, until } from './owner-app'

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  vi.useRealTimers()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** 10 minutes into an hour-long window (windows start at multiples of their length since the epoch). */
const TEN_PAST = 500_000 * 3_600_000 + 600_000

/** The names a reply may show as they are: the tools, the quota, what the tools say. */
const NAMES = ['profile', 'age', 'deploy', 'echo', 'ech', 'build', 'echo-hourly', 'no-test', 'staging', 'prod', 'test', 'dev', 'enb', 'env', 'note']

type Locale = 'zh-CN' | 'en-US'

/**
 * The Dogu plugin with chat approvals and notices on, in a channel of `locale`: `deploy`
 * (exec: asked; `env` one of staging, prod, test, the last denied by a rule; a `note`), `echo` (read, one call an hour) and
 * `build` (read, outlives its 1 ms timeout, ends when the test says so). alice may run
 * commands (authority 3) and answers her own calls' questions.
 */
async function setup(locale: Locale) {
  const t = await koishiApp({
    database: true,
    dogu: {
      approvals: { enabled: true },
      notices: { enabled: true },
      // A deploy to `test` is never allowed, edited or not.
      permissions: { askTimeout: 20_000, rules: [{ permission: 'deploy:run', target: 'test', decision: 'deny', name: 'no-test' }] },
      tools: { quotas: [{ tools: 'echo', per: 'user', max: 1, window: '1h', name: 'echo-hourly' }] },
    },
  })
  const finish = new Map<string, (outcome: { output?: string; error?: string }) => void>()
  t.app.plugin({
    name: 'locale-tools',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy',
        args: Schema.object({ env: Schema.union(['staging', 'prod', 'test']).required(), note: Schema.string() }),
        traits: { effect: 'exec' },
        permission: (args: { env: string }) => ({ name: 'deploy:run', target: args.env }),
        // Its own words, shown as written in every language.
        run: (args: { env: string }) => `已部署到 ${args.env}`,
      }))
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'read' },
        run: (args: { text: string }) => args.text,
      }))
      ctx.tools.define(defineTool({
        name: 'profile',
        description: 'Ask for an age',
        args: Schema.object({}),
        traits: { effect: 'read' },
        run: async (_args, call) => {
          const answer = await call.elicit(Schema.object({ age: Schema.natural().max(150).required() }), '年龄？')
          return answer.action === 'accept' ? `年龄 ${(answer.value as { age: number }).age}` : '没有回答'
        },
      }))
      ctx.tools.define(defineTool({
        name: 'build',
        description: 'Build (slow)',
        args: Schema.object({ target: Schema.string().required() }),
        traits: { effect: 'read', timeout: 1 },
        run: async (args: { target: string }) => {
          const outcome = await new Promise<{ output?: string; error?: string }>((resolve) => finish.set(args.target, resolve))
          if (outcome.error) throw new Error(outcome.error)
          return outcome.output
        },
      }))
    },
  })
  await settle(t.app)
  await t.app.mock.initUser('alice', 3)
  await t.app.mock.initChannel('room', '514', { locales: [locale] })
  const outbox = new Outbox(t.app.bots[0])
  /** alice's message in the room: the bot's replies to it. */
  const send = (text: string) => t.app.mock.client('alice', 'room').receive(text)
  /** alice's `dogu.run` of a call that is asked: its question, and the run's reply to come. */
  const asked = async (command: string) => {
    const run = send(command)
    return { question: (await outbox.next()).text, run }
  }
  /** Waits for the background task `id` to be running, then ends it with `outcome`. */
  const end = async (target: string, id: string, outcome: { output?: string; error?: string }) => {
    await vi.waitFor(() => expect(finish.has(target)).toBe(true))
    finish.get(target)!(outcome)
    await t.app.background.wait(id, { timeout: 5_000 })
  }
  return { ...t, outbox, send, asked, end }
}

/** Every kind of reply, as the chat showed it, by kind. */
async function replies(locale: Locale): Promise<Record<string, string>> {
  const t = await setup(locale)
  const shown: Record<string, string> = {}

  // A person said no.
  const declined = await t.asked('dogu.run deploy {"env":"prod"}')
  shown.question = declined.question
  ;[shown.declined] = await t.send('n')
  ;[shown.denial] = await declined.run

  // Nobody answered within the timeout.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const unanswered = await t.asked('dogu.run deploy {"env":"staging"}')
  vi.advanceTimersByTime(20_000)
  vi.useRealTimers()
  ;[shown.expiry] = await unanswered.run
  shown.expired = (await t.outbox.next()).text

  // Arguments the schema refuses, that are no JSON, no object; a tool that is not there.
  ;[shown.invalid] = await t.send('dogu.run deploy {"env":"dev"}')
  ;[shown.json] = await t.send('dogu.run echo {"text": "a" "b"}')
  ;[shown.array] = await t.send('dogu.run echo ["hi"]')
  ;[shown.unknown] = await t.send('dogu.run ech {}')

  // Edits: what an edit looks like, JSON that breaks off, no object, a field the tool does not have, a value it refuses.
  const edited = await t.asked('dogu.run deploy {"env":"prod"}')
  ;[shown['edit-bare']] = await t.send('e')
  ;[shown['edit-array']] = await t.send('e ["x"]')
  ;[shown['edit-cut']] = await t.send('e {"a":')
  ;[shown['edit-unknown']] = await t.send('e {"enb": "staging"}')
  ;[shown['edit-invalid']] = await t.send('e {"env": "dev"}')
  ;[shown['edit-allowed']] = await t.send('e {"env": "staging"}')
  ;[shown.edited] = await edited.run
  // An edited call the rules deny.
  const denied = await t.asked('dogu.run deploy {"env":"prod"}')
  ;[shown['edit-denied']] = await t.send('e {"env": "test"}')
  ;[shown['edited-denied']] = await denied.run

  // A tool's form refuses a value.
  const form = await t.asked('dogu.run profile {}')
  ;[shown['form-invalid']] = await t.send('age=500')
  await t.send('age=30')
  ;[shown.form] = await form.run

  // A long argument is folded in the question; the model's JSON was repaired (a trailing comma).
  const folded = await t.asked(`dogu.run deploy {"env":"prod","note":"${'测试'.repeat(150)}",}`)
  shown.fold = folded.question
  await t.send('n')
  await folded.run

  // A quota used up: which one, and when to try again.
  vi.useFakeTimers({ now: TEN_PAST, toFake: ['Date'] })
  await t.send('dogu.run echo {"text":"一"}')
  ;[shown.quota] = await t.send('dogu.run echo {"text":"二"}')
  vi.useRealTimers()

  // Background tasks: one that fails, one that succeeds.
  const [failing] = await t.send('dogu.run build {"target":"web"}')
  shown.background = failing
  await t.end('web', /task_\w+/.exec(failing)![0], { error: '磁盘已满' })
  shown['notice-failed'] = (await t.outbox.next()).text
  const [passing] = await t.send('dogu.run build {"target":"docs"}')
  await t.end('docs', /task_\w+/.exec(passing)![0], { output: '完成' })
  shown['notice-ok'] = (await t.outbox.next()).text

  // A kept request closed at a restart, its tool defined by no plugin.
  const record = { id: 'perm_1', tool: 'deploy', summary: 'deploy(env=prod)', session: { id: 'mock:room', platform: 'mock', channelId: 'room', userId: 'alice' } }
  closedRequestsOf(t.app.permissions.engine)!.push({
    cause: 'undefined-tool',
    reason: 'the tool "deploy" is not defined here: no plugin defined it within 60 s of the restart',
    record,
  } as unknown as ClosedRequest)
  shown.closed = (await t.outbox.next()).text
  return shown
}

/**
 * One start of a bot in `dir` whose channel speaks `locale` (as durable-chat.spec.ts starts
 * them: pending.json beside the grants, the next start on the same folder), with `rules`.
 */
async function start(dir: string, locale: Locale, rules: PermissionRule[] = [], tools: (notes: string[]) => ReturnType<typeof noteTools> = noteTools) {
  const app = new App({ baseDir: dir, i18n: { locales: [locale] } } as never)
  app.baseDir = dir
  const guard = guardLogs(app)
  let outbox: Outbox | undefined
  app.on('bot-added', (bot) => { outbox ??= new Outbox(bot) })
  const mock = app.plugin(MockAdapter, { selfId: '514' })
  const notes: string[] = []
  app.plugin(Dogu, {
    defaultAuthority: 3,
    permissions: { storePath: join(dir, 'permissions.json'), askTimeout: 600_000, rules },
    background: { storePath: join(dir, 'background.json') },
    audit: { storePath: join(dir, 'audit.jsonl') },
  })
  app.plugin(tools(notes))
  await app.start()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    const { engine: permissions } = app.permissions
    const { engine: background } = app.background
    await app.parallel('exit', 'SIGINT')
    mock.dispose()
    await app.stop()
    await Promise.all([permissions.stop(), background.dispose()])
  }
  cleanups.push(stop)
  await until(app, () => !!app.get('background') && !!app.tools.get('save_note'), 'the background service and the notes tool')
  if (!outbox) throw new Error('the mock bot was never added')
  const posted = outbox
  return { app, guard, notes, stop, next: (what: string) => within(posted.next(), what), say: async (text: string, user = 'alice') => (await app.mock.client(user, 'room').receive(text)).join('\n') }
}

/**
 * The replies to answers after a restart: an edit the tool refuses and one that names a field
 * it lacks, an answer from someone the rules changed meanwhile no longer let answer, an
 * answer the rules deny now, an approved call that cannot start (its tool changed); and the
 * notice of a kept request the store could not read.
 */
async function restartReplies(locale: Locale): Promise<{ shown: Record<string, string>; detail: string }> {
  const { dir, remove } = await tempDir('dogu-chat-locale-')
  cleanups.push(remove)
  const shown: Record<string, string> = {}
  const first = await start(dir, locale)
  for (const text of ['one', 'two']) {
    void first.say(`dogu.run save_note {"text":"${text}"}`)
    await first.next('the question')
  }
  await first.stop()
  // A third request the store cannot read: an effect no tool has (it names its channel still).
  const path = join(dir, 'pending.json')
  const store = JSON.parse(await readFile(path, 'utf8')) as { requests: Record<string, unknown>[] }
  store.requests.push({ ...store.requests[0], id: 'perm_bad', effect: 'bogus' })
  await writeFile(path, JSON.stringify(store))

  // Now only admin may approve notes.
  const second = await start(dir, locale, [{ permission: 'tool:save_note', decision: 'ask', approvers: { users: ['mock:admin'], caller: false }, name: 'admin notes' }])
  second.guard.expect(/a kept permission request could not be read, and is closed: requests\[2\] in .*pending\.json has an unknown effect "bogus"/)
  const posts = [await second.next('a notice or a question'), await second.next('a notice or a question'), await second.next('a notice or a question')].map((post) => post.text)
  shown.corrupt = posts.find((text) => !text.startsWith('[')) ?? ''
  shown['not-allowed'] = await second.say('y 1')
  shown['edit-invalid'] = await second.say('e 2 {"text": 5}')
  shown['edit-unknown'] = await second.say('e 2 {"txt": "x"}')
  await second.stop()

  // Now notes are denied.
  const third = await start(dir, locale, [{ permission: 'tool:save_note', decision: 'deny', name: 'no notes' }])
  await third.next('a question')
  await third.next('a question')
  shown['refused-denied'] = await third.say('y 1')
  expect(third.notes).toEqual([])
  await third.stop()

  // Now save_note takes a number: the text it was asked with no longer validates.
  const numbers = (notes: string[]) => ({
    name: 'number-notes',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({ name: 'save_note', description: 'Save a number', args: Schema.object({ text: Schema.number().required() }), traits: { effect: 'write' }, run: (args: { text: number }) => void notes.push(String(args.text)) }))
    },
  }) as ReturnType<typeof noteTools>
  const fourth = await start(dir, locale, [], numbers)
  fourth.guard.expect(/restored permission request .*its arguments no longer validate/)
  await fourth.next('the question')
  shown['resume-failed'] = await fourth.say('y')
  expect(fourth.notes).toEqual([])
  return { shown, detail: `requests[2] in ${path} has an unknown effect "bogus"` }
}

describe('englishWords, the check the zh-CN test makes', () => {
  it('finds the English left in a text, outside identifiers, JSON and the names given', () => {
    expect(englishWords('deploy：被拒绝\nPermission denied: mock:alice declined it', ['deploy'])).toEqual(['Permission', 'denied', 'declined', 'it'])
    expect(englishWords('[1] … [180 characters folded] …')).toEqual(['characters', 'folded'])
    // A name is a whole word: `env` does not hide `environment`.
    expect(englishWords('the environment', ['env', 'the'])).toEqual(['environment'])
    expect(englishWords('请求 [1] deploy:run "prod"，如 e {"env": "prod"}、`task_status`、$.env、task_1a2b、mock:alice、JSON', ['prod'])).toEqual([])
  })
})

describe('the chat in zh-CN', () => {
  it('tells every result, refusal and notice in Chinese: no English word outside identifiers, tool names and argument values', async () => {
    const shown = await replies('zh-CN')
    const task = /task_\w+/.exec(shown.background)![0]
    expect(shown).toEqual({
      question: expect.stringMatching(/^\[1\] 工具 deploy 请求批准：deploy\(env=prod\) — deploy:run "prod"\n/),
      declined: '已拒绝 [1] deploy(env=prod) — deploy:run "prod"。',
      denial: 'deploy：被拒绝\n权限被拒绝：mock:alice 拒绝了',
      expiry: 'deploy：被拒绝\n权限被拒绝：等待审批超时（20 秒内无人回答）',
      expired: '[1] deploy(env=staging) — deploy:run "staging"：已超时，已拒绝。',
      invalid: 'deploy：出错\n参数无效：\n- $.env：必须是 "staging"、"prod"、"test" 之一（实际是 "dev"）',
      json: expect.stringMatching(/^echo：出错\n参数不是有效的 JSON（第 1 行第 14 列，附近是 `.+`），请发送一个 JSON 对象。/),
      array: 'echo：出错\n参数必须是 JSON 对象，实际是数组。',
      unknown: expect.stringMatching(/^ech：出错\n未知工具 "ech"。是不是想用 "echo"？可用的工具：/),
      'edit-bare': '请在 e 后面写要改的字段（JSON 对象），如 e {"env": "prod"}。',
      'edit-array': '修改必须是由字段组成的 JSON 对象，而不是数组，如 e {"env": "prod"}。',
      'edit-cut': '修改不是有效的 JSON：写到第 1 行第 6 列（“{"a":”之后）就结束了，没有写完。请在 e 后面写要改的字段（JSON 对象），如 e {"env": "prod"}。',
      'edit-unknown': expect.stringMatching(/^修改没有生效，请求 \[1\] 仍在等待：修改后的参数在 \$\.enb 处设置了 `enb`，这个工具的参数里没有这个字段——是不是想写 `env`？/),
      'edit-invalid': '修改没有生效，请求 [1] 仍在等待：参数无效：\n- $.env：必须是 "staging"、"prod"、"test" 之一（实际是 "dev"）',
      'edit-allowed': '已按修改后的参数允许 [1] deploy(env=prod) — deploy:run "prod"（仅此一次）。改动：\n$.env: "prod" → "staging"\n实际运行的参数：{"env":"staging"}',
      'edit-denied': '[1] deploy(env=prod) — deploy:run "prod"：修改后的调用被拒绝：来自 config.rules[0] 的规则 "no-test"拒绝了它',
      'edited-denied': 'deploy：被拒绝\n权限被拒绝：mock:alice 修改了参数，修改后的调用被拒绝：来自 config.rules[0] 的规则 "no-test"拒绝了它',
      edited: 'deploy：成功\n有人在批准前修改了参数，调用按这些改动运行：\n$.env: "prod" → "staging"\n\n已部署到 staging',
      'form-invalid': '表单没有提交，[1] 仍在等待：参数无效：\n- $.age：应为不大于 150 的数字，实际是 500',
      form: 'profile：成功\n年龄 30',
      fold: expect.stringMatching(/^\[1\] 工具 deploy 请求批准：deploy\(env=prod, note="(测试)+ … \[已折叠 \d+ 个字符\] … (测试)+"\) — deploy:run "prod"\n.*\n（模型发来的参数不是合法 JSON，Dogu 已修复：去掉了多余的逗号。上面显示的是修复后的参数。）\n/),
      quota: 'echo：超出配额，配额“echo-hourly”已用完（每 1 小时最多 1 次），50 分钟后可再试',
      background: `build 已转入后台任务 ${task}，完成后会通知。`,
      'notice-failed': `后台任务 ${task}（build）失败：错误：磁盘已满`,
      'notice-ok': expect.stringMatching(/^后台任务 task_\w+（build）已完成：完成$/),
      closed: '机器人重启后，请求 deploy(env=prod) 已关闭，没有运行：本实例上没有定义它的工具 deploy，重启后也没有插件定义它',
    })
    for (const [kind, text] of Object.entries(shown)) expect(englishWords(text, NAMES), `${kind}: ${text}`).toEqual([])
  })
})

describe('the chat in zh-CN, after a restart', () => {
  it('tells an edit refused, an answer refused, a call that cannot start and a record the store could not read in Chinese; the store\'s own words are framed, not translated', async () => {
    const { shown, detail } = await restartReplies('zh-CN')
    expect(shown).toEqual({
      corrupt: `机器人重启后，一个保存的请求已关闭，没有运行：保存的记录无法读取，已关闭（存储给出的原因：${detail}）`,
      'not-allowed': '你现在不能回答请求 [1]：规则变了，它现在需要 用户 mock:admin 批准。',
      'edit-invalid': '修改没有生效，请求 [2] 仍在等待：参数无效：\n- $.text：应为字符串，实际是数字 5',
      'edit-unknown': expect.stringMatching(/^修改没有生效，请求 \[2\] 仍在等待：修改后的参数在 \$\.txt 处设置了 `txt`，这个工具的参数里没有这个字段——是不是想写 `text`？/),
      'refused-denied': '[1] save_note(text=one)：这个回答没有生效，现在的规则不允许这次调用：来自 config.rules[0] 的规则 "no notes"拒绝了它',
      'resume-failed': '[1] save_note(text=two) 已获批准，但调用没能启动：它的参数现在无法通过校验：参数无效：\n- $.text：应为数字，实际是字符串 "two"',
    })
    for (const [kind, text] of Object.entries(shown)) expect(englishWords(text.replace(detail, ''), [...NAMES, 'save_note', 'one', 'two', 'text', 'txt', 'notes', 'no']), `${kind}: ${text}`).toEqual([])
  })
})

describe('the chat in en-US', () => {
  it('tells the same replies after a restart in English', async () => {
    const { shown, detail } = await restartReplies('en-US')
    expect(shown).toEqual({
      corrupt: `After the bot restarted, a stored request was closed and did not run: its stored record could not be read, and was closed (the store said: ${detail})`,
      'not-allowed': 'You may not answer request [1] now: the rules changed, and it now needs the approval of users mock:admin.',
      'edit-invalid': 'The edit did not apply; request [2] is still waiting: Invalid arguments:\n- $.text: expected a string, got number 5',
      'edit-unknown': expect.stringMatching(/^The edit did not apply; request \[2\] is still waiting: the edited arguments set `txt` at \$\.txt, which is not a field of this tool's arguments — did you mean `text`\?/),
      'refused-denied': '[1] save_note(text=one): that answer did not count, the rules deny this call now: rule "no notes" from config.rules[0] denies it',
      'resume-failed': '[1] save_note(text=two) was approved, but its call could not start: its arguments no longer validate: Invalid arguments:\n- $.text: expected a number, got string "two"',
    })
  })

  it('tells the same results, refusals and notices in English', async () => {
    const shown = await replies('en-US')
    const task = /task_\w+/.exec(shown.background)![0]
    expect(shown).toEqual({
      question: expect.stringMatching(/^\[1\] Tool deploy asks for approval: deploy\(env=prod\) — deploy:run "prod"\n/),
      declined: 'Denied [1] deploy(env=prod) — deploy:run "prod".',
      denial: 'deploy: denied\nPermission denied: mock:alice declined it',
      expiry: 'deploy: denied\nPermission denied: timed out waiting for approval (no answer within 20s)',
      expired: '[1] deploy(env=staging) — deploy:run "staging": timed out, denied.',
      invalid: 'deploy: error\nInvalid arguments:\n- $.env: must be one of "staging", "prod", "test" (got "dev")',
      json: expect.stringMatching(/^echo: error\nArguments are not valid JSON \(.+\)\. Send a JSON object\./),
      array: 'echo: error\nArguments must be a JSON object, got an array.',
      unknown: expect.stringMatching(/^ech: error\nUnknown tool "ech"\. Did you mean "echo"\? Available tools: /),
      'edit-bare': 'Write the fields to change as a JSON object after e, like e {"env": "prod"}.',
      'edit-array': 'The edit must be a JSON object of fields, not an array, like e {"env": "prod"}.',
      'edit-cut': 'The edit is not valid JSON: it ends at line 1, column 6 (after "{"a":") before it is complete. Write the fields to change as a JSON object after e, like e {"env": "prod"}.',
      'edit-unknown': expect.stringMatching(/^The edit did not apply; request \[1\] is still waiting: the edited arguments set `enb` at \$\.enb, which is not a field of this tool's arguments — did you mean `env`\?/),
      'edit-invalid': 'The edit did not apply; request [1] is still waiting: Invalid arguments:\n- $.env: must be one of "staging", "prod", "test" (got "dev")',
      'edit-allowed': 'Allowed [1] deploy(env=prod) — deploy:run "prod" with edited arguments (once). Changes:\n$.env: "prod" → "staging"\nIt runs with: {"env":"staging"}',
      'edit-denied': '[1] deploy(env=prod) — deploy:run "prod": the edited call is denied: rule "no-test" from config.rules[0] denies it',
      'edited-denied': 'deploy: denied\nPermission denied: mock:alice edited the arguments, and the edited call is denied: rule "no-test" from config.rules[0] denies it',
      edited: 'deploy: ok\nA person changed your arguments before approving this call; it ran with these changes:\n$.env: "prod" → "staging"\n\n已部署到 staging',
      'form-invalid': 'The form was not sent; [1] is still waiting: Invalid arguments:\n- $.age: expected a number <= 150, got 500',
      form: 'profile: ok\n年龄 30',
      fold: expect.stringMatching(/^\[1\] Tool deploy asks for approval: deploy\(env=prod, note="(测试)+ … \[\d+ characters folded\] … (测试)+"\) — deploy:run "prod"\n.*\n\(The model's arguments were not valid JSON; Dogu repaired them: a trailing comma removed\. Shown above are the repaired arguments\.\)\n/),
      quota: 'echo: over a quota: quota "echo-hourly" is used up (at most 1 per 1 h); try again in 50 min',
      background: `build continues as background task ${task}; you will be told when it ends.`,
      'notice-failed': `Background task ${task} (build) failed: Error: 磁盘已满`,
      'notice-ok': expect.stringMatching(/^Background task task_\w+ \(build\) succeeded: 完成$/),
      closed: 'After the bot restarted, the request deploy(env=prod) was closed and did not run: its tool deploy is not defined here, and no plugin defined it after the restart',
    })
  })
})
