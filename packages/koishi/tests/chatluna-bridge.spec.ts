import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type ToolCall } from '@dogu/core'
import { type Context, Logger, Schema, type Session } from 'koishi'
import { afterEach, describe, expect, it, vi } from 'vitest'
import * as Dogu from '../src'
import { chatlunaBridge, ChatLunaBridgeConfig } from '../src/chatluna-bridge'
import { chatlunaContent } from '../src/chatluna-content'
import { type ChatApp, chatApp, type ChatAppOptions, descriptions, inBothLanguages } from './chat-harness'
import { koishiApp, sessionOf } from './koishi-app'

// Koishi loads plugins through require: ChatLuna's ESM entry imports Koishi's, which does not load in Node.
const require = createRequire(import.meta.url)
const ChatLuna = require('koishi-plugin-chatluna')

/** What the tests use of ChatLuna's platform service (koishi-plugin-chatluna 1.3.36). */
interface Platform {
  registerTool(name: string, tool: object): () => void
  getToolRegistry(): Record<string, { name: string; description?: string; meta?: unknown }>
  getTool(name: string): {
    id?: string
    createTool(params: object): any
    authorization?: (session: Session) => boolean
  }
}

let t: ChatApp | undefined
const dirs: string[] = []
const logs: string[] = []
const target = { levels: { base: 0, dogu: 2 }, record: (record: { content: string }) => { logs.push(record.content) } }
Logger.targets.push(target)

afterEach(async () => {
  await t?.dispose()
  t = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  logs.length = 0
})

/** Turns the crank until `done()` holds: plugins apply asynchronously, ChatLuna starts on `ready`. */
async function until(app: ChatApp['app'], done: () => boolean) {
  for (let round = 0; round < 50 && !done(); round++) {
    await app.lifecycle.flush()
    await new Promise((resolve) => setImmediate(resolve))
  }
  if (!done()) throw new Error('the app did not settle')
}

/** Loads ChatLuna into `app` with its data in a temp folder; resolves once `ctx.chatluna` is there. */
async function loadChatLuna(app: ChatApp['app']) {
  const dir = mkdtempSync(join(tmpdir(), 'dogu-chatluna-'))
  dirs.push(dir)
  // ChatLuna keeps presets and a temp folder under the app's base directory.
  app.baseDir = dir
  const fork = app.plugin(ChatLuna, {})
  await until(app, () => !!app.get('chatluna'))
  return { fork, platform: (app as any).chatluna.platform as Platform }
}

interface SetupOptions extends ChatAppOptions {
  bridge?: ChatLunaBridgeConfig
}

/**
 * A chat app with Dogu's services and chat approvals, ChatLuna, the bridge, and tools:
 * `lookup` (read), `notes` (write: asks), `whoami` (read: who Dogu sees), `slow` (read,
 * outlives its 1 ms timeout until released), `chart` (an image), `ops_restart` (group `ops`).
 */
