// @dogu/frameworks/ai-sdk against the real `ai` 6 package: generateText and streamText with
// ai/test's MockLanguageModelV3 scripted, Dogu's pipeline (rules, the AI SDK's approval flow
// as the answer, repair, validation, the sandboxed shell, the audit log) under its tools.
// What is asserted is what a user sees: the requests the model receives, the handlers' run
// counts, the approval requests the app gets, the audit records.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import Schema from 'schemastery'
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, type ToolApprovalResponse } from 'ai'
import { BackgroundEngine, defineTool, type ToolCall } from '@dogu/core'
import { createShellTool, ProcessTable } from '@dogu/shell'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { AI_SDK_TESTED, aiSdkTools, auditRejections, type AiSdkApproval, type AiSdkToolOutput, repairToolCall } from '../src/ai-sdk'
import { doguSetup } from './ai-sdk/dogu-setup'
import { call, scriptedModel, toolResultsIn } from './ai-sdk/scripted-model'

const here = dirname(fileURLToPath(import.meta.url))
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  while (stops.length) await stops.pop()!()
})

async function setup(options: Parameters<typeof doguSetup>[0] = {}) {
  const dogu = await doguSetup(options)
  stops.push(dogu.stop)
  return dogu
}

/** The app's side of the approval flow: its answer to every approval request of a result, as the next request's messages. */
function answer(messages: ModelMessage[], result: { content: readonly { type: string }[]; response: { messages: ModelMessage[] } }, approved: boolean, reason?: string): string[] {
  messages.push(...result.response.messages)
  const requests = result.content.filter((part): part is { type: 'tool-approval-request'; approvalId: string; toolCall: { toolCallId: string } } => part.type === 'tool-approval-request')
  const responses: ToolApprovalResponse[] = requests.map(({ approvalId }) => ({ type: 'tool-approval-response', approvalId, approved, ...(reason ? { reason } : {}) }))
  messages.push({ role: 'tool', content: responses })
  return requests.map((request) => request.toolCall.toolCallId)
}

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function deferred<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((done) => { resolve = done })
  return { promise, resolve }
}

const approvalRequests = (result: { content: readonly { type: string }[] }) => result.content.filter((part) => part.type === 'tool-approval-request')

