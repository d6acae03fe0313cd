// One result, two audiences (DESIGN §11): the model reads `content`, a person reads the same
// outcome rendered from `status`, `code` and `params` in their locale. Every result here
// comes from the pipeline as a model's call would; its en-US rendering must be its `content`
// byte for byte, and its zh-CN rendering must hold no English word but tool names, argument
// values, paths, code identifiers and text in someone's own words (a tool's error).
import fc from 'fast-check'
import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { englishWords } from '../../../test-support/english-words'
import {
  type ArgumentsRefusal,
  defineTool,
  type Denial,
  type DenialCause,
  describeDenial,
  describeProblem,
  describeResult,
  describeRevision,
  enUS,
  formatDurationFor,
  type IssueKind,
  messageLocale,
  messageTerms,
  type MiddlewareFailure,
  resultMessage,
  type RevisionRefusal,
  type Session,
  SECRET_CHANGED,
  summarizeArgs,
  ToolRateLimit,
  ToolRegistry,
  type ToolRegistryOptions,
  type ToolResult,
  type ToolResultCode,
  zhCN,
} from '../src'
import { type AskAnswer, type Asker, PermissionEngine, type PermissionEngineOptions, type PermissionRequest } from '../src/permissions'
import { testGate } from './gate'

const session: Session = { id: 's1', userId: 'alice', platform: 'mock', authority: 1 }

afterEach(() => {
  vi.useRealTimers()
})

/**
 * The checks every result gets: en-US is `content`; zh-CN differs from it and holds no English
 * word but `names` (the tool's and those the test passes: values, someone's own words).
 */
function told(result: ToolResult, names: readonly string[] = []): string {
  expect(describeResult(result, 'en-US')).toBe(result.content)
  const zh = describeResult(result, 'zh-CN')
  expect(zh).not.toBe(result.content)
  expect(englishWords(zh, [result.name, ...names])).toEqual([])
  return zh
}

/** A registry with a few tools; `engine` when the test needs the real permission engine. */
function setup(options: ToolRegistryOptions & { engine?: PermissionEngineOptions | false } = {}) {
  const { engine: engineOptions = {}, ...registryOptions } = options
  const registry = new ToolRegistry(registryOptions)
  const engine = engineOptions === false ? undefined : new PermissionEngine(engineOptions)
  if (engine) registry.permissions = engine
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: Schema.object({ env: Schema.union(['staging', 'prod']).required(), replicas: Schema.natural().max(5).default(1) }),
    permission: (args) => ({ name: 'deploy:run', target: args.env }),
    traits: { effect: 'exec' },
    run: (args) => `deployed ${args.env}`,
  }))
  registry.define(defineTool({ name: 'lookup', description: 'Look up', args: Schema.object({ q: Schema.string() }), traits: { effect: 'read' }, run: (args) => `found ${args.q}` }))
  registry.define(defineTool({ name: 'notes', description: 'Write a note', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'write' }, run: (args) => `saved ${args.text}` }))
  const call = async (name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> =>
    (await registry.toolset({ session }).execute([{ id: 'c1', name, arguments: args as string }], signal ? { signal } : {}))[0]!
  return { registry, engine, call }
}

/** Every key and scalar value in `value`, as text. */
function valuesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(valuesOf)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, inner]) => [key, ...valuesOf(inner)])
  return [String(value)]
}

/** An asker that keeps each request for the test to answer. */
function manualAsker() {
  const waiting: { request: PermissionRequest; respond: (answer: AskAnswer) => unknown }[] = []
  const asker: Asker = (request, context) => { waiting.push({ request, respond: context.respond }) }
  const next = async () => {
    await vi.waitFor(() => expect(waiting.length).toBeGreaterThan(0))
    return waiting.shift()!
  }
  return { asker, next }
}

