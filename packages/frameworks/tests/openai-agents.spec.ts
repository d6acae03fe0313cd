// @dogu/frameworks/openai-agents against the real @openai/agents 0.20, its model the SDK's
// ScriptedModel: what the model is told (its next request), what the tools did (their run
// counter) and what the audit log holds.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { BackgroundEngine, defineTool } from '@dogu/core'
import { createShellTool, ProcessTable } from '@dogu/shell'
import { type RunItem, run } from '@openai/agents'
import { assistantMessage, functionCall } from '@openai/agents/testing'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { agentsRejectionFormatter } from '../src/openai-agents'
import { bundle } from './openai-agents/bundle'
import { type DoguSetup, doguSetup, scriptedAgent, session, toolOutputs } from './openai-agents/dogu-setup'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function setup(...args: Parameters<typeof doguSetup>) {
  const dogu = doguSetup(...args)
  cleanups.push(() => dogu.stop())
  return dogu
}

/** The audit records, in the order of their call ids (the log lists the newest first). */
async function records(dogu: DoguSetup) {
  await dogu.audit.flush()
  return (await dogu.audit.query()).sort((a, b) => a.callId.localeCompare(b.callId))
}

/** The output item of a call in a run's new items: what the SDK recorded, with Dogu's outcome as `customData.dogu`. */
function outputOf(items: RunItem[], callId: string) {
  const item = items.find((item) => item.type === 'tool_call_output_item' && (item.rawItem as { callId?: string }).callId === callId)
  return item as (RunItem & { output: unknown; customData?: { dogu: Record<string, unknown> } }) | undefined
}

function scratchDir(prefix: string, under = tmpdir()): string {
  mkdirSync(under, { recursive: true })
  const dir = realpathSync(mkdtempSync(join(under, prefix)))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function node(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, args, { timeout: 20_000 }, (error, stdout, stderr) => done({ code: error ? (error as { code?: number }).code ?? null : 0, stdout, stderr }))
  })
}

describe('agentsTools: the toolset as FunctionTools', () => {
  it('gives one FunctionTool per Dogu tool, named as it is, with its openai definition: strict where strict mode can state the schema', async () => {
    const dogu = setup({ tools: [defineTool({ name: 'tag', description: 'Tag a note', args: Schema.object({ labels: Schema.dict(String) }), traits: { effect: 'write' }, run: () => 'tagged' })] })
    const { tools, model, agent } = scriptedAgent(dogu, [[assistantMessage('nothing to do')]])
    const toolset = dogu.registry.toolset({ session })
    expect(tools.map((tool) => tool.name)).toEqual(toolset.names)
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.strict]))).toEqual({ lookup: true, 'save-note': true, wait: true, tag: false })
    expect(tools.map((tool) => tool.parameters)).toEqual(toolset.definitions('openai').map((definition) => definition.function.parameters))
    // What strict mode cannot say (a dict) is listed; Dogu still checks the exact rule.
    expect(Object.keys(toolset.loosened('openai'))).toEqual(['tag'])
    await run(agent, 'hello')
    expect(model.calls[0]!.request.tools.map((tool) => [tool.name, (tool as { strict?: boolean }).strict])).toEqual(tools.map((tool) => [tool.name, tool.strict]))
  })

  it('runs an allowed read through Dogu: the model reads its text, the app its outcome, the audit log its record', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [
      // `limit: null` is how strict mode leaves an optional field out.
      [functionCall('lookup', { q: 'dogu', limit: null }, { callId: 'c1' })],
      [assistantMessage('done')],
    ])
    const result = await run(agent, 'look it up')
    expect(result.interruptions).toEqual([])
    expect(result.finalOutput).toBe('done')
    expect(dogu.runs).toEqual(['lookup dogu'])
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'found dogu' })
    expect(outputOf(result.newItems, 'c1')?.customData).toEqual({ dogu: { status: 'ok' } })
    expect(await records(dogu)).toMatchObject([{ tool: 'lookup', callId: 'c1', outcome: 'ok', args: { q: 'dogu' }, caller: { sessionId: 'thread-1' } }])
  })
})