describe('aiSdkTools: Dogu tools under generateText', () => {
  it('an allowed read runs at once: no approval request, and the model reads Dogu\'s text', async () => {
    const dogu = await setup()
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'read_note', { title: 'groceries' })] }, 'You need milk.')
    const result = await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'What do I need?', stopWhen: stepCountIs(3) })
    expect(result.text).toBe('You need milk.')
    expect(approvalRequests(result)).toEqual([])
    expect(dogu.runs.read_note).toBe(1)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'text', value: 'groceries: buy milk' } })
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ status: 'ok', content: 'groceries: buy milk' })
    // The tools the model was offered: Dogu's definitions, as plain JSON Schema.
    expect(prompts[0]!.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'read_note', description: 'Read a note by its title', inputSchema: expect.objectContaining({ type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }) }),
      expect.objectContaining({ type: 'function', name: 'save_note', description: 'Save a note' }),
    ])
  })

  it('an ask becomes the AI SDK\'s approval request; the approval response runs the call once, answered by the session\'s user via ai-sdk', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'call mum' })] }, 'Saved.', { calls: [call('c2', 'save_note', { text: 'again' })] })
    const messages: ModelMessage[] = [{ role: 'user', content: 'Remember to call mum' }]
    const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) })
    expect(approvalRequests(first)).toEqual([expect.objectContaining({ type: 'tool-approval-request', toolCall: expect.objectContaining({ toolCallId: 'c1', toolName: 'save_note', input: { text: 'call mum' } }) })])
    expect(dogu.runs.save_note).toBe(0)
    expect(prompts).toHaveLength(1)

    expect(answer(messages, first, true)).toEqual(['c1'])
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(1) })
    expect(second.text).toBe('Saved.')
    expect(dogu.runs.save_note).toBe(1)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'text', value: 'saved "call mum"' } })
    const [record] = await dogu.records()
    expect(record).toMatchObject({ tool: 'save_note', callId: 'c1', outcome: 'ok', caller: { sessionId: 'web', userId: 'alice' }, ask: { ended: 'answer', decision: 'allow', by: { id: 'alice' }, via: 'ai-sdk', scope: 'once' } })

    // `once`: the next such call is asked again.
    messages.push(...second.response.messages, { role: 'user', content: 'And again' })
    const third = await generateText({ model, tools, messages })
    expect(approvalRequests(third)).toHaveLength(1)
    expect(dogu.runs.save_note).toBe(1)
  })

  it('a rejected approval gives the model a denial with the user\'s reason, and the handler never runs', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'x' })] }, 'Not saved.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save x' }]
    answer(messages, await generateText({ model, tools, messages }), false, 'not now')
    const result = await generateText({ model, tools, messages })
    expect(result.text).toBe('Not saved.')
    expect(dogu.runs.save_note).toBe(0)
    // The SDK's own denial, which providers render as its reason ("Tool execution denied." without one).
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'execution-denied', reason: 'not now' } })
    // The SDK calls nothing of the tool for a rejection: without auditRejections, Dogu never hears of it.
    expect(await dogu.records()).toEqual([])
  })

  it('with auditRejections as prepareStep, a rejection is Dogu\'s answer: audited as declined by the user via ai-sdk, once, and never run', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const steps: number[] = []
    const prepareStep = auditRejections(tools, ({ stepNumber }) => { steps.push(stepNumber); return undefined })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'x' }), call('c2', 'read_note', { title: 'y' })] }, 'Not saved.', 'Still not saved.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save x' }]
    const first = await generateText({ model, tools, messages, prepareStep })
    expect(await dogu.records()).toMatchObject([{ callId: 'c2', outcome: 'ok' }])
    answer(messages, first, false, 'not now')
    await generateText({ model, tools, messages, prepareStep })
    // The request sent again (a retry) is not recorded again.
    await generateText({ model, tools, messages, prepareStep })
    expect(steps).toEqual([0, 0, 0])
    expect(dogu.runs.save_note).toBe(0)
    expect(toolResultsIn(prompts[1])).toMatchObject({ c1: { type: 'execution-denied', reason: 'not now' } })
    const records = await dogu.records()
    expect(records).toHaveLength(2)
    expect(records[1]).toMatchObject({ callId: 'c1', tool: 'save_note', outcome: 'denied', args: { text: 'x' }, caller: { sessionId: 'web' }, ask: { ended: 'answer', decision: 'deny', by: { id: 'alice' }, via: 'ai-sdk' } })
  })

  it('a deny rule stops the call before the approval flow: no approval request surfaces, the model reads the rule, and it is audited', async () => {
    const dogu = await setup({ rules: [{ permission: 'tool:save_note', decision: 'deny', name: 'notes are read-only here' }] })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'x' })] }, 'I may not save notes.')
    const result = await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Save x', stopWhen: stepCountIs(3) })
    expect(approvalRequests(result)).toEqual([])
    expect(result.text).toBe('I may not save notes.')
    expect(dogu.runs.save_note).toBe(0)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'execution-denied', reason: 'Permission denied: rule "notes are read-only here" from config.rules[0] denies it' } })
    expect(await dogu.records()).toMatchObject([{ tool: 'save_note', callId: 'c1', outcome: 'denied', code: 'permission_denied', decided: { kind: 'rule', decision: 'deny', name: 'notes are read-only here' } }])
  })

  it('a rule that denies by the time an approved call runs wins over the approval, with Dogu\'s denial and its audit record', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'x' })] }, 'Denied after all.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save x' }]
    answer(messages, await generateText({ model, tools, messages }), true)
    dogu.permissions.addRule({ permission: 'tool:save_note', decision: 'deny', name: 'frozen' }, 'the ops console')
    await generateText({ model, tools, messages })
    expect(dogu.runs.save_note).toBe(0)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'execution-denied', reason: 'Permission denied: rule "frozen" from the ops console denies it' } })
    expect(await dogu.records()).toMatchObject([{ callId: 'c1', outcome: 'denied', decided: { kind: 'rule', name: 'frozen' } }])
  })
})

