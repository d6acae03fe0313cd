import type { ChatMessage } from '@dogu/agent'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentApp, agentApp, within } from './chatluna-agent/agent-app'

let t: AgentApp | undefined

// Stopped after each test, its server closed and its folder removed.
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

/** `save_note` as the model must see it: Dogu's JSON Schema, less what ChatLuna's OpenAI adapters strip. */
const saveNote = {
  type: 'function',
  function: {
    name: 'save_note',
    description: 'Save a note for later',
    parameters: { type: 'object', properties: { text: { type: 'string', description: 'The note' } }, required: ['text'] },
  },
}

/** The first lines of Dogu's question (then the choices). */
const QUESTION = ['[1] 工具 save_note 请求批准：save_note(text="buy milk")', '原因：没有匹配的规则，写入类工具默认需要批准']

/** Alice asks the bot, in the channel, to note something: ChatLuna's room and agent take it from there. */
async function askForNote({ app, outbox, server }: AgentApp) {
  const turn = app.mock.client('alice', 'room').receive('<at id="514"/> note: buy milk')
  const question = await within(outbox.next(), 'the approval question')
  const [request] = server.requests
  return { turn, question, request }
}

/** The tool results the model read, with the call each answers. */
function toolResults(messages: ChatMessage[] = []) {
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? message.tool_calls ?? [] : []))
  return messages.flatMap((message) => (message.role === 'tool'
    ? [{ call: calls.find((call) => call.id === message.tool_call_id)?.function, content: message.content }]
    : []))
}

describe('a chat turn through ChatLuna\'s agent', () => {
  it('offers Dogu\'s tools to the model, asks in the chat before a write, runs it on y, and posts the model\'s answer', async () => {
    t = await agentApp()
    const { app, server, notes } = t
    const { turn, question, request } = await askForNote(t)

    // The model was offered every bridged tool, each with its JSON Schema.
    expect(request.body.tools?.map((tool) => tool.function.name)).toEqual(['save_note', 'task_cancel', 'task_status'])
    expect(request.body.tools?.[0]).toEqual(saveNote)
    // It called save_note, and Dogu asked in the channel the message came from before running it.
    expect(question.channelId).toBe('room')
    expect(question.text.split('\n').slice(0, 2)).toEqual(QUESTION)
    expect(notes).toEqual([])

    expect(await within(app.mock.client('alice', 'room').receive('y'), 'the answer to y')).toEqual(['已允许 [1] save_note(text="buy milk")（仅此一次）。'])
    expect(await within(turn, 'the model\'s answer')).toEqual(['Final answer. The tool said: saved note #1: buy milk'])
    expect(notes).toEqual(['buy milk'])

    // The next request carried the result of that call, and the tool as it was first offered.
    const next = server.requests.at(-1)!
    expect(toolResults(next.body.messages)).toEqual([{ call: { name: 'save_note', arguments: '{"text":"buy milk"}' }, content: 'saved note #1: buy milk' }])
    expect(next.body.tools?.[0]).toEqual(saveNote)
    // Nothing ChatLuna and the adapter sent is what a strict OpenAI-compatible endpoint refuses.
    expect(server.requests.flatMap((sent) => sent.problems)).toEqual([])
  })

  it('on n does not run the tool; the model reads the denial and its answer still arrives', async () => {
    t = await agentApp()
    const { app, server, notes } = t
    const { turn, question } = await askForNote(t)
    expect(question.text.split('\n').slice(0, 2)).toEqual(QUESTION)

    expect(await within(app.mock.client('alice', 'room').receive('n'), 'the answer to n')).toEqual(['已拒绝 [1] save_note(text="buy milk")。'])
    const denial = 'status: denied\nPermission denied: mock:alice declined it'
    expect(await within(turn, 'the model\'s answer')).toEqual([`Final answer. The tool said: ${denial}`])
    expect(notes).toEqual([])
    expect(toolResults(server.requests.at(-1)!.body.messages)).toEqual([{ call: { name: 'save_note', arguments: '{"text":"buy milk"}' }, content: denial }])
  })
})