describe('approvals: Dogu\'s questions are the run\'s interruptions', () => {
  it('an ask interrupts the run; state.approve runs the call once, authorized again with the SDK user\'s yes', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [
      [functionCall('save-note', { text: 'hi' }, { callId: 'c1' })],
      [assistantMessage('saved')],
    ])
    let result = await run(agent, 'save hi')
    expect(result.interruptions.map((item) => [item.name, item.arguments])).toEqual([['save-note', '{"text":"hi"}']])
    expect(dogu.runs).toEqual([])
    result.state.approve(result.interruptions[0]!)
    result = await run(agent, result.state)
    expect(result.finalOutput).toBe('saved')
    expect(dogu.runs).toEqual(['save hi'])
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'saved hi' })
    expect(await records(dogu)).toMatchObject([{ tool: 'save-note', callId: 'c1', outcome: 'ok', ask: { ended: 'answer', decision: 'allow', by: { id: 'alice' }, via: 'openai-agents', scope: 'once' } }])
    // A yes for one call is remembered nowhere.
    expect(dogu.engine.grants()).toEqual([])
  })

  it('a rejection gives the model a denial: in Dogu\'s words with agentsRejectionFormatter, the rejecter\'s message when given', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [
      [functionCall('save-note', { text: 'a' }, { callId: 'c1' }), functionCall('save-note', { text: 'b' }, { callId: 'c2' })],
      [assistantMessage('not saved')],
    ])
    let result = await run(agent, 'save two')
    const [first, second] = result.interruptions
    result.state.reject(first!)
    result.state.reject(second!, { message: 'not today' })
    result = await run(agent, result.state, { toolErrorFormatter: agentsRejectionFormatter(dogu.registry.toolset({ session })) })
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'Permission denied: alice declined it', c2: 'not today' })
    expect(dogu.runs).toEqual([])
    // The formatter gives Dogu the plain rejection as the call's answer; the SDK does not ask it about c2.
    expect(await records(dogu)).toMatchObject([{ tool: 'save-note', callId: 'c1', outcome: 'denied', ask: { ended: 'answer', decision: 'deny', by: { id: 'alice' }, via: 'openai-agents' } }])
  })

  it('without the formatter the model reads the SDK\'s own rejection text', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [[functionCall('save-note', { text: 'a' }, { callId: 'c1' })], [assistantMessage('not saved')]])
    let result = await run(agent, 'save')
    result.state.reject(result.interruptions[0]!)
    result = await run(agent, result.state)
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'Tool execution was not approved.' })
    expect(dogu.runs).toEqual([])
  })

  it('a deny rule stops the call before the SDK asks anyone: no interruption, and the model reads Dogu\'s denial', async () => {
    const dogu = setup({ rules: [{ permission: 'tool:save-note', decision: 'deny', name: 'read-only bot' }] })
    const { agent, model } = scriptedAgent(dogu, [[functionCall('save-note', { text: 'hi' }, { callId: 'c1' })], [assistantMessage('refused')]])
    const result = await run(agent, 'save hi')
    expect(result.interruptions).toEqual([])
    expect(dogu.runs).toEqual([])
    const told = toolOutputs(model.calls[1]!.request)
    expect(told.c1).toMatch(/^Permission denied: .*read-only bot/)
    expect(outputOf(result.newItems, 'c1')?.customData?.dogu).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(await records(dogu)).toMatchObject([{ tool: 'save-note', callId: 'c1', outcome: 'denied', decided: { kind: 'rule', decision: 'deny', name: 'read-only bot' } }])
  })

  it('alwaysApprove is a session grant: that thread\'s next run is not asked, another thread is', async () => {
    const dogu = setup()
    const { agent } = scriptedAgent(dogu, [
      [functionCall('save-note', { text: 'a' }, { callId: 'c1' })],
      [assistantMessage('saved a')],
      [functionCall('save-note', { text: 'b' }, { callId: 'c2' })],
      [assistantMessage('saved b')],
      [functionCall('save-note', { text: 'c' }, { callId: 'c3' })],
    ])
    let result = await run(agent, 'save a', { context: { sessionId: 'thread-a' } })
    result.state.approve(result.interruptions[0]!, { alwaysApprove: true })
    result = await run(agent, result.state)
    expect(dogu.engine.grants()).toMatchObject([{ scope: 'session', subject: { sessionId: 'thread-a' }, tool: 'save-note' }])
    result = await run(agent, 'save b', { context: { sessionId: 'thread-a' } })
    expect(result.interruptions).toEqual([])
    result = await run(agent, 'save c', { context: { sessionId: 'thread-b' } })
    expect(result.interruptions.map((item) => item.name)).toEqual(['save-note'])
    expect(dogu.runs).toEqual(['save a', 'save b'])
    expect(await records(dogu)).toMatchObject([
      { callId: 'c1', caller: { sessionId: 'thread-a' }, ask: { via: 'openai-agents', scope: 'session' } },
      { callId: 'c2', caller: { sessionId: 'thread-a' }, decided: { kind: 'grant', scope: 'session' } },
    ])
  })

  it('the approver option says for how long a yes holds, and the session option names the run\'s session', async () => {
    const dogu = setup()
    const { agent } = scriptedAgent(dogu, [[functionCall('save-note', { text: 'a' }, { callId: 'c1' })], [assistantMessage('saved')]], {
      approver: { scope: 'always' },
      session: (runContext) => runContext.context.room,
    })
    let result = await run(agent, 'save', { context: { room: 'room-7' } })
    result.state.approve(result.interruptions[0]!)
    result = await run(agent, result.state)
    expect(dogu.engine.grants()).toMatchObject([{ scope: 'always' }])
    expect(await records(dogu)).toMatchObject([{ callId: 'c1', caller: { sessionId: 'room-7' }, ask: { scope: 'always', by: { id: 'alice' } } }])
  })
})