describe('invalid arguments: one problem kind each, the path and values as parameters', () => {
  const flags = Schema.bitset({ read: 1, write: 2 })
  const KINDS: Record<IssueKind, [Schema, unknown, string[]?]> = {
    required: [Schema.object({ a: Schema.string().required() }), {}],
    type: [Schema.object({ a: Schema.number() }), { a: 'three' }, ['three']],
    enum: [Schema.object({ env: Schema.union(['staging', 'prod']) }), { env: 'dev' }, ['staging', 'prod', 'dev']],
    flag: [Schema.object({ f: flags }), { f: ['read', 2] }, ['read', 'write']],
    pattern: [Schema.object({ id: Schema.string().pattern(/^[a-z]+$/) }), { id: 'AB1' }],
    max: [Schema.object({ n: Schema.number().max(3) }), { n: 4 }],
    min: [Schema.object({ n: Schema.number().min(3) }), { n: 2 }],
    step: [Schema.object({ n: Schema.natural() }), { n: 1.5 }],
    max_length: [Schema.object({ s: Schema.string().max(2) }), { s: 'abc' }],
    min_length: [Schema.object({ l: Schema.array(Schema.string()).min(1) }), { l: [] }],
    property_name: [Schema.object({ d: Schema.dict(Schema.number(), Schema.union(['x', 'y'])) }), { d: { zz: 1 } }, ['zz', 'x', 'y']],
    unknown_field: [Schema.object({ o: Schema.dict(Schema.never()) }), { o: { extra: true } }],
    convert: [Schema.object({ c: Schema.transform(Schema.string(), () => { throw new Error('boom') }, true) }), { c: 'x' }, ['boom']],
    // schemastery's own wording, for a schema it resolves itself: English, which a person reads as the library wrote it.
    other: [Schema.object({ p: Schema.union([Schema.object({ q: flags })]) }), { p: { q: 'x' } }, ['expected { q?: bitset } but got {"q":"x"}']],
  }

  it.each(Object.entries(KINDS))('%s', async (kind, [schema, input, names = []]) => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'probe', description: 'Probe', args: schema, traits: { effect: 'read' }, run: () => 'ran' }))
    const [result] = await registry.toolset({ session }).execute([{ id: 'c1', name: 'probe', arguments: input as Record<string, unknown> }])
    const message = resultMessage(result!)
    expect(message?.code).toBe('invalid_arguments')
    if (message?.code !== 'invalid_arguments' || message.params.kind !== 'validation') throw new Error('not a validation refusal')
    expect(message.params.problems.map((problem) => problem.kind)).toContain(kind)
    const zh = told(result!, names)
    expect(zh.startsWith('参数无效：\n- $.')).toBe(true)
    for (const problem of message.params.problems) expect(result!.content).toContain(`- ${problem.path}: ${describeProblem(problem, 'en-US')}`)
  })

  it('every path of a call that breaks many rules at once, for any values (property)', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'form',
      description: 'A form',
      args: Schema.object({
        name: Schema.string().min(1).max(8).required(),
        age: Schema.natural().max(150),
        env: Schema.union(['staging', 'prod']),
        tags: Schema.array(Schema.string().pattern(/^[a-z]+$/)).max(3),
        on: Schema.boolean(),
      }),
      traits: { effect: 'read' },
      run: () => 'ran',
    }))
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 5 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }))
    await fc.assert(fc.asyncProperty(fc.record({ name: value, age: value, env: value, tags: value, on: value }, { requiredKeys: [] }), async (input) => {
      const [result] = await registry.toolset({ session }).execute([{ id: 'c1', name: 'form', arguments: input as Record<string, unknown> }])
      if (result!.status === 'ok') return
      expect(describeResult(result!, 'en-US')).toBe(result!.content)
      // What the model sent is its own: its keys and values (as text and as JSON) are not prose.
      const names = valuesOf(input).flatMap((value) => [value, JSON.stringify(value)])
      expect(englishWords(describeResult(result!, 'zh-CN'), [...names, 'staging', 'prod'])).toEqual([])
    }), { numRuns: 150 })
  })

  it('a secret field is masked in the parameters as in the text', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({ name: 'login', description: 'Log in', args: Schema.object({ token: Schema.string().role('secret').max(4), user: Schema.string().max(3) }), traits: { effect: 'read' }, run: () => 'in' }))
    const [result] = await registry.toolset({ session }).execute([{ id: 'c1', name: 'login', arguments: { token: 'sk-live-123456', user: 'sk-live-123456' } }])
    expect(result!.content).toBe('Invalid arguments:\n- $.token: expected at most 4 characters, got ••••\n- $.user: expected at most 3 characters, got 14')
    expect(JSON.stringify(result!.params)).not.toContain('sk-live')
    expect(told(result!)).toBe('参数无效：\n- $.token：最多 4 个字符，实际有 ••••\n- $.user：最多 3 个字符，实际有 14')
  })
})

