// @dogu/frameworks/langchain against the real @langchain/core and @langchain/langgraph: a
// scripted chat model in LangGraph's agent loop (ToolNode), its prompts read as the model
// would read them, the tools' run counters and Dogu's audit log.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BackgroundEngine, defineTool } from '@dogu/core'
import { ProcessTable, createShellTool } from '@dogu/shell'
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base'
import { ToolMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { Command, MemorySaver } from '@langchain/langgraph'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { type ApprovalInterrupt, FrameworkVersionError, isApprovalInterrupt, LANGCHAIN_TESTED, langchainTools } from '../src/langchain'
import { assertTestedVersion } from '../src/common/tested-range'
import { agentGraph } from './langchain/agent-graph'
import { doguSetup } from './langchain/dogu-setup'
import { ScriptedChatModel, type Turn } from './langchain/scripted-chat-model'

const ASK = { role: 'user', content: 'go' } as const
const thread = (id: string) => ({ configurable: { thread_id: id } })

/** Dogu's tools in the agent loop, with a checkpointer so that a question can pause the graph. */
function agent(turns: Turn[], setup = doguSetup(), options?: Parameters<typeof langchainTools>[1]) {
  const model = new ScriptedChatModel(turns)
  const tools = langchainTools(setup.toolset, options)
  const graph = agentGraph(model, tools, new MemorySaver())
  return { ...setup, model, tools, graph }
}

/** The questions a paused graph carries. */
/** A graph's state as `invoke` returns it when it paused: LangGraph adds `__interrupt__`, which its state type does not name. */
type Paused = { __interrupt__?: { value?: unknown }[] }

function questions(state: object): ApprovalInterrupt[] {
  return ((state as Paused).__interrupt__ ?? []).map((pending) => pending.value).filter(isApprovalInterrupt)
}

describe('langchainTools: the tools', () => {
  it('gives one StructuredTool per Dogu tool, named as it, and the model is sent Dogu\'s JSON Schema', async () => {
    const { toolset, tools, model, graph } = agent([{ text: 'nothing to do' }])
    expect(tools.map((t) => t.name)).toEqual(toolset.names)
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect(model.definitions).toEqual(toolset.definitions('json').map(({ name, description, parameters }) => ({ type: 'function', function: { name, description, parameters } })))
    // Plain JSON Schema states every Dogu schema exactly: nothing is listed as loosened.
    expect(tools.map((t) => [t.name, t.loosened])).toEqual(toolset.names.map((name) => [name, toolset.loosened('json')[name] ?? []]))
  })

  it('runs an allowed read once; the model reads its text in a ToolMessage, and the call is audited', async () => {
    const { graph, model, runs, audit } = agent([{ calls: [{ id: 'r1', name: 'read_file', args: { path: 'a.txt' } }] }, { text: 'read it' }])
    const state = await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect(state.messages.at(-1)!.content).toBe('read it')
    expect(model.toolResults()).toEqual(new Map([['r1', { content: 'contents of a.txt', status: 'success' }]]))
    expect(runs.read_file).toBe(1)
    expect(await audit.query()).toMatchObject([{ callId: 'r1', tool: 'read_file', outcome: 'ok', caller: { sessionId: 't1' }, decided: { kind: 'default', effect: 'read' } }])
  })

  it('keeps LangChain\'s callbacks: a handler sees the tool start and end', async () => {
    const { tools } = agent([])
    const seen: string[] = []
    const handler: Partial<BaseCallbackHandler> = {
      handleToolStart: async (_tool, input) => { seen.push(`start ${input}`) },
      handleToolEnd: async (output) => { seen.push(`end ${(output as ToolMessage).content}`) },
    }
    const read = tools.find((t) => t.name === 'read_file')!
    await read.invoke({ id: 'r1', name: 'read_file', args: { path: 'a.txt' }, type: 'tool_call' }, { callbacks: [handler as BaseCallbackHandler] })
    expect(seen).toEqual(['start {"path":"a.txt"}', 'end contents of a.txt'])
  })
})

describe('langchainTools: approvals through LangGraph\'s interrupt()', () => {
  it('pauses the graph with Dogu\'s question; approved on resume, the call runs once, audited via langchain', async () => {
    const { graph, model, runs, audit } = agent([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'deployed' }])
    const paused = await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect(questions(paused)).toEqual([{
      type: 'dogu/approval', callId: 'd1', tool: 'deploy', summary: 'deploy(env=prod) — tool:deploy', args: { env: 'prod' },
      permission: { name: 'tool:deploy' }, reason: 'rule (tool:deploy) from config.rules[0] asks for it', session: 't1',
    }])
    expect(runs.deploy).toBe(0)
    const done = await graph.invoke(new Command({ resume: { approved: true } }), thread('t1'))
    expect(done.messages.at(-1)!.content).toBe('deployed')
    expect(model.toolResults()).toEqual(new Map([['d1', { content: 'deployed to prod', status: 'success' }]]))
    expect(runs.deploy).toBe(1)
    expect(await audit.query()).toMatchObject([{ callId: 'd1', outcome: 'ok', decided: { kind: 'rule', decision: 'ask' }, ask: { ended: 'answer', decision: 'allow', by: { id: 'alice' }, via: 'langchain', scope: 'once' } }])
  })

  it('rejected on resume, nothing runs and the model reads the denial with the reason', async () => {
    const { graph, model, runs, audit } = agent([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'not deployed' }])
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    await graph.invoke(new Command({ resume: { approved: false, reason: 'not on a Friday' } }), thread('t1'))
    expect(model.toolResults()).toEqual(new Map([['d1', { content: 'Permission denied: alice declined it: not on a Friday', status: 'error' }]]))
    expect(runs.deploy).toBe(0)
    expect(await audit.query()).toMatchObject([{ callId: 'd1', outcome: 'denied', ask: { ended: 'answer', decision: 'deny', via: 'langchain' } }])
  })

  it('a deny rule stops the call before any question: the graph never pauses', async () => {
    const { graph, model, runs, audit } = agent([{ calls: [{ id: 'w1', name: 'wipe', args: {} }] }, { text: 'refused' }])
    const state = await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect((state as Paused).__interrupt__).toBeUndefined()
    expect(model.toolResults()).toEqual(new Map([['w1', { content: 'Permission denied: rule (tool:wipe) from config.rules[1] denies it', status: 'error' }]]))
    expect(runs.wipe).toBe(0)
    expect(await audit.query()).toMatchObject([{ callId: 'w1', outcome: 'denied', decided: { kind: 'rule', decision: 'deny', permission: 'tool:wipe' } }])
  })

  it('a rule added while the graph waits wins over the approval given on resume', async () => {
    const { graph, model, runs, engine } = agent([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'refused' }])
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    engine.addRule({ permission: 'tool:deploy', decision: 'deny', name: 'freeze' })
    await graph.invoke(new Command({ resume: { approved: true } }), thread('t1'))
    expect(model.toolResults().get('d1')).toEqual({ content: 'Permission denied: rule "freeze" from addRule() denies it', status: 'error' })
    expect(runs.deploy).toBe(0)
  })

  it('the other calls of the node that asked run once, though LangGraph runs the node again on resume', async () => {
    const { graph, model, runs, audit } = agent([
      { calls: [{ id: 'r1', name: 'read_file', args: { path: 'a.txt' } }, { id: 'd1', name: 'deploy', args: { env: 'prod' } }, { id: 'd2', name: 'deploy', args: { env: 'staging' } }] },
      { text: 'done' },
    ])
    expect(questions(await graph.invoke({ messages: [ASK] }, thread('t1'))).map((q) => q.callId)).toEqual(['d1'])
    expect(questions(await graph.invoke(new Command({ resume: { approved: true } }), thread('t1'))).map((q) => q.callId)).toEqual(['d2'])
    expect(await graph.invoke(new Command({ resume: { approved: false } }), thread('t1'))).not.toHaveProperty('__interrupt__')
    expect(runs).toMatchObject({ read_file: 1, deploy: 1 })
    expect(model.toolResults()).toEqual(new Map([
      ['r1', { content: 'contents of a.txt', status: 'success' }],
      ['d1', { content: 'deployed to prod', status: 'success' }],
      ['d2', { content: 'Permission denied: alice declined it', status: 'error' }],
    ]))
    expect((await audit.query()).map((record) => [record.callId, record.outcome]).sort()).toEqual([['d1', 'ok'], ['d2', 'denied'], ['r1', 'ok']])
  })

  it('the thread is the Dogu session: an approval for the session is remembered in its thread, and asked again in another', async () => {
    const turns = (id: string): Turn[] => [{ calls: [{ id, name: 'deploy', args: { env: 'prod' } }] }, { text: 'deployed' }]
    const setup = doguSetup()
    const first = agent([...turns('d1'), ...turns('d2')], setup)
    await first.graph.invoke({ messages: [ASK] }, thread('t1'))
    await first.graph.invoke(new Command({ resume: { approved: true, scope: 'session' } }), thread('t1'))
    // The same thread, a later turn: the grant answers, no question.
    expect(await first.graph.invoke({ messages: [ASK] }, thread('t1'))).not.toHaveProperty('__interrupt__')
    expect(setup.runs.deploy).toBe(2)
    // Another thread, on the same tools: asked again.
    const second = agent(turns('d3'), setup)
    expect(questions(await second.graph.invoke({ messages: [ASK] }, thread('t2')))).toMatchObject([{ callId: 'd3', session: 't2' }])
    expect(setup.runs.deploy).toBe(2)
    expect(await setup.audit.query({ tool: 'deploy' })).toMatchObject([
      { callId: 'd2', caller: { sessionId: 't1' }, decided: { kind: 'grant', scope: 'session', by: 'alice' } },
      { callId: 'd1', caller: { sessionId: 't1' }, ask: { decision: 'allow', scope: 'session', via: 'langchain' } },
    ])
  })

  it('options: `session` names the Dogu session from the config, `approver` who approves and for how long', async () => {
    const setup = doguSetup()
    const { graph, audit } = agent([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'deployed' }], setup, {
      session: (config) => `user:${config.configurable?.user}`,
      approver: (callId) => ({ by: { id: `ops-for-${callId}`, authority: 4 }, scope: 'session' }),
    })
    const config = { configurable: { thread_id: 't1', user: 'bob' } }
    expect(questions(await graph.invoke({ messages: [ASK] }, config))).toMatchObject([{ session: 'user:bob' }])
    await graph.invoke(new Command({ resume: { approved: true } }), config)
    expect(await audit.query()).toMatchObject([{ callId: 'd1', outcome: 'ok', caller: { sessionId: 'user:bob' }, ask: { by: { id: 'ops-for-d1', authority: 4 }, scope: 'session' } }])
  })

  it('a resume that is no ApprovalResume is refused as the app\'s mistake, and nothing runs', async () => {
    const { graph, model, runs } = agent([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'hm' }])
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    await graph.invoke(new Command({ resume: 'yes' }), thread('t1'))
    expect(model.toolResults().get('d1')).toMatchObject({ status: 'error', content: expect.stringContaining('resume a Dogu approval with new Command({ resume: { approved: boolean') })
    expect(runs.deploy).toBe(0)
  })
})