describe('aiSdkTools: what the model sent, repaired or refused as Dogu does', () => {
  it('a wrong type passes the SDK\'s input schema and is refused by Dogu with its paths', async () => {
    const dogu = await setup()
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'read_note', '{"title": 5}')] }, 'Retrying.')
    const result = await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Read note 5', stopWhen: stepCountIs(3) })
    expect(dogu.runs.read_note).toBe(0)
    const output = result.steps[0]!.toolResults[0]!.output as AiSdkToolOutput
    expect(output).toMatchObject({ status: 'error', code: 'invalid_arguments', paths: ['$.title'] })
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'error-text', value: 'Invalid arguments:\n- $.title: expected a string, got number 5' } })
    expect(result.steps[0]!.toolCalls[0]).toMatchObject({ toolCallId: 'c1', input: { title: 5 } })
  })

  it('with repairToolCall, malformed JSON reaches Dogu: repaired (the audit says how) or refused with Dogu\'s reason, never the SDK\'s parse error', async () => {
    const dogu = await setup()
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'read_note', "{'title': 'groceries',}"), call('c2', 'read_note', '{"title": "gro')] }, 'Done.')
    const result = await generateText({ model, tools: aiSdkTools(dogu.toolset), experimental_repairToolCall: repairToolCall(), prompt: 'Read groceries', stopWhen: stepCountIs(3) })
    expect(dogu.runs.read_note).toBe(1)
    expect(toolResultsIn(prompts[1])).toEqual({
      c1: { type: 'text', value: 'Note: your arguments were not valid JSON; they were repaired (quotes, trailing-comma) before the call ran. Send strict JSON.\n\ngroceries: buy milk' },
      c2: { type: 'error-text', value: 'Arguments are not valid JSON (Unterminated string in JSON at position 14). Send a JSON object. They cannot be repaired without guessing: the string at position 10 is cut off: its end, and what followed, cannot be known.' },
    })
    // The history keeps Dogu's repair, or the text itself when it cannot be repaired.
    expect(result.steps[0]!.toolCalls.map((toolCall) => [toolCall.toolCallId, toolCall.input])).toEqual([['c1', { title: 'groceries' }], ['c2', '{"title": "gro']])
    const records = await dogu.records()
    expect(records.find((record) => record.callId === 'c1')).toMatchObject({ outcome: 'ok', repaired: { steps: ['quotes', 'trailing-comma'] }, args: { title: 'groceries' } })
    expect(records.find((record) => record.callId === 'c2')).toMatchObject({ outcome: 'error', code: 'invalid_arguments' })
  })

  it('a repaired call waiting for approval keeps its text for itself: another conversation\'s call with the same id runs its own arguments', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const repair = repairToolCall()
    const first = scriptedModel({ calls: [call('call_0', 'save_note', "{'text': 'from the first chat'}")] })
    const pending = await generateText({ model: first.model, tools, experimental_repairToolCall: repair, prompt: 'Save' })
    expect(approvalRequests(pending)).toHaveLength(1)
    const second = scriptedModel({ calls: [call('call_0', 'save_note', { text: 'from the second chat' })] }, 'Saved.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save' }]
    answer(messages, await generateText({ model: second.model, tools, experimental_repairToolCall: repair, messages }), true)
    await generateText({ model: second.model, tools, experimental_repairToolCall: repair, messages })
    expect(dogu.saved).toEqual(['from the second chat'])
  })

  it('without repairToolCall the SDK refuses malformed JSON itself, before Dogu sees it', async () => {
    const dogu = await setup()
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'read_note', "{'title': 'groceries',}")] }, 'Done.')
    await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Read groceries', stopWhen: stepCountIs(3) })
    expect(dogu.runs.read_note).toBe(0)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'error-text', value: expect.stringContaining('Invalid input for tool read_note: JSON parsing failed') } })
    expect(await dogu.records()).toEqual([])
  })

  it('repairToolCall leaves other tools to its fallback', async () => {
    const dogu = await setup()
    const seen: string[] = []
    const repair = repairToolCall(async ({ toolCall }) => {
      seen.push(toolCall.toolName)
      return { ...toolCall, input: '{"n": 1}' }
    })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'count', '{n: }')] }, 'Done.')
    const count = { description: 'Count', inputSchema: jsonSchema({ type: 'object' }), execute: async (input: unknown) => `counted ${JSON.stringify(input)}` }
    await generateText({ model, tools: { ...aiSdkTools(dogu.toolset), count }, experimental_repairToolCall: repair, prompt: 'Count', stopWhen: stepCountIs(3) })
    expect(seen).toEqual(['count'])
    expect(toolResultsIn(prompts[1])).toMatchObject({ c1: { type: 'text', value: 'counted {"n":1}' } })
  })
})