describe('arguments refused before validation', () => {
  const REFUSALS: Record<ArgumentsRefusal['kind'], () => Promise<ToolResult>> = {
    validation: () => setup().call('deploy', { env: 'dev' }),
    invalid_json: () => setup({ repair: false }).call('lookup', '{"q": tea}'),
    not_object: () => setup().call('lookup', '[1, 2]'),
    too_large: () => setup({ limits: { maxArgumentsLength: 10 } }).call('lookup', '{"q": "a long query"}'),
    duplicate_key: () => setup().call('lookup', '{"q": "a", "q": "b"}'),
    forbidden_key: () => setup().call('lookup', '{"q": "a", "__proto__": {"x": 1}}'),
    invalid_encoding: async () => {
      const registry = new ToolRegistry()
      registry.define(defineTool({ name: 'tag', description: 'Tag', args: Schema.object({ labels: Schema.dict(Schema.string()) }), traits: { effect: 'read' }, run: () => 'tagged' }))
      return (await registry.toolset({ session, dialect: 'gemini' }).execute([{ id: 'c1', name: 'tag', arguments: { labels: 'env=prod' } }]))[0]!
    },
  }

  it.each(Object.entries(REFUSALS))('%s', async (kind, make) => {
    const result = await make()
    expect(result.code).toBe('invalid_arguments')
    expect((result.params as ArgumentsRefusal).kind).toBe(kind)
    told(result, ['dev', 'staging', 'prod'])
  })

  it('invalid JSON says where it broke and shows the text there, never only the parser\'s English', async () => {
    const result = await setup({ repair: false }).call('lookup', '{"q": tea}')
    expect(result.content).toBe('Arguments are not valid JSON (Unexpected token \'e\', "{"q": tea}" is not valid JSON). Send a JSON object.')
    expect(result.params).toEqual({ kind: 'invalid_json', detail: 'Unexpected token \'e\', "{"q": tea}" is not valid JSON', excerpt: '{"q": tea}' })
    expect(told(result)).toBe('参数不是有效的 JSON（附近是 `{"q": tea}`），请发送一个 JSON 对象。')
    const cut = await setup({ repair: false }).call('lookup', '{\n  "q": "a",\n  }')
    expect(cut.params).toMatchObject({ kind: 'invalid_json', position: 16, line: 3, column: 3 })
    expect(told(cut)).toBe('参数不是有效的 JSON（第 3 行第 3 列，附近是 `"q": "a", }`），请发送一个 JSON 对象。')
  })

  it('for any text that is not JSON (property)', async () => {
    const { call } = setup()
    await fc.assert(fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }).filter((text) => { try { JSON.parse(text); return false } catch { return true } }), async (text) => {
      const result = await call('lookup', text)
      if (result.status === 'ok') return
      expect(describeResult(result, 'en-US')).toBe(result.content)
      // The parser's and the repair's words (`detail`, `unrepairable`) are English the model reads; a person reads neither.
      expect(englishWords(describeResult(result, 'zh-CN'), [text])).toEqual([])
    }), { numRuns: 200 })
  })

  it('a tool with secret fields keeps no excerpt of text that did not parse', async () => {
    const registry = new ToolRegistry({ repair: false })
    registry.define(defineTool({ name: 'login', description: 'Log in', args: Schema.object({ token: Schema.string().role('secret') }), traits: { effect: 'read' }, run: () => 'in' }))
    const [result] = await registry.toolset({ session }).execute([{ id: 'c1', name: 'login', arguments: '{"token": sk-live-42}' }])
    expect(result!.content).not.toContain('sk-live')
    expect(JSON.stringify(result!.params)).not.toContain('sk-live')
    told(result!)
  })

  it('names what the arguments were instead of an object', async () => {
    const { call } = setup()
    const texts = { '[1]': '数组', '5': '数字', 'true': '布尔值', 'null': '`null`' }
    for (const [text, zh] of Object.entries(texts)) {
      const result = await call('lookup', text)
      expect(told(result)).toBe(`参数必须是 JSON 对象，实际是${zh}。`)
    }
  })
})

describe('unknown tools', () => {
  it('with suggestions, without a name, and among many tools', async () => {
    const { call, registry } = setup()
    const close = await call('deplyo', '{}')
    expect(close.params).toEqual({ name: 'deplyo', suggestions: ['deploy'], available: ['deploy', 'lookup', 'notes'], more: false })
    expect(told(close, ['deploy', 'lookup', 'notes'])).toBe('未知工具 "deplyo"。是不是想用 "deploy"？可用的工具：deploy、lookup、notes。')
    expect(told(await call(undefined as never, '{}'))).toBe('未知工具：调用没有给出工具名。')
    for (let i = 0; i < 25; i++) registry.define(defineTool({ name: `t${i}`, description: '', traits: { effect: 'read' }, run: () => '' }))
    const many = await call('zzz', '{}')
    expect(many.content.endsWith(', …')).toBe(false)
    expect(many.content).toMatch(/, …\.$/)
    told(many, (many.params as { available: string[] }).available)
  })
})