describe('langchainTools: what the model reads', () => {
  it('images reach the model as content blocks beside Dogu\'s text', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const setup = doguSetup()
    setup.registry.define(defineTool({ name: 'chart', description: 'Draw a chart', traits: { effect: 'read' }, run: () => ({ text: 'the chart', images: [{ mimeType: 'image/png', data: png }] }) }))
    const { graph, model } = agent([{ calls: [{ id: 'c1', name: 'chart', args: {} }] }, { text: 'here' }], { ...setup, toolset: setup.registry.toolset({ session: { id: 'base', userId: 'alice' } }) })
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect(model.toolResults().get('c1')).toEqual({ content: [{ type: 'text', text: 'the chart' }, { type: 'image', mimeType: 'image/png', data: png }], status: 'success' })
  })

  it('a call handed to the background tells the model its task id; it did not fail, so the message is no error', async () => {
    let release!: (value: string) => void
    const setup = doguSetup()
    setup.registry.define(defineTool({ name: 'slow', description: 'Takes long', traits: { effect: 'read' }, run: () => new Promise<string>((resolve) => { release = resolve }) }))
    const background = new BackgroundEngine({ onSettled: (task) => setup.audit.onTaskSettled(task) })
    await background.load()
    setup.registry.background = background
    try {
      const toolset = setup.registry.toolset({ session: { id: 'base', userId: 'alice' }, backgroundAtStart: true })
      const { graph, model } = agent([{ calls: [{ id: 's1', name: 'slow', args: {} }] }, { text: 'it runs' }], { ...setup, toolset })
      const state = await graph.invoke({ messages: [ASK] }, thread('t1'))
      const message = state.messages.find((m: { getType(): string }) => m.getType() === 'tool') as ToolMessage
      expect(message.artifact).toMatchObject({ status: 'background', code: 'background', taskId: expect.any(String) })
      expect(model.toolResults().get('s1')).toEqual({ content: message.artifact.content, status: 'success' })
      expect(message.artifact.content).toContain(message.artifact.taskId)
      release('done')
    } finally {
      await background.dispose()
    }
  })

  it('every call has one audit record, though LangGraph runs the node again on resume: allowed, approved, denied by a rule, refused arguments', async () => {
    const { graph, audit } = agent([
      { calls: [{ id: 'c1', name: 'read_file', args: { path: 'a.txt' } }, { id: 'c2', name: 'deploy', args: { env: 'prod' } }, { id: 'c3', name: 'wipe', args: {} }, { id: 'c4', name: 'add_one', args: { n: 'x' } }] },
      { text: 'done' },
    ])
    await graph.invoke({ messages: [ASK] }, thread('t1'))
    await graph.invoke(new Command({ resume: { approved: true } }), thread('t1'))
    const records = (await audit.query()).sort((a, b) => a.callId.localeCompare(b.callId))
    expect(records.map((record) => [record.callId, record.tool, record.outcome, record.code, record.caller.sessionId, record.ask?.via])).toEqual([
      ['c1', 'read_file', 'ok', undefined, 't1', undefined],
      ['c2', 'deploy', 'ok', undefined, 't1', 'langchain'],
      ['c3', 'wipe', 'denied', 'permission_denied', 't1', undefined],
      ['c4', 'add_one', 'error', 'invalid_arguments', 't1', undefined],
    ])
  })
})