describe('aiSdkTools: sessions and remembered approvals', () => {
  it('approver scope "session" is remembered: the same call in that session runs without a second approval request', async () => {
    const dogu = await setup()
    const approvals: AiSdkApproval[] = []
    const tools = aiSdkTools(dogu.toolset, { approver: (approval) => (approvals.push(approval), { by: 'alice', scope: approval.reason === 'for this session' ? 'session' : 'once' }) })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'one' })] }, 'Saved.', { calls: [call('c2', 'save_note', { text: 'two' })] }, 'Saved too.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save one' }]
    answer(messages, await generateText({ model, tools, messages }), true, 'for this session')
    const second = await generateText({ model, tools, messages })
    expect(approvals).toEqual([expect.objectContaining({ toolCallId: 'c1', toolName: 'save_note', input: { text: 'one' }, reason: 'for this session', session: expect.objectContaining({ id: 'web' }) })])

    messages.push(...second.response.messages, { role: 'user', content: 'Save two' })
    const third = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) })
    expect(approvalRequests(third)).toEqual([])
    expect(dogu.saved).toEqual(['one', 'two'])
    expect(toolResultsIn(prompts[3])).toMatchObject({ c2: { type: 'text', value: 'saved "two"' } })
    const records = await dogu.records()
    expect(records.map((record) => [record.callId, record.outcome])).toEqual([['c1', 'ok'], ['c2', 'ok']])
    expect(records[0]).toMatchObject({ ask: { via: 'ai-sdk', scope: 'session', grantId: expect.any(String) } })
    expect(records[1]).toMatchObject({ decided: { kind: 'grant', scope: 'session', by: 'alice' } })
  })

  it('experimental_context.sessionId is the Dogu session: a session grant given in one thread does not allow the call in another', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset, { approver: { scope: 'session' } })
    const { model } = scriptedModel({ calls: [call('a1', 'save_note', { text: 'in a' })] }, 'Saved.', { calls: [call('a2', 'save_note', { text: 'in a again' })] }, 'Saved.', { calls: [call('b1', 'save_note', { text: 'in b' })] })
    const threadA = { sessionId: 'thread-a' }
    const a: ModelMessage[] = [{ role: 'user', content: 'Save' }]
    answer(a, await generateText({ model, tools, messages: a, experimental_context: threadA }), true)
    a.push(...(await generateText({ model, tools, messages: a, experimental_context: threadA })).response.messages, { role: 'user', content: 'Again' })
    expect(approvalRequests(await generateText({ model, tools, messages: a, experimental_context: threadA, stopWhen: stepCountIs(2) }))).toEqual([])
    const inB = await generateText({ model, tools, messages: [{ role: 'user', content: 'Save' }], experimental_context: { sessionId: 'thread-b' } })
    expect(approvalRequests(inB)).toHaveLength(1)
    expect(dogu.saved).toEqual(['in a', 'in a again'])
    expect((await dogu.records()).map((record) => [record.callId, record.caller.sessionId, record.caller.userId])).toEqual([['a1', 'thread-a', 'alice'], ['a2', 'thread-a', 'alice']])
  })

  it('the session option names the session from the call\'s context', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset, { session: ({ experimental_context }) => (experimental_context as { thread: string }).thread })
    const { model } = scriptedModel({ calls: [call('c1', 'read_note', { title: 't' })] }, 'Ok.')
    await generateText({ model, tools, prompt: 'Read t', experimental_context: { thread: 'chat-7' }, stopWhen: stepCountIs(3) })
    expect(await dogu.records()).toMatchObject([{ callId: 'c1', caller: { sessionId: 'chat-7', userId: 'alice' } }])
  })
})