describe('denials: one cause each', () => {
  /** How each cause comes about: through the pipeline, with the real engine where it decides. */
  const DENIALS: Record<DenialCause, () => Promise<ToolResult>> = {
    rule: () => setup({ engine: { rules: [{ permission: 'deploy:run', target: 'prod', decision: 'deny', name: 'no prod' }] } }).call('deploy', { env: 'prod' }),
    declined: async () => {
      const { engine, call } = setup()
      const asker = manualAsker()
      engine!.addAsker(asker.asker)
      const pending = call('notes', { text: 'hi' })
      ;(await asker.next()).respond({ decision: 'deny', by: { platform: 'mock', id: 'alice' } })
      return pending
    },
    expired: async () => {
      vi.useFakeTimers()
      const { engine, call } = setup({ engine: { askTimeout: 20_000 } })
      let shown!: () => void
      const asked = new Promise<void>((resolve) => { shown = resolve })
      engine!.addAsker(() => shown())
      const pending = call('notes', { text: 'hi' })
      await asked
      await vi.advanceTimersByTimeAsync(20_000)
      return pending
    },
    cancelled: async () => {
      const { engine, call } = setup()
      const asker = manualAsker()
      engine!.addAsker(asker.asker)
      const controller = new AbortController()
      const pending = call('notes', { text: 'hi' }, controller.signal)
      await asker.next()
      controller.abort()
      // A cancelled call ends `cancelled`; the denial is what the engine records: render it too.
      const result = await pending
      expect(result.status).toBe('cancelled')
      return { ...result, status: 'denied', code: 'permission_denied', params: { cause: 'cancelled', when: 'waiting' }, content: 'Permission denied: the call was cancelled while waiting for approval' } as ToolResult
    },
    no_asker: () => setup().call('notes', { text: 'hi' }),
    unreachable: async () => {
      const { engine, call } = setup()
      engine!.addAsker(() => { throw Object.assign(new Error('cannot show questions'), { code: 'CANNOT_ASK' }) })
      return call('notes', { text: 'hi' })
    },
    askers_failed: async () => {
      const { engine, call } = setup({ logger: { debug() {}, warn() {} } })
      engine!.addAsker(() => { throw new Error('terminal closed') })
      return call('notes', { text: 'hi' })
    },
    answer_refused: async () => {
      // A framework's approval (execute's `answers`) from someone the rule does not name.
      const { registry } = setup({ engine: { rules: [{ permission: 'tool:notes', decision: 'ask', approvers: { users: ['mock:ops'], caller: false } }] } })
      return (await registry.toolset({ session }).execute([{ id: 'c1', name: 'notes', arguments: { text: 'hi' } }], { answers: { c1: { decision: 'allow', by: { platform: 'mock', id: 'alice' }, via: 'ai-sdk' } } }))[0]!
    },
    askers_unloaded: async () => {
      const { engine, call } = setup()
      const remove = engine!.addAsker(() => {})
      const pending = call('notes', { text: 'hi' })
      await vi.waitFor(() => expect(engine!.pending()).toHaveLength(1))
      remove()
      return pending
    },
    stopped: async () => {
      const { engine, call } = setup()
      await engine!.stop()
      return call('notes', { text: 'hi' })
    },
    elsewhere: async () => rendered({ cause: 'elsewhere', instance: 'bot-2', by: 'mock:bob' }),
    edit_denied: async () => {
      const { engine, call } = setup({ engine: { rules: [{ permission: 'deploy:run', target: 'prod', decision: 'deny' }] } })
      const asker = manualAsker()
      engine!.addAsker(asker.asker)
      const pending = call('deploy', { env: 'staging' })
      ;(await asker.next()).respond({ decision: 'allow', by: { platform: 'mock', id: 'alice' }, value: { env: 'prod', replicas: 1 } })
      return pending
    },
    rewrite_denied: async () => {
      const { registry, call } = setup({ engine: { rules: [{ permission: 'deploy:run', target: 'staging', decision: 'allow' }, { permission: 'deploy:run', target: 'prod', decision: 'deny' }] } })
      registry.use(async (call, next) => next({ ...(call.args as object), env: 'prod' }), { name: 'promote' })
      return call('deploy', { env: 'staging' })
    },
    no_service: async () => {
      const { registry, call } = setup({ engine: false })
      registry.define(defineTool({ name: 'pay', description: 'Pay', traits: { effect: 'read' }, run: async (_, call) => { await call.ask('charge 5 USD'); return 'paid' } }))
      return call('pay', {})
    },
    check_failed: () => gated(() => { throw new Error('rules store is offline') }),
    no_decision: () => gated(() => ({ decision: 'bogus' }) as never),
    unvalidated_edit: () => gated(() => ({ decision: 'ask' }), async () => ({ decision: 'allow', edited: { input: {}, changes: ['$.text: "a" → "b"'], request: {} as never } })),
    not_approved: () => gated(() => ({ decision: 'ask' }), async () => ({ decision: 'deny' })),
    approval_changed: async () => rendered({ cause: 'approval_changed', approved: { name: 'fs.write', target: 'a.txt' }, needs: { name: 'fs.write', target: 'b.txt' } }),
    tool: async () => {
      const { registry, call } = setup()
      registry.define(defineTool({ name: 'guard', description: 'Guard', traits: { effect: 'read' }, run: (_, call) => call.deny('not on weekends') }))
      return call('guard', {})
    },
    middleware: async () => {
      const { registry, call } = setup()
      registry.use(() => ({ status: 'denied', reason: 'quiet hours' }), { name: 'quiet' })
      return call('lookup', { q: 'tea' })
    },
    gate: () => gated(() => ({ decision: 'deny', reason: 'the owner said so' })),
  }

  /** A registry behind a test gate (plugin code: whatever it answers). */
  async function gated(decide: Parameters<typeof testGate>[0], answer?: Parameters<typeof testGate>[1]): Promise<ToolResult> {
    const { registry, call } = setup({ engine: false })
    registry.permissions = testGate(decide, answer).gate
    return call('notes', { text: 'a' })
  }

  /** A denial the pipeline cannot reach in one process (another instance, a restart), as a result of it. */
  function rendered(denial: Denial): ToolResult {
    return { id: 'c1', name: 'notes', status: 'denied', code: 'permission_denied', params: denial, content: `Permission denied: ${describeDenial(denial, 'en-US')}`, durationMs: 0 }
  }

  it.each(Object.entries(DENIALS))('%s', async (cause, make) => {
    const result = await make()
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied', params: { cause } })
    // Words not ours: a gate's, a tool's, a middleware's, an asker's error.
    told(result, ['the owner said so', 'not on weekends', 'quiet hours', 'cannot show questions', 'terminal closed', 'rules store is offline', 'charge 5 USD', 'no prod', 'deploy:run', 'bogus', 'quiet', 'promote', 'prod', 'staging', 'bot-2'])
  })

  it('says who declined, and how long nobody answered, in the chat\'s words', async () => {
    expect(told(await DENIALS.declined())).toBe('权限被拒绝：mock:alice 拒绝了')
    expect(told(await DENIALS.expired())).toBe('权限被拒绝：等待审批超时（20 秒内无人回答）')
  })

  it('with no asker, the denial says in both languages how to register one', async () => {
    const result = await DENIALS.no_asker()
    expect(result.content).toBe('Permission denied: it needs a person\'s approval (no rule matches; write tools need approval by default), but no asker is registered to ask anyone: register one with ctx.permissions.asker(...) (see docs/permissions.md)')
    expect(told(result)).toBe('权限被拒绝：它需要有人批准（没有匹配的规则；写入类工具默认需要审批），但没有注册任何询问者：用 `ctx.permissions.asker(...)` 注册一个（见 docs/permissions.md）')
  })

  it('a gate\'s cause that says something other than its reason is not trusted: the reason is told as written', async () => {
    const result = await gated(() => ({ decision: 'deny', reason: 'closed for maintenance', cause: { kind: 'mode', decision: 'deny', mode: 'readOnly', effect: 'write' } }))
    expect(result.params).toEqual({ cause: 'gate', reason: 'closed for maintenance' })
    expect(describeResult(result, 'zh-CN')).toBe('权限被拒绝：closed for maintenance')
  })

  it('every rule cause: named, matched by what it covers, modes and the malformed call', async () => {
    const unnamed = await setup({ engine: { rules: [{ permission: 'deploy:run', target: 'prod', sandboxed: false, decision: 'deny' }] } }).call('deploy', { env: 'prod' })
    expect(unnamed.content).toBe('Permission denied: rule (deploy:run on prod, unsandboxed) from config.rules[0] denies it')
    expect(told(unnamed, ['prod', 'deploy:run'])).toBe('权限被拒绝：来自 config.rules[0] 的规则 （deploy:run 作用于 prod，在沙箱外）拒绝了它')
    const { engine, call } = setup()
    engine!.setMode('s1', 'readOnly')
    const mode = await call('notes', { text: 'x' })
    expect(mode.content).toBe('Permission denied: the session is in readOnly mode, which denies write tools')
    expect(told(mode)).toBe('权限被拒绝：会话处于只读模式，这个模式拒绝写入类工具')
    expect(zhCN.denial({ cause: 'rewrite_denied', middleware: 'promote', plugin: 'plugin "policy"', denial: { cause: 'rule', decided: { kind: 'rule', decision: 'deny', permission: 'fs.write', origin: 'plugin "policy"' } } }))
      .toBe('中间件 "promote"（插件 "policy"）改写了调用，改写后的调用被拒绝：来自 插件 "policy" 的规则 （fs.write）拒绝了它')
    const malformed = zhCN.denial({ cause: 'rule', decided: { kind: 'malformed' } })
    expect(englishWords(malformed)).toEqual([])
  })
})