describe('langchainTools: where no graph can pause', () => {
  it('a direct call that needs approval is Dogu\'s denial saying nobody could be asked, and how to ask', async () => {
    const { tools, runs, audit } = agent([])
    const deploy = tools.find((t) => t.name === 'deploy')!
    const message = await deploy.invoke({ id: 'd1', name: 'deploy', args: { env: 'prod' }, type: 'tool_call' }) as ToolMessage
    expect(message).toBeInstanceOf(ToolMessage)
    expect(message.status).toBe('error')
    expect(message.content).toBe('Permission denied: it needs a person\'s approval (rule (tool:deploy) from config.rules[0] asks for it), but no asker is registered to ask anyone: '
      + 'register one with ctx.permissions.asker(...) (see docs/permissions.md); or run the tool inside a LangGraph graph compiled with a checkpointer, where @dogu/frameworks/langchain asks through interrupt()')
    expect(runs.deploy).toBe(0)
    expect(await audit.query()).toMatchObject([{ callId: 'd1', outcome: 'denied', ask: { ended: 'no-asker' } }])
  })

  it('with Dogu askers registered, Dogu asks them instead', async () => {
    const setup = doguSetup()
    setup.engine.addAsker(() => ({ decision: 'allow', by: 'alice', via: 'console' }))
    const deploy = agent([], setup).tools.find((t) => t.name === 'deploy')!
    expect(await deploy.invoke({ env: 'prod' })).toBe('deployed to prod')
    expect(setup.runs.deploy).toBe(1)
    expect(await setup.audit.query()).toMatchObject([{ outcome: 'ok', ask: { ended: 'answer', via: 'console' } }])
  })

  it('a graph compiled without a checkpointer cannot interrupt: the same denial, and the graph goes on', async () => {
    const setup = doguSetup()
    const model = new ScriptedChatModel([{ calls: [{ id: 'd1', name: 'deploy', args: { env: 'prod' } }] }, { text: 'could not' }])
    const graph = agentGraph(model, langchainTools(setup.toolset))
    const state = await graph.invoke({ messages: [ASK] })
    expect(state.messages.at(-1)!.content).toBe('could not')
    expect(model.toolResults().get('d1')).toMatchObject({ status: 'error', content: expect.stringContaining('no asker is registered to ask anyone') })
    expect(setup.runs.deploy).toBe(0)
  })
})