describe('aiSdkTools: what reaches the handler, and what comes back', () => {
  it('cancellation: generateText\'s abort signal aborts the handler\'s call.signal, and the call is audited as cancelled', async () => {
    let seen: ToolCall | undefined
    const started = deferred<void>()
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until cancelled',
      traits: { effect: 'read' },
      run: (_, toolCall) => new Promise<string>((resolve) => {
        seen = toolCall
        toolCall.signal.addEventListener('abort', () => resolve('stopped'))
        started.resolve()
      }),
    })
    const dogu = await setup({ tools: [wait] })
    const controller = new AbortController()
    const { model } = scriptedModel({ calls: [call('c1', 'wait')] }, 'never read')
    const running = generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Wait', abortSignal: controller.signal, stopWhen: stepCountIs(3) })
    await started.promise
    expect(seen!.signal.aborted).toBe(false)
    controller.abort()
    await expect(running).rejects.toMatchObject({ name: 'AbortError' })
    expect(seen!.signal.aborted).toBe(true)
    expect(await dogu.records()).toMatchObject([{ callId: 'c1', outcome: 'cancelled', code: 'cancelled' }])
  })

  it('images reach the model as image parts beside Dogu\'s text', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const chart = defineTool({ name: 'chart', description: 'Draws a chart', traits: { effect: 'read' }, run: () => ({ text: 'the chart', images: [{ mimeType: 'image/png', data: png }] }) })
    const dogu = await setup({ tools: [chart] })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'chart')] }, 'Here it is.')
    await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Chart', stopWhen: stepCountIs(3) })
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'content', value: [{ type: 'text', text: 'the chart' }, { type: 'image-data', data: png, mediaType: 'image/png' }] } })
  })

  it('a call handed to the background tells the model its task id, as text (it was not refused)', async () => {
    const release = deferred<string>()
    const slow = defineTool({ name: 'slow', description: 'Takes long', traits: { effect: 'read' }, run: () => release.promise })
    const dogu = await setup({ tools: [slow] })
    const background = new BackgroundEngine({ onSettled: (task) => dogu.audit.onTaskSettled(task) })
    await background.load()
    stops.push(() => background.dispose())
    dogu.registry.background = background
    const toolset = dogu.registry.toolset({ session: { id: 'web', userId: 'alice' }, backgroundAtStart: true })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'slow')] }, 'It runs.')
    const result = await generateText({ model, tools: aiSdkTools(toolset), prompt: 'Go', stopWhen: stepCountIs(3) })
    const output = result.steps[0]!.toolResults[0]!.output as AiSdkToolOutput
    expect(output).toMatchObject({ status: 'background', code: 'background', taskId: expect.any(String) })
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'text', value: output.content } })
    expect(output.content).toContain(output.taskId)
    release.resolve('done')
  })

  it('every call has its audit record: allowed, approved, denied by a rule, and refused arguments', async () => {
    const dogu = await setup({ rules: [{ permission: 'tool:save_note', users: ['mallory'], decision: 'deny' }] })
    const tools = aiSdkTools(dogu.toolset)
    const { model } = scriptedModel({ calls: [call('c1', 'read_note', { title: 'a' }), call('c2', 'save_note', { text: 'b' }), call('c3', 'read_note', { title: 3 })] }, 'Done.', { calls: [call('c4', 'save_note', { text: 'c' })] })
    const messages: ModelMessage[] = [{ role: 'user', content: 'Go' }]
    answer(messages, await generateText({ model, tools, messages }), true)
    await generateText({ model, tools, messages })
    const asMallory = aiSdkTools(dogu.toolset.forSession({ id: 'web', userId: 'mallory' }))
    await generateText({ model, tools: asMallory, prompt: 'Save c' })
    const records = (await dogu.records()).sort((a, b) => a.callId.localeCompare(b.callId))
    expect(records.map((record) => [record.callId, record.tool, record.outcome, record.code, record.caller.userId])).toEqual([
      ['c1', 'read_note', 'ok', undefined, 'alice'],
      ['c2', 'save_note', 'ok', undefined, 'alice'],
      ['c3', 'read_note', 'error', 'invalid_arguments', 'alice'],
      ['c4', 'save_note', 'denied', 'permission_denied', 'mallory'],
    ])
  })
})