describe('the sandbox', () => {
  it('an approved bash call runs in the OS sandbox: its write outside the workspace does not land', async () => {
    const root = scratchDir('dogu-agents-sandbox-')
    const workspace = join(root, 'workspace')
    const outside = join(root, 'outside')
    mkdirSync(workspace)
    mkdirSync(outside)
    const processes = new ProcessTable()
    cleanups.push(() => processes.dispose())
    const dogu = setup({ tools: [createShellTool({ workspace, processes, sandbox: {} })] })
    const command = `echo escaped > ${outside}/escape.txt`
    const { agent } = scriptedAgent(dogu, [[functionCall('bash', { command }, { callId: 'b1' })], [assistantMessage('done')]])
    let result = await run(agent, 'write outside')
    expect(result.interruptions.map((item) => item.name)).toEqual(['bash'])
    result.state.approve(result.interruptions[0]!)
    result = await run(agent, result.state)
    expect(outputOf(result.newItems, 'b1')?.customData?.dogu).toMatchObject({ status: 'ok', data: { sandbox: 'full', status: 'exited', exitCode: 1 } })
    expect(existsSync(join(outside, 'escape.txt'))).toBe(false)
  })
})

describe('arguments: Dogu\'s validation and repair, not the SDK\'s', () => {
  it('a wrong type or a value out of range is refused as Dogu refuses it, naming the paths, and the tool does not run', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [
      [functionCall('lookup', { q: 3 }, { callId: 'c1' }), functionCall('lookup', { q: 'x', limit: 50 }, { callId: 'c2' })],
      [assistantMessage('sorry')],
    ])
    const result = await run(agent, 'look up')
    expect(result.interruptions).toEqual([])
    expect(dogu.runs).toEqual([])
    const told = toolOutputs(model.calls[1]!.request)
    expect(told.c1).toContain('$.q')
    expect(told.c2).toContain('$.limit')
    expect(outputOf(result.newItems, 'c1')?.customData?.dogu).toMatchObject({ status: 'error', code: 'invalid_arguments', paths: ['$.q'] })
    expect(outputOf(result.newItems, 'c2')?.customData?.dogu).toMatchObject({ status: 'error', code: 'invalid_arguments', paths: ['$.limit'] })
  })

  it('text that is not JSON is the SDK\'s to answer: it parses before any tool code runs, asks for approval itself, and says to send valid JSON', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [[functionCall('lookup', '{"q": "x",', { callId: 'c1' })], [assistantMessage('retry')]])
    let result = await run(agent, 'look up')
    // A function needsApproval makes the SDK ask about a call it could not parse.
    expect(result.interruptions.map((item) => item.name)).toEqual(['lookup'])
    result.state.approve(result.interruptions[0]!)
    result = await run(agent, result.state)
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'An error occurred while parsing tool arguments. Please try again with valid JSON.' })
    expect({ runs: dogu.runs, records: await records(dogu) }).toEqual({ runs: [], records: [] })
  })
})