describe('langchainTools: arguments', () => {
  it('a wrong type is Dogu\'s invalid_arguments with its path, where LangChain\'s own check would have refused first', async () => {
    const setup = doguSetup()
    const { graph, model, runs, audit } = agent([{ calls: [{ id: 'a1', name: 'add_one', args: { n: 'five' } }] }, { text: 'oops' }], setup)
    const state = await graph.invoke({ messages: [ASK] }, thread('t1'))
    expect(model.toolResults()).toEqual(new Map([['a1', { content: 'Invalid arguments:\n- $.n: expected a number, got string "five"', status: 'error' }]]))
    const message = state.messages.find((m: { getType(): string }) => m.getType() === 'tool') as ToolMessage
    expect(message.artifact).toMatchObject({ status: 'error', code: 'invalid_arguments', paths: ['$.n'] })
    expect(runs.add_one).toBe(0)
    expect(await audit.query()).toMatchObject([{ callId: 'a1', outcome: 'error', code: 'invalid_arguments' }])

    // The same schema on LangChain's own tool(): its check answers, and Dogu never sees the call.
    const [definition] = setup.toolset.definitionsOf(['add_one'], 'json')
    const plain = tool(({ n }: { n: number }) => String(n + 1), { name: 'add_one', description: definition!.description, schema: structuredClone(definition!.parameters) as never })
    const alone = new ScriptedChatModel([{ calls: [{ id: 'a1', name: 'add_one', args: { n: 'five' } }] }, { text: 'oops' }])
    await agentGraph(alone, [plain]).invoke({ messages: [ASK] })
    expect(alone.toolResults().get('a1')).toEqual({ content: 'Error: Received tool input did not match expected schema\n Please fix your mistakes.', status: 'error' })
  })

  it('arguments a model integration hands over as JSON text are repaired by Dogu', async () => {
    const { tools, runs } = agent([])
    const read = tools.find((t) => t.name === 'read_file')!
    const message = await read.invoke({ id: 'r1', name: 'read_file', args: '{"path": "a.txt",}' as never, type: 'tool_call' }) as ToolMessage
    expect(message.content).toBe('Note: your arguments were not valid JSON; they were repaired (trailing-comma) before the call ran. Send strict JSON.\n\ncontents of a.txt')
    expect(runs.read_file).toBe(1)
  })
})