async function setup(options: SetupOptions = {}) {
  t = await chatApp(options)
  const { app } = t
  const { fork: chatluna, platform } = await loadChatLuna(app)
  const releases: (() => void)[] = []
  const tools = app.plugin({
    name: 'test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'lookup',
        description: 'Capital of a country',
        args: Schema.object({ q: Schema.string().required().description('Country') }),
        traits: { effect: 'read' },
        run: ({ q }: { q: string }) => (q === 'France' ? 'Paris' : `no capital known for ${q}`),
      }))
      ctx.tools.define(defineTool({
        name: 'notes',
        description: 'Save a note',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'write' },
        run: ({ text }: { text: string }) => `saved ${text}`,
      }))
      ctx.tools.define(defineTool({
        name: 'whoami',
        description: 'Who is calling',
        traits: { effect: 'read' },
        run: (_: unknown, call: ToolCall) => `${call.session.userId} in ${call.session.id}`,
      }))
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'A slow build',
        traits: { effect: 'read', timeout: 1 },
        run: () => new Promise<string>((resolve) => { releases.push(() => resolve('built')) }),
      }))
      ctx.tools.define(defineTool({
        name: 'chart',
        description: 'Draw a chart',
        traits: { effect: 'read' },
        run: () => ({ text: 'a chart', images: [{ mimeType: 'image/png', data: 'iVBORw0KGgo=' }] }),
      }))
      ctx.tools.define(defineTool({
        name: 'ops_restart',
        description: 'Restart a service',
        groups: ['ops'],
        traits: { effect: 'exec' },
        run: () => 'restarted',
      }))
    },
  })
  const bridge = app.plugin({ name: 'dogu-chatluna', inject: ['tools', 'chatluna'], apply: chatlunaBridge }, ChatLunaBridgeConfig(options.bridge ?? {}))
  await until(app, () => Object.keys(platform.getToolRegistry()).length > 0)
  const alice = await sessionOf(app, 'alice', 'room')
  const bob = await sessionOf(app, 'bob', 'room')
  t.passed.length = 0
  /** ChatLuna's instance of a tool, as its agents get it. */
  const tool = (name: string) => platform.getTool(name).createTool({})
  /** A call as ChatLuna's agent makes it: the instance, the arguments, the session in `configurable`. */
  const invoke = (name: string, args: unknown, session?: Session) => tool(name).invoke(args, session ? { configurable: { session } } : {})
  return { ...t, chatluna, platform, tools, bridge, alice, bob, tool, invoke, release: () => releases.splice(0).forEach((release) => release()) }
}

const names = (platform: Platform) => Object.keys(platform.getToolRegistry())