describe('aiSdkTools: dialects', () => {
  it('dialect openai sends OpenAI\'s strict form; a tool it loosens is reported, and Dogu still checks the exact rule', async () => {
    const headers = defineTool({ name: 'fetch_page', description: 'Fetch a page', args: Schema.object({ url: Schema.string().required(), headers: Schema.dict(Schema.string()) }), traits: { effect: 'read' }, run: () => 'fetched' })
    const dogu = await setup({ tools: [headers] })
    const loosened: Record<string, readonly { path: string }[]>[] = []
    const tools = aiSdkTools(dogu.toolset, { dialect: 'openai', onLoosened: (tools) => loosened.push(tools) })
    expect(loosened).toEqual([dogu.toolset.loosened('openai')])
    expect(Object.keys(loosened[0]!)).toEqual(['fetch_page'])
    expect(tools.read_note!.strict).toBe(true)
    expect(tools.fetch_page!.strict).toBe(false)
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'fetch_page', { url: 'https://example.com', headers: { accept: 7 } })] }, 'Ok.')
    await generateText({ model, tools, prompt: 'Fetch', stopWhen: stepCountIs(3) })
    expect(prompts[0]!.tools).toContainEqual(expect.objectContaining({ name: 'read_note', strict: true, inputSchema: expect.objectContaining({ additionalProperties: false }) }))
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'error-text', value: expect.stringContaining('$.headers.accept') } })
  })

  it('refuses what is not a toolset, and an unknown dialect, as coded errors', () => {
    expect(() => aiSdkTools({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
    return setup().then((dogu) => expect(() => aiSdkTools(dogu.toolset, { dialect: 'cohere' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('unknown dialect "cohere"') })))
  })
})

describe('aiSdkTools under streamText', () => {
  it('the approval flow works the same: the request surfaces in the stream, the response runs the call once', async () => {
    const dogu = await setup()
    const tools = aiSdkTools(dogu.toolset)
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'save_note', { text: 'streamed' })] }, 'Saved.')
    const messages: ModelMessage[] = [{ role: 'user', content: 'Save streamed' }]
    const first = streamText({ model, tools, messages })
    const content = await first.content
    expect(content.filter((part) => part.type === 'tool-approval-request')).toHaveLength(1)
    answer(messages, { content, response: await first.response }, true)
    const second = streamText({ model, tools, messages })
    expect(await second.text).toBe('Saved.')
    expect(dogu.runs.save_note).toBe(1)
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'text', value: 'saved "streamed"' } })
    expect(await dogu.records()).toMatchObject([{ callId: 'c1', outcome: 'ok', ask: { via: 'ai-sdk', by: { id: 'alice' } } }])
  })
})