describe('langchainTools: cancellation and the sandbox', () => {
  it('the graph\'s abort signal reaches the handler\'s call.signal, and the call is audited cancelled', async () => {
    const { graph, signals, waiting, audit } = agent([{ calls: [{ id: 'w1', name: 'wait', args: {} }] }, { text: 'never' }])
    const controller = new AbortController()
    const run = graph.invoke({ messages: [ASK] }, { ...thread('t1'), signal: controller.signal })
    await waiting
    controller.abort()
    await expect(run).rejects.toThrow(/abort/i)
    expect(signals.map((signal) => signal.aborted)).toEqual([true])
    await vi.waitFor(async () => expect(await audit.query()).toMatchObject([{ callId: 'w1', outcome: 'cancelled' }]))
  })

  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-langchain-')))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('a bash call runs in the OS sandbox: writes land in the workspace only', async () => {
    const workspace = join(root, 'workspace')
    mkdirSync(workspace)
    const processes = new ProcessTable()
    const setup = doguSetup([{ permission: 'shell', sandboxed: true, decision: 'allow' }])
    setup.registry.define(createShellTool({ workspace, processes, sandbox: {} }))
    try {
      const { graph, model, audit } = agent([{ calls: [{ id: 'b1', name: 'bash', args: { command: `echo in > made.txt; echo out > ${root}/outside.txt; touch /etc/dogu-langchain-test` } }] }, { text: 'ran' }], {
        ...setup, toolset: setup.registry.toolset({ session: { id: 'base', userId: 'alice' } }),
      })
      const state = await graph.invoke({ messages: [ASK] }, thread('t1'))
      const message = state.messages.find((m: { getType(): string }) => m.getType() === 'tool') as ToolMessage
      expect(message.artifact).toMatchObject({ status: 'ok', data: { sandbox: 'full', exitCode: 1 } })
      expect(model.toolResults().get('b1')!.content).toMatch(/Read-only file system/)
      expect(readFileSync(join(workspace, 'made.txt'), 'utf8')).toBe('in\n')
      expect(existsSync(join(root, 'outside.txt')) || existsSync('/etc/dogu-langchain-test')).toBe(false)
      expect(await audit.query()).toMatchObject([{ callId: 'b1', tool: 'bash', outcome: 'ok', decided: { kind: 'rule', decision: 'allow' } }])
    } finally {
      await processes.dispose()
    }
  })
})