describe('cancellation', () => {
  it('the run\'s abort signal reaches the handler as call.signal', async () => {
    const dogu = setup()
    const { agent } = scriptedAgent(dogu, [[functionCall('wait', {}, { callId: 'w1' })], [assistantMessage('never')]])
    const controller = new AbortController()
    const running = run(agent, 'wait', { signal: controller.signal })
    await dogu.waiting
    controller.abort()
    await expect(running).rejects.toMatchObject({ name: 'AbortError' })
    expect(dogu.aborted).toEqual(['w1'])
    expect(await records(dogu)).toMatchObject([{ tool: 'wait', callId: 'w1', outcome: 'cancelled' }])
  })
})

describe('results', () => {
  it('a tool\'s images reach the model as the SDK\'s structured output, after Dogu\'s text', async () => {
    const dogu = setup({ tools: [defineTool({ name: 'snap', description: 'Take a picture', args: Schema.object({}), traits: { effect: 'read' }, run: () => ({ text: 'a red dot', images: [{ mimeType: 'image/png', data: 'iVBORw0KGgo=' }] }) })] })
    const { agent, model } = scriptedAgent(dogu, [[functionCall('snap', {}, { callId: 's1' })], [assistantMessage('seen')]])
    await run(agent, 'snap')
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ s1: [{ type: 'input_text', text: 'a red dot' }, { type: 'input_image', image: 'data:image/png;base64,iVBORw0KGgo=' }] })
  })
  it('a call handed to the background tells the model its task id', async () => {
    const background = new BackgroundEngine()
    await background.load()
    cleanups.push(() => background.dispose())
    let finish!: (text: string) => void
    const dogu = setup({ tools: [defineTool({ name: 'build', description: 'Build the site', args: Schema.object({}), traits: { effect: 'read' }, run: () => new Promise<string>((resolve) => { finish = resolve }) })] })
    dogu.registry.background = background
    const { agent, model } = scriptedAgent(dogu, [[functionCall('build', {}, { callId: 'b1' })], [assistantMessage('building')]], {}, { backgroundAtStart: true })
    const result = await run(agent, 'build')
    const outcome = outputOf(result.newItems, 'b1')?.customData?.dogu
    expect(outcome).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
    expect(toolOutputs(model.calls[1]!.request).b1).toContain(outcome!.taskId as string)
    finish('built')
    expect(await background.wait(outcome!.taskId as string, { timeout: 5_000 })).toMatchObject({ status: 'succeeded', result: { content: 'built' } })
  })
})