describe('aiSdkTools: the sandboxed shell', () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-ai-sdk-shell-')))
  afterAll(() => rmSync(workspace, { recursive: true, force: true }))

  it('a bash call the rules allow as sandboxed runs inside bubblewrap, and says so', async () => {
    const processes = new ProcessTable()
    stops.push(() => processes.dispose())
    const bash = createShellTool({ workspace, processes, sandbox: { mode: 'required' } })
    const dogu = await setup({ tools: [bash], rules: [{ permission: 'shell', sandboxed: true, decision: 'allow' }] })
    const { model, prompts } = scriptedModel({ calls: [call('c1', 'bash', { command: 'echo made > note.txt && cat note.txt' })] }, 'Done.')
    const result = await generateText({ model, tools: aiSdkTools(dogu.toolset), prompt: 'Make a note', stopWhen: stepCountIs(3) })
    expect(approvalRequests(result)).toEqual([])
    const output = result.steps[0]!.toolResults[0]!.output as AiSdkToolOutput
    expect(output).toMatchObject({ status: 'ok', data: { sandbox: 'full', status: 'exited', exitCode: 0, stdout: { text: 'made\n' } } })
    expect(toolResultsIn(prompts[1])).toEqual({ c1: { type: 'text', value: output.content } })
    expect(output.content).toContain('made')
    expect(await dogu.records()).toMatchObject([{ callId: 'c1', tool: 'bash', outcome: 'ok', decided: { kind: 'rule', decision: 'allow' } }])
  })
})

describe('@dogu/frameworks/ai-sdk: the tested range', () => {
  const app = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-ai-sdk-range-')))
  afterAll(() => rmSync(app, { recursive: true, force: true }))

  /** The entry, built as it ships, in an app whose `ai` is `version`: what importing it prints and its exit code. */
  async function importWith(version: string) {
    const folder = join(app, version)
    const ai = join(folder, 'node_modules/ai')
    mkdirSync(ai, { recursive: true })
    writeFileSync(join(ai, 'package.json'), JSON.stringify({ name: 'ai', version, type: 'module', main: 'index.js' }))
    writeFileSync(join(ai, 'index.js'), 'export const jsonSchema = (schema) => ({ jsonSchema: schema })\nexport class InvalidToolInputError {}\n')
    mkdirSync(join(folder, 'node_modules/@dogu'), { recursive: true })
    symlinkSync(resolve(here, '../../core'), join(folder, 'node_modules/@dogu/core'))
    const entry = join(folder, 'node_modules/@dogu/frameworks/lib/ai-sdk.js')
    await build({ entryPoints: [resolve(here, '../src/ai-sdk.ts')], outfile: entry, bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', logLevel: 'silent' })
    writeFileSync(join(folder, 'main.mjs'), "const { AI_SDK_TESTED } = await import('./node_modules/@dogu/frameworks/lib/ai-sdk.js')\nconsole.log(JSON.stringify(AI_SDK_TESTED))\n")
    const run = spawnSync(process.execPath, ['main.mjs'], { cwd: folder, encoding: 'utf8' })
    return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }
  }

  it('imports beside ai 6, and fails at import beside ai 5, naming the range', async () => {
    expect(await importWith('6.0.333')).toMatchObject({ status: 0, stdout: JSON.stringify(AI_SDK_TESTED) })
    const old = await importWith('5.0.0')
    expect(old.status).toBe(1)
    expect(old.stderr).toContain('FrameworkVersionError: @dogu/frameworks/ai-sdk is tested with ai >=6.0.0 <7.0.0; 5.0.0 is installed. Install a version in that range, or a @dogu/frameworks release tested with 5.0.0')
  })
})