describe('the ChatLuna bridge', () => {
  it('is configured under `chatluna`, described in Chinese and English', () => {
    expect(ChatLunaBridgeConfig({})).toEqual({ enabled: true, include: [], exclude: [], groups: [], mode: 'eager', eager: [], images: false })
    expect(descriptions(ChatLunaBridgeConfig)).toEqual(inBothLanguages(['$', '$.enabled', '$.include', '$.exclude', '$.groups', '$.mode', '$.eager', '$.images']))
    expect(() => ChatLunaBridgeConfig({ mode: 'all' as never })).toThrow(/mode/)
  })

  describe('registration', () => {
    it('puts every selected Dogu tool in ChatLuna\'s registry, with its groups and traits in meta', async () => {
      const { platform } = await setup()
      // Grouped tools are bridged only where their group is enabled; Dogu's task tools come with its background service.
      expect(names(platform)).toEqual(['chart', 'lookup', 'notes', 'slow', 'task_cancel', 'task_status', 'whoami'])
      expect(platform.getToolRegistry().lookup).toEqual({
        name: 'lookup',
        description: 'Capital of a country',
        meta: { source: 'dogu', group: 'dogu', tags: ['effect:read', 'background'] },
      })
      expect(platform.getToolRegistry().notes.meta).toEqual({ source: 'dogu', group: 'dogu', tags: ['effect:write', 'background'] })
    })

    it('follows include, exclude and groups', async () => {
      const { platform } = await setup({ bridge: { include: ['*s*', 'ops_*'], exclude: ['task_*'], groups: ['ops'] } })
      expect(names(platform)).toEqual(['notes', 'ops_restart', 'slow'])
      expect(platform.getToolRegistry().ops_restart.meta).toEqual({ source: 'dogu', group: 'ops', tags: ['ops', 'effect:exec', 'background'] })
    })

    it('keeps in step with ctx.tools: a tool appears when defined, is replaced when redefined, goes with its plugin', async () => {
      const { app, platform, tools, tool } = await setup()
      const extra = app.plugin({
        name: 'extra',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'weather', description: 'Weather of a city', traits: { effect: 'read' }, run: () => 'sunny' }))
        },
      })
      await until(app, () => names(platform).includes('weather'))
      const before = platform.getTool('weather').id
      const first = tool('weather')
      // Redefined by its plugin: ChatLuna gets a new tool, and drops the instance it cached.
      extra.update({ again: true })
      await until(app, () => platform.getTool('weather').id !== before)
      expect(platform.getTool('weather').id).toEqual(expect.any(String))
      expect(tool('weather')).not.toBe(first)
      extra.dispose()
      await t!.settle()
      expect(names(platform)).not.toContain('weather')
      tools.dispose()
      await t!.settle()
      expect(names(platform)).toEqual(['task_cancel', 'task_status'])
    })

    it('names a tool dogu_<name> when ChatLuna already has that name, and says so in the log', async () => {
      t = await chatApp()
      const { app } = t
      const { platform } = await loadChatLuna(app)
      const theirs = { createTool: () => ({ name: 'lookup' }), selector: () => true, description: 'ChatLuna\'s own lookup' }
      platform.registerTool('lookup', theirs)
      platform.registerTool('echo', { ...theirs, description: 'echo' })
      platform.registerTool('dogu_echo', { ...theirs, description: 'dogu_echo' })
      t.guard.expect('[dogu] ChatLuna already has tools "echo" and "dogu_echo": Dogu\'s "echo" is not bridged')
      app.plugin({
        name: 'lookup-tool',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'lookup', description: 'Capital of a country', traits: { effect: 'read' }, run: () => 'Paris' }))
          ctx.tools.define(defineTool({ name: 'echo', description: 'Repeat', traits: { effect: 'read' }, run: () => 'echo' }))
        },
      })
      const bridge = app.plugin({ name: 'dogu-chatluna', inject: ['tools', 'chatluna'], apply: chatlunaBridge }, ChatLunaBridgeConfig({}))
      await until(app, () => names(platform).includes('dogu_lookup'))
      expect(platform.getToolRegistry().lookup.description).toBe('ChatLuna\'s own lookup')
      expect(platform.getTool('dogu_lookup').createTool({}).name).toBe('dogu_lookup')
      expect(logs).toContain('ChatLuna already has a tool "lookup": Dogu\'s is bridged as "dogu_lookup"')
      // Both names taken: not bridged, said once.
      expect(logs.filter((line) => line.includes('"echo"'))).toEqual(['ChatLuna already has tools "echo" and "dogu_echo": Dogu\'s "echo" is not bridged'])
      expect(platform.getToolRegistry().echo.description).toBe('echo')
      // The bridge goes, ChatLuna's own tools stay.
      bridge.dispose()
      await t.settle()
      expect(names(platform)).toEqual(['lookup', 'echo', 'dogu_echo'])
      expect(platform.getToolRegistry().lookup.description).toBe('ChatLuna\'s own lookup')
    })

    it('moves aside when another plugin takes a name it held, and never removes that plugin\'s tool', async () => {
      const { app, platform, bridge } = await setup()
      platform.registerTool('notes', { createTool: () => ({}), selector: () => true, description: 'Someone else\'s notes' })
      await until(app, () => names(platform).includes('dogu_notes'))
      expect(logs).toContain('another plugin registered a ChatLuna tool "notes" in place of Dogu\'s')
      bridge.dispose()
      await t!.settle()
      expect(platform.getToolRegistry()).toEqual({ notes: { name: 'notes', description: 'Someone else\'s notes', meta: undefined } })
    })

    it('takes every registration away with the bridge, and with ChatLuna the bridge itself', async () => {
      const { app, platform, bridge, chatluna, invoke, alice } = await setup()
      const held = platform.getTool('lookup').createTool({})
      bridge.dispose()
      await t!.settle()
      expect(names(platform)).toEqual([])
      // An instance an agent still holds refuses to run.
      expect(await held.invoke({ q: 'France' }, { configurable: { session: alice } })).toBe('status: cancelled\nCancelled: Dogu\'s ChatLuna bridge was unloaded.')
      app.plugin({ name: 'dogu-chatluna', inject: ['tools', 'chatluna'], apply: chatlunaBridge }, ChatLunaBridgeConfig({}))
      await until(app, () => names(platform).includes('lookup'))
      expect(await invoke('lookup', { q: 'France' }, alice)).toBe('Paris')
      // ChatLuna unloaded: the bridge stops with it, and starts again with the next ChatLuna.
      const second = platform.getTool('lookup').createTool({})
      chatluna.dispose()
      await t!.settle()
      expect(app.get('chatluna')).toBeUndefined()
      expect(await second.invoke({ q: 'France' }, { configurable: { session: alice } })).toBe('status: cancelled\nCancelled: Dogu\'s ChatLuna bridge was unloaded.')
      const { platform: next } = await loadChatLuna(app)
      await until(app, () => names(next).includes('lookup'))
      expect(await next.getTool('lookup').createTool({}).invoke({ q: 'France' }, { configurable: { session: alice } })).toBe('Paris')
      expect(t!.errors).toEqual([])
    })

    it('leaves the tools a session may not see out of its agent (ChatLuna\'s authorization), as Dogu\'s visibility says', async () => {
      const { app, platform, alice } = await setup()
      app.plugin({
        name: 'qq-tool',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'qq_poke', description: 'Poke on QQ', visibility: (session) => session.platform === 'qq', run: () => 'poked' }))
        },
      })
      await until(app, () => names(platform).includes('qq_poke'))
      expect(platform.getTool('qq_poke').authorization!(alice)).toBe(false)
      expect(platform.getTool('lookup').authorization).toBeUndefined()
    })
  })

  describe('a call', () => {
    it('of a read tool answers', async () => {
      const { invoke, alice } = await setup()
      expect(await invoke('lookup', { q: 'France' }, alice)).toBe('Paris')
    })

    it('reads its session from config.configurable.session: one cached instance serves every caller', async () => {
      const { tool, alice, bob } = await setup()
      const instance = tool('whoami')
      expect(tool('whoami')).toBe(instance)
      expect(await instance.invoke({}, { configurable: { session: alice } })).toBe('alice in mock:room')
      expect(await instance.invoke({}, { configurable: { session: bob } })).toBe('bob in mock:room')
    })

    it('of a write tool asks in the chat; only the caller\'s answer counts', async () => {
      const { invoke, alice, outbox, client, passed } = await setup()
      const result = invoke('notes', { text: 'hi' }, alice)
      expect((await outbox.next()).text).toBe('[1] 工具 notes 请求批准：notes(text=hi)\n'
        + '原因：没有匹配的规则，写入类工具默认需要批准\n'
        + '要先改参数再允许，回复 e {"text": "hi"}（只写要改的字段，JSON）。\n'
        + '回复 y 允许一次 · s 本会话内允许 · a 总是允许 · n 拒绝（也可回复 允许 / 本会话 / 总是 / 拒绝；同时有多个请求时加上编号，如 y 1）。5 分钟内无人回复即拒绝。')
      expect(await client('bob').receive('y')).toEqual([])
      expect(passed).toEqual(['bob: y'])
      expect(await client('alice').receive('y')).toEqual(['已允许 [1] notes(text=hi)（仅此一次）。'])
      expect(await result).toBe('saved hi')
    })

    it('that is denied returns text the model can read', async () => {
      const { invoke, alice, outbox, client } = await setup()
      const result = invoke('notes', { text: 'hi' }, alice)
      await outbox.next()
      await client('alice').receive('n')
      expect(await result).toBe('status: denied\nPermission denied: mock:alice declined it')
    })

    it('denied by a rule is refused without asking', async () => {
      const { invoke, alice, outbox } = await setup({ permissions: { rules: [{ permission: 'tool:notes', decision: 'deny' }] } })
      expect(await invoke('notes', { text: 'hi' }, alice)).toMatch(/^status: denied\nPermission denied: /)
      expect(outbox.sent).toEqual([])
    })

    it('that outlives its timeout returns its task id', async () => {
      const { app, invoke, alice, release } = await setup()
      const text: string = await invoke('slow', {}, alice)
      const id = /^status: background \(task (task_\w+)\)\n/.exec(text)?.[1]
      expect(id).toEqual(expect.any(String))
      expect(text).toBe(`status: background (task ${id})\nThe call is still running and continues in the background as task ${id}. `
        + `Check it later with task_status({ "id": "${id}" }) or stop it with task_cancel.`)
      release()
      expect(await app.background.wait(id!, { timeout: 5_000 })).toMatchObject({ status: 'succeeded' })
      // The task's row is written after it settles: the test ends (and stops the database) once it is.
      await vi.waitFor(async () => expect(await (app as any).database.get('dogu_task', { id })).toMatchObject([{ status: 'succeeded' }]), { timeout: 5_000 })
    })

    it('with invalid arguments comes back as a readable error naming the bad path', async () => {
      const { invoke, alice } = await setup()
      expect(await invoke('lookup', {}, alice)).toBe('status: error\nInvalid arguments:\n- $.q: missing required property')
      expect(await invoke('lookup', { q: 5 }, alice)).toBe('status: error\nInvalid arguments:\n- $.q: expected a string, got number 5')
    })

    it('with invalid arguments as a tool call gets a ToolMessage, as LangChain answers tool calls', async () => {
      const { tool, alice } = await setup()
      const message = await tool('lookup').invoke({ type: 'tool_call', id: 'call_1', name: 'lookup', args: {} }, { configurable: { session: alice } })
      expect(message.constructor.name).toBe('ToolMessage')
      expect({ content: message.content, id: message.tool_call_id, name: message.name }).toEqual({ content: 'status: error\nInvalid arguments:\n- $.q: missing required property', id: 'call_1', name: 'lookup' })
    })

    it('without a Koishi session does not run, and says why', async () => {
      const { invoke } = await setup()
      expect(await invoke('lookup', { q: 'France' })).toBe('status: error\nError: the call carries no Koishi session (config.configurable.session), so Dogu cannot tell who is calling; it did not run.')
    })

    it('hands images to the model only when `images` is on', async () => {
      const off = await setup()
      expect(await off.invoke('chart', {}, off.alice)).toBe('a chart\n(1 image not shown: image/png)')
      await t!.dispose()
      const on = await setup({ bridge: { images: true } })
      expect(await on.invoke('chart', {}, on.alice)).toEqual([
        { type: 'text', text: 'a chart' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ])
    })
  })

  it('gives each reader its own copy of the schema: ChatLuna\'s adapters edit it in place', async () => {
    const { tool, app } = await setup()
    const instance = tool('lookup')
    const schema = instance.schema
    const exact = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { q: { type: 'string', description: 'Country' } }, required: ['q'] }
    expect(schema).toEqual(exact)
    // What @chatluna/v1-shared-adapter's removeAdditionalProperties does to it, and worse.
    delete schema.$schema
    schema.properties.q.type = 'number'
    expect(instance.schema).toEqual(exact)
    const [lookup] = app.tools.toolset({ session: { id: 's' }, include: ['lookup'] }).definitions('json')
    expect(lookup.parameters).toEqual(instance.schema)
  })

  describe('inside ChatLuna\'s agent', () => {
    // LangChain as ChatLuna loads it (CommonJS): the model below is ChatLuna's kind of model.
    const { BaseChatModel } = require('@langchain/core/language_models/chat_models') as { BaseChatModel: new (fields: object) => object }
    const { AIMessage } = require('@langchain/core/messages')
    const { RunnableLambda } = require('@langchain/core/runnables')

    /** A scripted model: it calls `name` with each of `calls` in turn, then answers with what the last tool said. */
    function scriptedModel(name: string, calls: object[]) {
      const seen: unknown[] = []
      const Model = class extends BaseChatModel {
        _llmType() { return 'scripted' }
        async _generate(messages: any[]) {
          const results = messages.filter((message) => message.getType() === 'tool')
          seen.push(...results.slice(seen.length).map((message) => message.content))
          const message = results.length < calls.length
            ? new AIMessage({ content: '', tool_calls: [{ id: `call_${results.length}`, name, args: calls[results.length], type: 'tool_call' }] })
            : new AIMessage(`done: ${results.at(-1)?.content}`)
          return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
        }
      }
      return { model: new Model({}), seen }
    }

    async function agentFor(name: string, calls: object[]) {
      const { app } = t!
      const { model, seen } = scriptedModel(name, calls)
      const agent = await (app as any).chatluna.createAgent({
        model,
        embeddings: {},
        tools: [name],
        // The conversation so far, then the agent's own steps: what ChatLuna's prompt would render.
        prompt: RunnableLambda.from((input: any) => [input.input, ...input.agent_scratchpad]),
      })
      return { agent, seen }
    }

    it('runs a bridged tool for the session it is given, and reads the result', async () => {
      const { alice } = await setup()
      const { agent, seen } = await agentFor('whoami', [{}])
      const result = await agent.generate({ prompt: 'who am I?', session: alice })
      expect(seen).toEqual(['alice in mock:room'])
      expect(result.output).toBe('done: alice in mock:room')
    })

    it('asks in the chat for a write tool, and the model reads a denial as text', async () => {
      const { alice, outbox, client } = await setup()
      const { agent, seen } = await agentFor('notes', [{ text: 'hi' }])
      const result = agent.generate({ prompt: 'save hi', session: alice })
      await outbox.next()
      await client('alice').receive('n')
      expect((await result).output).toBe('done: status: denied\nPermission denied: mock:alice declined it')
      expect(seen).toEqual(['status: denied\nPermission denied: mock:alice declined it'])
    })

    it('passes the images a tool returns on to the model, when `images` is on', async () => {
      const { alice } = await setup({ bridge: { images: true } })
      const { agent, seen } = await agentFor('chart', [{}])
      await agent.generate({ prompt: 'draw it', session: alice })
      expect(seen).toEqual([[{ type: 'text', text: 'a chart' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }]])
    })

    it('hands the model a readable error for arguments the schema refuses, and the model tries again', async () => {
      const { alice } = await setup()
      const { agent, seen } = await agentFor('lookup', [{ country: 'France' }, { q: 'France' }])
      const result = await agent.generate({ prompt: 'capital of France?', session: alice })
      expect(seen).toEqual(['status: error\nInvalid arguments:\n- $.q: missing required property', 'Paris'])
      expect(result.output).toBe('done: Paris')
    })
  })

  describe('search mode', () => {
    it('bridges tool_search and the dogu_call proxy instead of the tools, besides the pinned ones', async () => {
      const { platform } = await setup({ bridge: { mode: 'search', eager: ['lookup'] } })
      expect(names(platform)).toEqual(['lookup', 'dogu_call', 'tool_search'])
      expect(platform.getToolRegistry().tool_search.description).toBe('Finds tools that are not listed with the others and returns their full '
        + 'definitions (name, description, JSON Schema parameters). Call one of them with dogu_call({ "name": …, "arguments": {…} }). '
        + 'Describe the task in a few words, or give a tool\'s name. 6 tools are available this way: chart, notes, slow, task_cancel, task_status, whoami.')
    })

    it('finds a tool, and calls it through dogu_call under the same permissions', async () => {
      const { invoke, alice, outbox, client } = await setup({ bridge: { mode: 'search' } })
      const found = JSON.parse(await invoke('tool_search', { query: 'save a note', limit: 1 }, alice))
      expect(found).toEqual({ tools: [{ name: 'notes', description: 'Save a note', parameters: expect.objectContaining({ required: ['text'] }) }] })
      const result = invoke('dogu_call', { name: 'notes', arguments: { text: 'hi' } }, alice)
      expect((await outbox.next()).text).toMatch(/^\[1\] 工具 notes 请求批准：notes\(text=hi\)\n/)
      await client('alice').receive('y')
      expect(await result).toBe('saved hi')
      expect(await invoke('dogu_call', { name: 'lookup', arguments: { q: 'France' } }, alice)).toBe('Paris')
      expect(await invoke('dogu_call', { name: 'nope', arguments: {} }, alice)).toMatch(/^status: error\nUnknown tool "nope"\./)
    })

    it('reaches through dogu_call only what the bridge selects and the caller may see', async () => {
      const { app, invoke, alice, outbox } = await setup({ bridge: { mode: 'search', exclude: ['notes'] } })
      app.plugin({
        name: 'qq-tool',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'qq_poke', description: 'Poke on QQ', traits: { effect: 'read' }, visibility: (session) => session.platform === 'qq', run: () => 'poked' }))
        },
      })
      await t!.settle()
      // Excluded, in a group the bridge does not enable, hidden from this session: none of them exists for the model.
      for (const name of ['notes', 'ops_restart', 'qq_poke']) {
        expect(await invoke('dogu_call', { name, arguments: { text: 'hi' } }, alice)).toMatch(new RegExp(`^status: error\\nUnknown tool "${name}"\\.`))
      }
      expect(outbox.sent).toEqual([])
    })

    it('in eager mode still reaches tools defined with mode: \'search\' that way', async () => {
      const { app, platform, invoke, alice } = await setup()
      app.plugin({
        name: 'rare',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'quarterly_report', description: 'The quarterly report', mode: 'search', traits: { effect: 'read' }, run: () => 'Q3: up' }))
        },
      })
      await until(app, () => names(platform).includes('tool_search'))
      expect(names(platform)).not.toContain('quarterly_report')
      expect(await invoke('dogu_call', { name: 'quarterly_report' }, alice)).toBe('Q3: up')
    })
  })

  describe('in the Dogu plugin', () => {
    it('does nothing without ChatLuna, and starts when ChatLuna is loaded', async () => {
      const { app, errors } = await koishiApp({ database: true, dogu: { chatluna: { include: ['weather'] } } })
      app.plugin({
        name: 'weather',
        inject: ['tools'],
        apply: (ctx: Context) => {
          ctx.tools.define(defineTool({ name: 'weather', description: 'Weather', traits: { effect: 'read' }, run: () => 'sunny' }))
        },
      })
      await app.lifecycle.flush()
      expect(app.get('chatluna')).toBeUndefined()
      const { platform, fork } = await loadChatLuna(app as unknown as ChatApp['app'])
      await until(app as unknown as ChatApp['app'], () => names(platform).length > 0)
      expect(names(platform)).toEqual(['weather'])
      fork.dispose()
      await app.lifecycle.flush()
      expect(errors).toEqual([])
    })

    it('fills the chatluna section of its config', () => {
      expect(Dogu.Config({}).chatluna).toEqual({ enabled: true, include: [], exclude: [], groups: [], mode: 'eager', eager: [], images: false })
    })
  })
})