describe('the audit log', () => {
  it('every call Dogu sees has its record under the SDK\'s call id: allowed, refused, denied by a rule, approved', async () => {
    const dogu = setup({ rules: [{ permission: 'tool:wait', decision: 'deny', name: 'no waiting' }] })
    const { agent } = scriptedAgent(dogu, [
      [
        functionCall('lookup', { q: 'a' }, { callId: 'c1' }),
        functionCall('lookup', { q: 3 }, { callId: 'c2' }),
        functionCall('wait', {}, { callId: 'c3' }),
        functionCall('save-note', { text: 'd' }, { callId: 'c4' }),
      ],
      [assistantMessage('done')],
    ])
    let result = await run(agent, 'all of them')
    for (const item of result.interruptions) result.state.approve(item)
    result = await run(agent, result.state)
    const byCall = Object.fromEntries((await records(dogu)).map((record) => [record.callId, record.outcome]))
    expect(byCall).toEqual({ c1: 'ok', c2: 'error', c3: 'denied', c4: 'ok' })
  })
})

describe('a RunState across processes', () => {
  /** Runs until the approval is pending, saves the state, and resumes it in a new Node process. */
  async function resumeElsewhere(variant: 'approve' | 'deny') {
    const dogu = setup()
    const { agent } = scriptedAgent(dogu, [[functionCall('save-note', { text: 'later' }, { callId: 'c1' })]])
    const result = await run(agent, 'save later', { context: { sessionId: 'thread-9' } })
    expect(result.interruptions.map((item) => item.name)).toEqual(['save-note'])
    // Inside the checkout: the child finds @openai/agents installed beside it, as an app would.
    const dir = scratchDir('resume-', resolve(import.meta.dirname, '../../../node_modules/.cache/dogu-frameworks-tests'))
    const stateFile = join(dir, 'state.json')
    writeFileSync(stateFile, result.state.toString())
    const child = await node([await bundle('resume-run.ts', join(dir, 'resume-run.mjs')), stateFile, variant])
    expect({ code: child.code, stderr: child.stderr }).toEqual({ code: 0, stderr: '' })
    // Nothing ran in the first process.
    expect(dogu.runs).toEqual([])
    return JSON.parse(child.stdout.trim().split('\n').at(-1)!)
  }

  it('a state saved with a pending approval and approved in a new process runs the call there once, authorized again', async () => {
    const resumed = await resumeElsewhere('approve')
    expect(resumed).toMatchObject({ approved: ['save-note'], finalOutput: 'done', runs: ['save later'], told: { c1: 'saved later' } })
    expect(resumed.records).toMatchObject([{ tool: 'save-note', callId: 'c1', outcome: 'ok', caller: { sessionId: 'thread-9' }, ask: { ended: 'answer', via: 'openai-agents', by: { id: 'alice' } } }])
    expect(resumed.records).toHaveLength(1)
  })

  it('a deny rule added in the new process wins over the approval the state carries', async () => {
    const resumed = await resumeElsewhere('deny')
    expect(resumed).toMatchObject({ approved: ['save-note'], runs: [] })
    expect(resumed.told.c1).toMatch(/^Permission denied: .*notes frozen since the restart/)
    expect(resumed.records).toMatchObject([{ callId: 'c1', outcome: 'denied', decided: { kind: 'rule', decision: 'deny' } }])
  })
})

describe('the tested version range', () => {
  it('importing the entry beside an @openai/agents outside >=0.20.0 <0.21.0 fails at once, naming the range', async () => {
    const dir = scratchDir('dogu-agents-version-')
    mkdirSync(join(dir, 'node_modules/@openai/agents'), { recursive: true })
    writeFileSync(join(dir, 'node_modules/@openai/agents/package.json'), JSON.stringify({ name: '@openai/agents', version: '0.21.0', main: 'index.js' }))
    writeFileSync(join(dir, 'node_modules/@openai/agents/index.js'), 'module.exports = {}\n')
    const entry = await bundle('../../src/openai-agents.ts', join(dir, 'openai-agents.mjs'))
    const imported = await node(['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`])
    expect(imported.code).toBe(1)
    expect(imported.stderr).toContain('FrameworkVersionError: @dogu/frameworks/openai-agents is tested with @openai/agents >=0.20.0 <0.21.0; 0.21.0 is installed.')
  })
})