describe('the other codes', () => {
  const CODES: Record<Exclude<ToolResultCode, 'invalid_arguments' | 'permission_denied' | 'unknown_tool'>, () => Promise<ToolResult>> = {
    tool_error: async () => {
      const { registry, call } = setup()
      registry.define(defineTool({ name: 'broken', description: '', traits: { effect: 'read' }, run: () => { throw new Error('the disk is on fire') } }))
      return call('broken', {})
    },
    no_permission_service: () => setup({ engine: false }).call('notes', { text: 'x' }),
    timed_out: async () => {
      vi.useFakeTimers()
      const { registry, call } = setup()
      registry.define(defineTool({ name: 'slow', description: '', traits: { effect: 'read', timeout: 20_000 }, run: (_, call) => { call.progress('step 2 of 3'); return new Promise(() => {}) } }))
      const pending = call('slow', {})
      await vi.advanceTimersByTimeAsync(20_000)
      return pending
    },
    cancelled: async () => {
      const { registry, call } = setup()
      const controller = new AbortController()
      registry.define(defineTool({ name: 'slow', description: '', traits: { effect: 'read' }, run: () => new Promise(() => {}) }))
      const pending = call('slow', {}, controller.signal)
      controller.abort()
      return pending
    },
    background: async () => ({ id: 'c1', name: 'slow', status: 'background', code: 'background', taskId: 'task_1a2b', params: { taskId: 'task_1a2b' }, content: enUS.results.background({ taskId: 'task_1a2b' }), durationMs: 0 }),
    middleware_error: async () => {
      const { registry, call } = setup()
      registry.use(() => { throw new Error('policy store offline') }, { name: 'policy' })
      return call('lookup', { q: 'tea' })
    },
    rate_limited: async () => {
      const { call } = setup({ quotas: [{ name: 'lookups', tools: 'lookup', per: 'user', max: 1, window: '1h' }] })
      expect((await call('lookup', { q: 'a' })).status).toBe('ok')
      return call('lookup', { q: 'b' })
    },
    quota_unavailable: async () => {
      const store = { take: () => Promise.reject(new Error('database is down')), give: () => {}, used: () => [], add: () => {} }
      const { call } = setup({ quotas: [{ name: 'lookups', tools: 'lookup', per: 'user', max: 1, window: '1h' }], quotaStore: store as never, logger: { debug() {}, warn() {} } })
      return call('lookup', { q: 'a' })
    },
    output_invalid: async () => {
      const { registry, call } = setup()
      registry.define(defineTool({ name: 'count', description: '', output: Schema.object({ n: Schema.number().required() }), traits: { effect: 'read' }, run: () => ({ text: 'one', data: { n: 'one' } }) }))
      return call('count', {})
    },
  }

  it.each(Object.entries(CODES))('%s', async (code, make) => {
    const result = await make()
    expect(result.code).toBe(code)
    told(result, ['the disk is on fire', 'step 2 of 3', 'policy store offline', 'policy', 'lookups', 'database is down', 'one'])
  })

  it('a quota tells when to try again in the chat\'s units, rounded up; an upstream\'s limit in its words', async () => {
    vi.useFakeTimers({ now: Date.UTC(2025, 0, 1, 10, 50, 28) })
    const { call, registry } = setup({ quotas: [{ name: 'lookups', tools: 'lookup', per: 'user', max: 20, window: '1h' }] })
    for (let i = 0; i < 20; i++) await call('lookup', { q: 'a' })
    const limited = await call('lookup', { q: 'a' })
    expect(limited.content).toBe("Rate limited: quota 'lookups' used: 20 per 1 h; try again in 572 s.")
    expect(limited.params).toEqual({ source: 'quota', quota: 'lookups', max: 20, windowMs: 3_600_000, retryAfterMs: 572_000 })
    expect(told(limited, ['lookups'])).toBe('已限流：配额 "lookups" 已用完（每 1 小时 20 次）；请 10 分钟后再试。')
    registry.define(defineTool({ name: 'upstream', description: '', traits: { effect: 'read' }, run: () => { throw new ToolRateLimit('the API allows 5 calls a minute', 30_000) } }))
    const upstream = await call('upstream', {})
    expect(upstream.content).toBe('Rate limited: the API allows 5 calls a minute')
    expect(told(upstream, ['the API allows 5 calls a minute'])).toBe('已限流：the API allows 5 calls a minute')
  })

  it('a timeout with the last progress line, and a call cut off while it waited for a place', async () => {
    expect(told(await CODES.timed_out(), ['step 2 of 3'])).toBe('超时：运行 20 秒仍未完成。最后的进度：step 2 of 3')
    vi.useFakeTimers()
    const { registry, call } = setup({ maxRunning: { session: 1 } })
    registry.define(defineTool({ name: 'hog', description: '', traits: { effect: 'read', timeout: 60_000 }, run: () => new Promise(() => {}) }))
    registry.define(defineTool({ name: 'slow', description: '', traits: { effect: 'read', timeout: 5_000 }, run: () => 'ran' }))
    void call('hog', {})
    const waiting = call('slow', {})
    // The wait starts once the call reaches the limits stage, a few ticks in.
    for (let i = 0; i < 6; i++) await vi.advanceTimersByTimeAsync(1_000)
    const queued = await waiting
    expect(queued.content).toBe('Timed out: waited 5 s for a place to run and did not start (maxRunning.session: 1).')
    told(queued)
  })

  it('every middleware failure and every refused rewrite', async () => {
    const FAILURES: Record<MiddlewareFailure['kind'], (registry: ToolRegistry) => void> = {
      threw: (registry) => registry.use(() => { throw new Error('boom') }, { name: 'm' }),
      no_result: (registry) => registry.use(() => undefined as never, { name: 'm' }),
      bad_status: (registry) => registry.use(() => ({ status: 'maybe', content: 'x' }) as never, { name: 'm' }),
      no_content: (registry) => registry.use(() => ({ status: 'ok' }) as never, { name: 'm' }),
      rewrite: (registry) => registry.use((_, next) => next({ q: 5 }), { name: 'm' }),
    }
    for (const [kind, add] of Object.entries(FAILURES)) {
      const { registry, call } = setup({ logger: { debug() {}, warn() {} } })
      add(registry)
      const result = await call('lookup', { q: 'tea' })
      expect(result.params).toMatchObject({ middleware: 'm', failure: { kind } })
      told(result, ['boom', 'maybe'])
    }
  })
})