describe('chatlunaContent', () => {
  const base = { id: 'c1', name: 'x', durationMs: 3 }

  it.each([
    [{ ...base, status: 'ok', content: 'fine' }, 'fine'],
    [{ ...base, status: 'error', content: 'Error: boom' }, 'status: error\nError: boom'],
    [{ ...base, status: 'timed_out', content: 'Timed out: timed out after 1s.' }, 'status: timed_out\nTimed out: timed out after 1s.'],
    [{ ...base, status: 'cancelled', content: 'Cancelled: stop.' }, 'status: cancelled\nCancelled: stop.'],
    [{ ...base, status: 'background', content: 'still running', taskId: 'task_1' }, 'status: background (task task_1)\nstill running'],
  ] as const)('says the status plainly: %j', (result, text) => {
    expect(chatlunaContent(result, false)).toBe(text)
  })

  it('lists images as parts, or names them', () => {
    const result = { ...base, status: 'ok' as const, content: '', images: [{ mimeType: 'image/png', data: 'AA' }, { mimeType: 'image/jpeg', data: 'BB' }] }
    expect(chatlunaContent(result, false)).toBe('(2 images not shown: image/png, image/jpeg)')
    expect(chatlunaContent(result, true)).toEqual([
      { type: 'text', text: '(2 images)' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BB' } },
    ])
  })
})