describe('@dogu/frameworks/langchain: the installed frameworks', () => {
  const fake = mkdtempSync(join(tmpdir(), 'dogu-langchain-version-'))
  afterAll(() => rmSync(fake, { recursive: true, force: true }))
  afterEach(() => {
    vi.doUnmock('@langchain/langgraph')
    vi.resetModules()
  })

  it('accepts the @langchain/core it was tested with, and names the range for one outside it', () => {
    expect(LANGCHAIN_TESTED).toEqual({ packageName: '@langchain/core', min: '1.0.0', below: '2.0.0' })
    expect(assertTestedVersion('langchain', LANGCHAIN_TESTED, import.meta.url)).toBe('1.5.0')
    const folder = join(fake, 'node_modules/@langchain/core')
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: '@langchain/core', version: '0.3.80', exports: { '.': './index.js', './package.json': './package.json' } }))
    writeFileSync(join(folder, 'index.js'), '')
    const from = pathToFileURL(join(fake, 'app.js')).href
    expect(() => assertTestedVersion('langchain', LANGCHAIN_TESTED, from)).toThrow(FrameworkVersionError)
    expect(() => assertTestedVersion('langchain', LANGCHAIN_TESTED, from)).toThrow('@dogu/frameworks/langchain is tested with @langchain/core >=1.0.0 <2.0.0; 0.3.80 is installed. Install a version in that range, or a @dogu/frameworks release tested with 0.3.80')
  })

  it('works without @langchain/langgraph installed, outside graphs: it never loads it there', async () => {
    let loads = 0
    vi.resetModules()
    vi.doMock('@langchain/langgraph', () => {
      loads++
      throw new Error('Cannot find package \'@langchain/langgraph\'')
    })
    const entry = await import('../src/langchain')
    const setup = doguSetup()
    const tools = entry.langchainTools(setup.toolset)
    expect(await tools.find((t) => t.name === 'read_file')!.invoke({ path: 'a.txt' })).toBe('contents of a.txt')
    expect(await tools.find((t) => t.name === 'deploy')!.invoke({ env: 'prod' })).toMatch(/^Permission denied: it needs a person's approval/)
    expect(setup.runs).toMatchObject({ read_file: 1, deploy: 0 })
    expect(loads).toBe(0)
    // The stand-in for a missing LangGraph is in place: an import of it fails.
    await expect(import('@langchain/langgraph')).rejects.toThrow()
    expect(loads).toBe(1)
  })
})