describe('the notes a result starts with', () => {
  it('repaired arguments and a person\'s edit, before the tool\'s own text', async () => {
    const { engine, call } = setup()
    const asker = manualAsker()
    engine!.addAsker(asker.asker)
    const pending = call('notes', '{text: \'hi\'}')
    ;(await asker.next()).respond({ decision: 'allow', by: { platform: 'mock', id: 'alice' }, value: { text: 'bye' } })
    const result = await pending
    expect(result.status).toBe('ok')
    expect(result.edits).toEqual(['$.text: "hi" → "bye"'])
    expect(told(result, ['saved bye', 'hi', 'bye'])).toBe([
      '注意：参数不是有效的 JSON，运行前已修复（单引号改为双引号、给键名加上引号）。',
      '有人在批准前修改了参数，调用按这些改动运行：\n$.text: "hi" → "bye"',
      'saved bye',
    ].join('\n\n'))
  })

  it('a change to a secret alone is said without its value', () => {
    expect(zhCN.edited([SECRET_CHANGED])).toBe('有人在批准前修改了参数，调用按这些改动运行：\n一个机密字段被修改了（不显示它的值）')
  })
})

describe('edits refused, in the approver\'s language', () => {
  const REVISIONS: Record<RevisionRefusal['kind'], RevisionRefusal> = {
    not_object: { kind: 'not_object' },
    not_json: { kind: 'not_json', detail: 'Converting circular structure to JSON' },
    too_large: { kind: 'too_large', length: 200, max: 100 },
    validation: { kind: 'validation', problems: [{ path: '$.env', kind: 'enum', params: { options: ['"staging"', '"prod"'], got: { type: 'string', text: '"dev"' } } }] },
    permission: { kind: 'permission', error: 'no target' },
    unknown_field: { kind: 'unknown_field', path: '$.Env', key: 'Env', names: ['env', 'replicas'], suggestion: 'env' },
    not_editable: { kind: 'not_editable' },
    check_failed: { kind: 'check_failed', error: 'permission() threw' },
    needs_approver: { kind: 'needs_approver', approvers: 'mock:admin' },
  }

  it.each(Object.entries(REVISIONS))('%s', (_, refusal) => {
    for (const by of ['edit', 'middleware'] as const) {
      expect(englishWords(describeRevision(refusal, 'zh-CN', by), ['Converting circular structure to JSON', 'no target', 'permission() threw', 'mock:admin', 'staging', 'prod', 'dev'])).toEqual([])
    }
  })

  it('the editor says in English what it says today, from the same parameters', async () => {
    const { engine, call } = setup()
    const asked: PermissionRequest[] = []
    engine!.addAsker((request) => { asked.push(request) })
    void call('deploy', { env: 'staging' })
    await vi.waitFor(() => expect(asked).toHaveLength(1))
    const input = asked[0]!.input!
    expect(input.check({ Env: 'prod' })).toBe(describeRevision(REVISIONS.unknown_field, 'en-US'))
    expect(describeRevision(REVISIONS.unknown_field, 'en-US')).toBe('the edited arguments set `Env` at $.Env, which is not a field of this tool\'s arguments — did you mean `env`? The fields there are: `env`, `replicas`.')
    expect(input.check({ env: 'dev' })).toBe('Invalid arguments:\n- $.env: must be one of "staging", "prod" (got "dev")')
    expect(input.check([1])).toBe('the edited arguments must be a JSON object')
    await engine!.stop()
  })

  it('an edit refused says why in its structured form too: resolve() and the answer\'s result', async () => {
    const { engine, call } = setup()
    const asked: { request: PermissionRequest; answer: (answer: AskAnswer) => Promise<{ status: string; reason?: string; refusal?: RevisionRefusal }> }[] = []
    engine!.addAsker((request, context) => { asked.push({ request, answer: context.answer! }) })
    const pending = call('deploy', { env: 'staging' })
    await vi.waitFor(() => expect(asked).toHaveLength(1))
    const { request, answer } = asked[0]!
    const resolved = request.input!.resolve!({ Env: 'prod' })
    expect(resolved).toEqual({ error: describeRevision(REVISIONS.unknown_field, 'en-US'), refusal: REVISIONS.unknown_field })
    const refused = await answer({ decision: 'allow', by: { platform: 'mock', id: 'alice' }, value: { env: 'dev' } })
    expect(refused).toMatchObject({ status: 'invalid', reason: 'Invalid arguments:\n- $.env: must be one of "staging", "prod" (got "dev")' })
    expect(describeRevision(refused.refusal!, 'zh-CN')).toBe('参数无效：\n- $.env：必须是 "staging"、"prod" 之一（实际是 "dev"）')
    await answer({ decision: 'deny', by: { platform: 'mock', id: 'alice' } })
    expect((await pending).status).toBe('denied')
  })
})

describe('a summary\'s folds, in the reader\'s language', () => {
  it('a long value and a long argument list, folded in the middle with what they hide', () => {
    const long = 'a'.repeat(200)
    expect(summarizeArgs('write', { text: long })).toContain('… [80 characters folded] …')
    const zh = summarizeArgs('write', { text: long }, undefined, { locale: 'zh-CN' })
    expect(zh).toBe(`write(text=${'a'.repeat(60)} … [已折叠 80 个字符] … ${'a'.repeat(60)})`)
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]))
    expect(summarizeArgs('t', many, undefined, { locale: 'zh-CN' })).toContain('… [已折叠 8 个参数] …')
    expect(englishWords(summarizeArgs('deploy', { note: 'x'.repeat(500) }, { name: 'deploy:run', target: 'y'.repeat(300) }, { locale: 'zh-CN' }), ['deploy:run', 'deploy', 'note', 'x'.repeat(60), 'y'.repeat(100)])).toEqual([])
  })
})

describe('durations, as the chat says them', () => {
  it('in the largest whole unit, two units on request, rounded up for a wait', () => {
    expect(formatDurationFor(20_000, 'zh-CN')).toBe('20 秒')
    expect(formatDurationFor(20_003, 'zh-CN')).toBe('20 秒')
    expect(formatDurationFor(572_000, 'zh-CN', { parts: 2 })).toBe('9 分钟 32 秒')
    expect(formatDurationFor(572_000, 'zh-CN', { round: 'up' })).toBe('10 分钟')
    expect(formatDurationFor(3_600_000, 'zh-CN')).toBe('1 小时')
    expect(formatDurationFor(20_000, 'en-US')).toBe('20 s')
    expect(formatDurationFor(200, 'zh-CN')).toBe('0 秒')
    expect(formatDurationFor(200, 'zh-CN', { round: 'up' })).toBe('1 秒')
  })

  it('never early when rounded up, never late when rounded down (property)', () => {
    const UNIT: Record<string, number> = { 天: 86_400_000, 小时: 3_600_000, 分钟: 60_000, 秒: 1000 }
    fc.assert(fc.property(fc.integer({ min: 1, max: 30 * 86_400_000 }), (ms) => {
      const [upCount, upUnit] = formatDurationFor(ms, 'zh-CN', { round: 'up' }).split(' ')
      expect(Number(upCount) * UNIT[upUnit!]!).toBeGreaterThanOrEqual(ms)
      const [downCount, downUnit] = formatDurationFor(ms, 'zh-CN').split(' ')
      expect(Number(downCount) * UNIT[downUnit!]!).toBeLessThanOrEqual(ms)
    }))
  })
})

describe('locales and terms', () => {
  it('any Chinese locale is zh-CN, anything else en-US', () => {
    expect(['zh-CN', 'zh', 'zh-Hans-CN', 'zh_TW'].map((locale) => messageLocale(locale))).toEqual(['zh-CN', 'zh-CN', 'zh-CN', 'zh-CN'])
    expect(['en', 'fr-FR', '', undefined].map((locale) => messageLocale(locale))).toEqual(['en-US', 'en-US', 'en-US', 'en-US'])
    expect(messageLocale(['fr', 'zh-CN', 'en'])).toBe('zh-CN')
  })

  it('the zh-CN terms hold no English word, and name every status, code, mode, effect and scope', () => {
    const terms = messageTerms('zh-CN')
    const english = messageTerms('en-US')
    for (const key of ['status', 'code', 'mode', 'effect', 'scope', 'repairStep'] as const) {
      expect(Object.keys(terms[key]).sort()).toEqual(Object.keys(english[key]).sort())
      for (const word of Object.values(terms[key])) expect(englishWords(word)).toEqual([])
    }
    expect(terms.scope.always).toBe('总是')
  })

  it('a result a middleware made itself, without parameters, is its content in every locale', async () => {
    const { registry, call } = setup()
    registry.use(() => ({ status: 'error', content: 'Error: handled elsewhere', code: 'tool_error' }) as never, { name: 'replace' })
    const result = await call('lookup', { q: 'tea' })
    expect(result.params).toBeUndefined()
    expect(describeResult(result, 'zh-CN')).toBe('Error: handled elsewhere')
  })
})
