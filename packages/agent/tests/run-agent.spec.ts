import { BackgroundEngine, type BackgroundTask, defineTool, type ToolCall, ToolRegistry, type ToolRegistryOptions, type ToolResult } from '@dogu/core'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { retryAfter } from '../src/send-request'
import { type AgentEvent, AgentError, type ChatMessage, NOTICE_PREFIX, runAgent, type Script, type ScriptedServer, type ScriptedServerOptions, startScriptedServer, TaskNotices } from '../src'

const CAPITALS: Record<string, string> = { FR: 'Paris', JP: 'Tokyo', 法国: '巴黎' }
const lookupArgs = Schema.object({ q: Schema.string().required() })

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

function registry(options?: ToolRegistryOptions) {
  const registry = new ToolRegistry(options)
  const started: string[] = []
  registry.define(defineTool({
    name: 'lookup',
    description: 'Look up the capital of a country by its code.',
    args: lookupArgs,
    traits: { effect: 'read' },
    run: ({ q }) => {
      started.push(q)
      return CAPITALS[q] ?? `no country ${q}`
    },
  }))
  return { registry, started }
}

async function serve(script: Script, options: Partial<ScriptedServerOptions> = {}) {
  server = await startScriptedServer({ script, model: 'scripted', ...options })
  return server
}

const user = (content: string): ChatMessage => ({ role: 'user', content })
const call = (name: string, args: string, id: string) => ({ id, name, arguments: args })
/** The `tools` part of a raw request body, byte for byte: the loop sends it after the messages. */
const toolsBytes = (raw: string) => raw.slice(raw.lastIndexOf('"tools":'), raw.lastIndexOf(',"stream"'))

describe('runAgent over a scripted endpoint', () => {
  it('runs parallel calls as one batch and answers; messages, events and usage are the whole story', async () => {
    const { registry, started } = registry0()
    const endpoint = await serve([
      { text: 'Checking both.', toolCalls: [call('lookup', '{"q":"FR"}', 'c1'), call('lookup', '{"q":"JP"}', 'c2')], usage: { prompt_tokens: 50, completion_tokens: 20 } },
      { text: 'Paris and Tokyo.', usage: { prompt_tokens: 80, completion_tokens: 6 } },
    ])
    const events: AgentEvent[] = []
    const toolset = registry.toolset({ session: { id: 's1' } })
    const result = await runAgent({
      endpoint: { baseURL: endpoint.baseURL, apiKey: 'sk-test', model: 'scripted' },
      toolset,
      messages: [user('Capitals of FR and JP?')],
      onEvent: (event) => events.push(event),
    })
    expect(result.text).toBe('Paris and Tokyo.')
    expect(result.steps).toBe(2)
    expect(result.finishReason).toBe('stop')
    expect(result.usage).toEqual({ promptTokens: 130, completionTokens: 26, totalTokens: 156 })
    expect(result.messages).toEqual([
      user('Capitals of FR and JP?'),
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"FR"}' } },
          { id: 'c2', type: 'function', function: { name: 'lookup', arguments: '{"q":"JP"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Paris' },
      { role: 'tool', tool_call_id: 'c2', content: 'Tokyo' },
      { role: 'assistant', content: 'Paris and Tokyo.' },
    ])
    expect(started).toEqual(['FR', 'JP'])
    expect(events.map((event) => event.type)).toEqual(['step', 'text', 'usage', 'tool-call', 'tool-call', 'tool-result', 'tool-result', 'step', 'text', 'usage', 'end'])
    // What went over the wire: the key, streaming with usage, and the same tool bytes each turn.
    const [first, second] = endpoint.requests
    expect(first.headers.authorization).toBe('Bearer sk-test')
    expect(first.body).toMatchObject({ model: 'scripted', stream: true, stream_options: { include_usage: true } })
    expect(first.body.tools).toEqual(toolset.definitions('openai'))
    expect(toolsBytes(first.raw)).toBe(`"tools":${JSON.stringify(toolset.definitions('openai'))}`)
    expect(toolsBytes(second.raw)).toBe(toolsBytes(first.raw))
    expect(endpoint.requests.every((request) => request.problems.length === 0)).toBe(true)
  })

  it('runs the calls of one turn together (a batch), not one after another', async () => {
    const registry = new ToolRegistry()
    let release!: () => void
    const both = new Promise<void>((resolve) => { release = resolve })
    let running = 0
    registry.define(defineTool({
      name: 'wait_pair',
      description: 'Waits until two calls run at once.',
      traits: { effect: 'read' },
      run: async () => {
        if (++running === 2) release()
        await both
        return `saw ${running}`
      },
    }))
    const endpoint = await serve([{ toolCalls: [call('wait_pair', '{}', 'a'), call('wait_pair', '{}', 'b')] }, { text: 'done' }])
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('go')] })
    expect(result.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual(['saw 2', 'saw 2'])
  })

  it('lets the model fix arguments that cannot be repaired: the error goes back, the echoed call carries "{}"', async () => {
    const { registry } = registry0()
    const endpoint = await serve([
      { toolCalls: [call('lookup', '{"q": "FR', 'c1')] },
      { toolCalls: [call('lookup', '{"q": "FR"}', 'c2')] },
      { text: 'Paris.' },
    ])
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('FR?')] })
    expect(result.text).toBe('Paris.')
    expect(result.messages.slice(1, 3)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: `Error: Arguments are not valid JSON (${jsonError('{"q": "FR')}). Send a JSON object. They cannot be repaired without guessing: the string at position 6 is cut off: its end, and what followed, cannot be known.` },
    ])
    expect(result.messages[4]).toEqual({ role: 'tool', tool_call_id: 'c2', content: 'Paris' })
  })

  it('runs a call whose arguments were repaired, echoes the repaired JSON, and tells the model', async () => {
    const { registry } = registry0()
    const endpoint = await serve([
      { toolCalls: [call('lookup', "{'q': 'FR',}", 'c1')] },
      { text: 'Paris.' },
    ])
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('FR?')] })
    expect(result.text).toBe('Paris.')
    expect(result.messages.slice(1, 3)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"FR"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Note: your arguments were not valid JSON; they were repaired (quotes, trailing-comma) before the call ran. Send strict JSON.\n\nParis' },
    ])
    expect(endpoint.requests[1].problems).toEqual([])
  })

  it('answers an unknown tool with the closest names, and goes on', async () => {
    const { registry } = registry0()
    const endpoint = await serve([{ toolCalls: [call('lokup', '{"q":"FR"}', 'c1')] }, { text: 'Sorry.' }])
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('FR?')] })
    expect(result.messages[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Error: Unknown tool "lokup". Did you mean "lookup"? Available tools: lookup.' })
    expect(endpoint.requests[1].problems).toEqual([])
  })

  it('reassembles text and arguments streamed a character (and a byte) at a time', async () => {
    const { registry, started } = registry0()
    const endpoint = await serve([
      { text: '我查一下「法国」。', toolCalls: [call('lookup', '{"q":"法国"}', 'c1')], pieceSize: 1, byteSize: 1 },
      { text: '首都是巴黎。', pieceSize: 1, byteSize: 3 },
    ])
    const deltas: string[] = []
    const result = await runAgent({
      endpoint: { baseURL: endpoint.baseURL, model: 'scripted' },
      toolset: registry.toolset({ session: { id: 's' } }),
      messages: [user('法国的首都？')],
      onEvent: (event) => { if (event.type === 'text') deltas.push(event.delta) },
    })
    expect(started).toEqual(['法国'])
    expect(result.text).toBe('首都是巴黎。')
    expect(deltas.join('')).toBe('我查一下「法国」。首都是巴黎。')
    expect(deltas.length).toBe(15)
    expect(result.messages[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '巴黎' })
  })

  it('reports a denied call to the model as a denial', async () => {
    const registry = new ToolRegistry()
    const asked: string[] = []
    registry.permissions = {
      authorize: (request) => ({ decision: request.effect === 'read' ? 'allow' : 'ask', reason: 'writes need approval' }),
      approve: async (request) => {
        asked.push(request.tool)
        return { decision: 'deny', reason: 'the user said no' }
      },
    }
    let wrote = 0
    registry.define(defineTool({ name: 'notes', description: 'Add a note.', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'write' }, run: () => { wrote++; return 'added' } }))
    const endpoint = await serve([{ toolCalls: [call('notes', '{"text":"hi"}', 'c1')] }, { text: 'I could not add it.' }])
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('note hi')] })
    expect(asked).toEqual(['notes'])
    expect(wrote).toBe(0)
    expect(result.messages[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Denied: Permission denied: the user said no' })
  })

  it('tells the model a call over its quota was rate limited, with when to try again, and the loop goes on', async () => {
    const { registry: tools, started } = registry0({ quotas: [{ tools: 'lookup', per: 'user', max: 1, window: '1h' }] })
    const endpoint = await serve([
      { toolCalls: [call('lookup', '{"q":"FR"}', 'c1')] },
      { toolCalls: [call('lookup', '{"q":"JP"}', 'c2')] },
      { text: 'Paris; I may look up Japan again later.' },
    ])
    const results: ToolResult[] = []
    const result = await runAgent({
      endpoint: { baseURL: endpoint.baseURL, model: 'scripted' },
      toolset: tools.toolset({ session: { id: 's', platform: 'test', userId: 'u1' } }),
      messages: [user('Capitals of FR, then JP')],
      onEvent: (event) => { if (event.type === 'tool-result') results.push(event.result) },
    })
    expect(started).toEqual(['FR'])
    expect(result).toMatchObject({ steps: 3, finishReason: 'stop', text: 'Paris; I may look up Japan again later.' })
    expect(results.map((r) => r.status)).toEqual(['ok', 'rate_limited'])
    expect(results[1].retryAfterMs).toBeGreaterThan(0)
    expect(results[1].retryAfterMs).toBeLessThanOrEqual(3_600_000)
    const refused = result.messages[4] as { role: string; tool_call_id: string; content: string }
    expect(refused).toMatchObject({ role: 'tool', tool_call_id: 'c2' })
    expect(refused.content).toMatch(/^Rate limited: quota 'lookup per user' used: 1 per 1 h; try again in \d+ (min|s|h)\.$/)
    // The third request carried the refusal to the model, unlabelled twice.
    expect(endpoint.requests[2].body.messages!.at(-1)).toEqual(refused)
  })

  it('stops at maxSteps after running the last turn\'s calls, so the history stays valid', async () => {
    const { registry } = registry0()
    const endpoint = await serve((_, index) => ({ toolCalls: [call('lookup', '{"q":"FR"}', `c${index}`)] }))
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('loop')], maxSteps: 2 })
    expect(result).toMatchObject({ steps: 2, finishReason: 'max_steps', text: '' })
    expect(endpoint.requests.length).toBe(2)
    expect(result.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
  })

  it('search mode: tools tool_search returned are in the next turn\'s definitions, after the unchanged ones', async () => {
    const { registry } = registry0()
    registry.define(defineTool({
      name: 'get_weather',
      description: 'Current weather for a city.',
      args: Schema.object({ city: Schema.string().required() }),
      traits: { effect: 'read' },
      mode: 'search',
      run: ({ city }) => `sunny in ${city}`,
    }))
    const endpoint = await serve([
      { toolCalls: [call('tool_search', '{"query":"weather"}', 's1')] },
      { toolCalls: [call('get_weather', '{"city":"Oslo"}', 'w1')] },
      { text: 'Sunny.' },
    ])
    const events: AgentEvent[] = []
    const toolset = registry.toolset({ session: { id: 's' } })
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset, messages: [user('weather in Oslo?')], onEvent: (event) => events.push(event) })
    expect(result.text).toBe('Sunny.')
    const names = endpoint.requests.map((request) => request.body.tools!.map((tool) => tool.function.name))
    expect(names).toEqual([['lookup', 'tool_search'], ['lookup', 'tool_search', 'get_weather'], ['lookup', 'tool_search', 'get_weather']])
    expect(events.filter((event) => event.type === 'tools-loaded')).toEqual([{ type: 'tools-loaded', names: ['get_weather'] }])
    // The first turn's tools are a byte-identical prefix of the next ones; turns 2 and 3 are equal.
    const [one, two, three] = endpoint.requests.map((request) => toolsBytes(request.raw))
    expect(two.startsWith(one.slice(0, -1) + ',')).toBe(true)
    expect(three).toBe(two)
    expect(endpoint.requests[1].body.tools![2]).toEqual(toolset.definitionsOf(['get_weather'], 'openai')[0])
  })

  it('tells the model of a background task that settled, before its next turn, as a notice', async () => {
    const listeners = new Set<(task: BackgroundTask) => void>()
    let settled!: () => void
    const settledOnce = new Promise<void>((resolve) => { settled = resolve })
    const engine = new BackgroundEngine({ onSettled: (task) => { for (const listener of listeners) listener(task); settled() } })
    await engine.load()
    const registry = new ToolRegistry()
    registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
    registry.background = engine
    let finish!: (text: string) => void
    registry.define(defineTool({
      name: 'build',
      description: 'Builds the project (slow).',
      // Never done within 1 ms: it is handed to the background, whatever the machine's speed.
      traits: { effect: 'read', timeout: 1 },
      run: (_, call: ToolCall) => new Promise<string>((resolve) => { finish = resolve; call.signal.addEventListener('abort', () => resolve('aborted')) }),
    }))
    registry.define(defineTool({
      name: 'wait_build',
      description: 'Lets the build finish.',
      traits: { effect: 'read' },
      run: async () => {
        finish('build ok: 3 files')
        await settledOnce
        return 'waited'
      },
    }))
    const notices = new TaskNotices({ session: 's-bg', subscribe: (listener) => { listeners.add(listener); return () => listeners.delete(listener) } })
    const endpoint = await serve([
      { toolCalls: [call('build', '{}', 'b1')] },
      { toolCalls: [call('wait_build', '{}', 'w1')] },
      { text: 'The build finished.' },
    ])
    const events: AgentEvent[] = []
    const result = await runAgent({
      endpoint: { baseURL: endpoint.baseURL, model: 'scripted' },
      toolset: registry.toolset({ session: { id: 's-bg' } }),
      messages: [user('build it')],
      notices,
      onEvent: (event) => events.push(event),
    })
    const background = result.messages[2]
    expect(background).toMatchObject({ role: 'tool', tool_call_id: 'b1' })
    const taskId = /task (task_\S+?)\./.exec(background.content as string)![1]
    const notice = result.messages[5]
    expect(result.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'user', 'assistant'])
    expect(notice).toEqual({ role: 'user', content: `${NOTICE_PREFIX}\nBackground task ${taskId} (build, from call b1) finished.\nResult: build ok: 3 files` })
    expect(endpoint.requests[2].body.messages!.at(-1)).toEqual(notice)
    expect(events.filter((event) => event.type === 'notice').map((event) => (event as { tasks: BackgroundTask[] }).tasks.map((task) => task.id))).toEqual([[taskId]])
    expect(notices.size).toBe(0)
    notices.dispose()
    expect(listeners.size).toBe(0)
    await engine.dispose()
  })

  it('abort mid-stream stops the stream and rejects with the conversation so far', async () => {
    const { registry } = registry0()
    const endpoint = await serve([{ text: 'Hello there, this goes on', pieceSize: 5, stallAfter: 2 }])
    const controller = new AbortController()
    const run = runAgent({
      endpoint: { baseURL: endpoint.baseURL, model: 'scripted' },
      toolset: registry.toolset({ session: { id: 's' } }),
      messages: [user('hi')],
      signal: controller.signal,
      onEvent: (event) => { if (event.type === 'text') controller.abort(new Error('user pressed stop')) },
    })
    const error = await run.catch((error) => error)
    expect(AgentError.is(error, 'ABORTED')).toBe(true)
    expect(error.message).toBe('the run was aborted: user pressed stop')
    expect(error.messages).toEqual([user('hi')])
  })

  it('abort during the calls cancels this turn\'s calls; the history keeps their results', async () => {
    const registry = new ToolRegistry()
    const controller = new AbortController()
    registry.define(defineTool({
      name: 'hold',
      description: 'Runs until cancelled.',
      traits: { effect: 'read' },
      run: (_, call) => new Promise<string>((_, reject) => {
        call.signal.addEventListener('abort', () => reject(call.signal.reason))
        controller.abort(new Error('stop'))
      }),
    }))
    const endpoint = await serve([{ toolCalls: [call('hold', '{}', 'h1')] }, { text: 'never asked' }])
    const error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('hold')], signal: controller.signal }).catch((error) => error)
    expect(AgentError.is(error, 'ABORTED')).toBe(true)
    expect(error.messages.map((message: ChatMessage) => message.role)).toEqual(['user', 'assistant', 'tool'])
    expect(error.messages[2]).toEqual({ role: 'tool', tool_call_id: 'h1', content: 'Cancelled: the batch was cancelled.' })
    expect(endpoint.requests.length).toBe(1)
  })
})

describe('runAgent and the background', () => {
  it('abort cancels the turn\'s running calls, but a task already in the background goes on', async () => {
    const engine = new BackgroundEngine()
    await engine.load()
    const registry = new ToolRegistry()
    registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
    registry.background = engine
    const controller = new AbortController()
    let finishBuild!: (text: string) => void
    let buildAborted = false
    registry.define(defineTool({
      name: 'build',
      description: 'Builds (slow).',
      traits: { effect: 'read', timeout: 1 },
      run: (_, call) => new Promise<string>((resolve) => {
        finishBuild = resolve
        call.signal.addEventListener('abort', () => { buildAborted = true })
      }),
    }))
    registry.define(defineTool({
      name: 'hold',
      description: 'Runs until cancelled; aborts the run once the build is in the background.',
      traits: { effect: 'read', background: false },
      run: (_, call) => new Promise<string>((_, reject) => {
        call.signal.addEventListener('abort', () => reject(call.signal.reason))
        const check = () => engine.list({ status: 'running' }).length ? controller.abort(new Error('stop')) : setImmediate(check)
        check()
      }),
    }))
    const endpoint = await serve([{ toolCalls: [call('build', '{}', 'b1'), call('hold', '{}', 'h1')] }])
    const error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('go')], signal: controller.signal }).catch((error) => error)
    expect(AgentError.is(error, 'ABORTED')).toBe(true)
    const [task] = engine.list()
    expect(task).toMatchObject({ tool: 'build', status: 'running' })
    expect(error.messages[2].content).toMatch(new RegExp(`^The call is still running and continues in the background as task ${task.id}\\.`))
    expect(error.messages[3]).toEqual({ role: 'tool', tool_call_id: 'h1', content: 'Cancelled: the batch was cancelled.' })
    expect(buildAborted).toBe(false)
    finishBuild('built')
    expect(await engine.wait(task.id, { timeout: 5_000 })).toMatchObject({ status: 'succeeded', result: { content: 'built' } })
    await engine.dispose()
  })
})

describe('runAgent and the endpoint', () => {
  it('times out a request whose answer never comes, through the injected fetch', async () => {
    const { registry } = registry0()
    const never = (_: string, init: RequestInit) => new Promise<Response>((_, reject) => {
      init.signal!.addEventListener('abort', () => reject(init.signal!.reason))
    })
    const error = await runAgent({ endpoint: { baseURL: 'http://127.0.0.1:9/v1', model: 'm' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('hi')], fetch: never, timeout: 20, retry: { retries: 1, baseDelay: 0 } }).catch((error) => error)
    expect(AgentError.is(error, 'TIMEOUT')).toBe(true)
    expect(error.message).toBe('the endpoint sent no answer within 20 ms (http://127.0.0.1:9/v1/chat/completions)')
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfter('2')).toBe(2000)
    expect(retryAfter('0.5')).toBe(500)
    expect(retryAfter(new Date(Date.now() - 1000).toUTCString())).toBe(0)
    expect(retryAfter('soon')).toBeUndefined()
    expect(retryAfter(null)).toBeUndefined()
  })

  it('retries 503 and 429 (honouring Retry-After), then succeeds', async () => {
    const { registry } = registry0()
    const endpoint = await serve([
      { status: 503 },
      { status: 429, headers: { 'retry-after': '0' } },
      { text: 'ok' },
    ])
    const events: AgentEvent[] = []
    const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('hi')], retry: { baseDelay: 1 }, onEvent: (event) => events.push(event) })
    expect(result.text).toBe('ok')
    expect(events.filter((event) => event.type === 'retry')).toEqual([
      { type: 'retry', attempt: 1, delayMs: 1, reason: 'HTTP 503' },
      { type: 'retry', attempt: 2, delayMs: 0, reason: 'HTTP 429' },
    ])
  })

  it('gives up within its bound: too many failures, or a Retry-After longer than maxDelay', async () => {
    const { registry } = registry0()
    const toolset = registry.toolset({ session: { id: 's' } })
    let endpoint = await serve([{ status: 500 }, { status: 502 }, { status: 503 }])
    let error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset, messages: [user('hi')], retry: { retries: 2, baseDelay: 0 } }).catch((error) => error)
    expect(AgentError.is(error, 'HTTP')).toBe(true)
    expect(error.status).toBe(503)
    expect(error.message).toBe('the endpoint answered 503 Service Unavailable: {"error":{"message":"scripted 503","type":"scripted"}}')
    expect(endpoint.requests.length).toBe(3)
    await endpoint.close()
    endpoint = await serve([{ status: 429, headers: { 'retry-after': '3600' } }])
    error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset, messages: [user('hi')] }).catch((error) => error)
    expect(error.message).toBe('the endpoint answered 429 and asked to retry after 3600 s, longer than the 20000 ms this run waits')
    expect(endpoint.requests.length).toBe(1)
  })

  it('does not retry a 400, and says what the endpoint said', async () => {
    const { registry } = registry0()
    const endpoint = await serve([{ status: 400, body: '{"error":{"message":"bad model"}}' }])
    const error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('hi')] }).catch((error) => error)
    expect(error.message).toBe('the endpoint answered 400 Bad Request: {"error":{"message":"bad model"}}')
    expect(endpoint.requests.length).toBe(1)
  })

  it('falls back to whole replies when the endpoint cannot stream', async () => {
    for (const noStream of ['json', 'refuse'] as const) {
      const { registry } = registry0()
      const endpoint = await serve([{ toolCalls: [call('lookup', '{"q":"FR"}', 'c1')] }, { toolCalls: [call('lookup', '{"q":"JP"}', 'c2')] }, { text: 'Paris, Tokyo.' }, { text: 'again' }], { noStream })
      const result = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('FR, JP?')] })
      expect(result.text).toBe('Paris, Tokyo.')
      expect(result.messages[1]).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"FR"}' } }] })
      // Once it knows, the loop stops asking for a stream.
      const streamed = endpoint.requests.filter((request) => request.problems.length === 0).map((request) => request.body.stream)
      expect(streamed).toEqual(noStream === 'json' ? [true, false, false] : [true, false, false, false])
      await endpoint.close()
    }
  })

  it('times out an endpoint that goes silent mid-reply', async () => {
    const { registry } = registry0()
    const endpoint = await serve([{ text: 'never ends', stallAfter: 1 }])
    const error = await runAgent({ endpoint: { baseURL: endpoint.baseURL, model: 'scripted' }, toolset: registry.toolset({ session: { id: 's' } }), messages: [user('hi')], timeout: 50 }).catch((error) => error)
    expect(AgentError.is(error, 'TIMEOUT')).toBe(true)
    expect(error.message).toBe('the endpoint went silent for 50 ms in the middle of its reply')
  })

  it('refuses bad options with a clear error', async () => {
    const { registry } = registry0()
    const toolset = registry.toolset({ session: { id: 's' } })
    await expect(runAgent({ endpoint: { baseURL: 'localhost:8080', model: 'm' }, toolset, messages: [] })).rejects.toThrow('runAgent: endpoint.baseURL must be an http(s) URL, got "localhost:8080"')
    await expect(runAgent({ endpoint: { baseURL: 'http://x', model: '' }, toolset, messages: [] })).rejects.toThrow('runAgent: endpoint.model must name a model')
    await expect(runAgent({ endpoint: { baseURL: 'http://x', model: 'm' }, toolset, messages: [], maxSteps: 0 })).rejects.toThrow('runAgent: maxSteps must be a whole number of at least 1, got 0')
  })

  it('uses the fetch it is given', async () => {
    const { registry } = registry0()
    const endpoint = await serve([{ text: 'via injected fetch' }])
    const urls: string[] = []
    const result = await runAgent({
      endpoint: { baseURL: endpoint.baseURL + '/', model: 'scripted' },
      toolset: registry.toolset({ session: { id: 's' } }),
      messages: [user('hi')],
      fetch: (url, init) => { urls.push(url); return fetch(url, init) },
    })
    expect(result.text).toBe('via injected fetch')
    expect(urls).toEqual([`${endpoint.baseURL}/chat/completions`])
  })
})

describe('the scripted server refuses what a real endpoint would', () => {
  it('content: null next to tool calls, tool calls without results, results for unknown calls, tools: []', async () => {
    const endpoint = await serve([])
    const post = async (body: unknown) => {
      const response = await fetch(`${endpoint.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify(body) })
      return { status: response.status, message: (await response.json()).error.message }
    }
    const calls = [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }]
    expect(await post({ model: 'scripted', messages: [user('x'), { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: 'c1', content: 'ok' }] })).toEqual({
      status: 400, message: 'messages[1].content: null next to tool_calls (refused by some OpenAI-compatible servers; send "")',
    })
    expect(await post({ model: 'scripted', messages: [user('x'), { role: 'assistant', content: '', tool_calls: calls }, user('y')] })).toEqual({
      status: 400, message: 'An assistant message with \'tool_calls\' must be followed by tool messages responding to each \'tool_call_id\'. The following tool_call_ids did not have response messages: c1',
    })
    expect(await post({ model: 'scripted', messages: [user('x'), { role: 'tool', tool_call_id: 'zz', content: 'ok' }] })).toEqual({
      status: 400, message: 'messages[1]: a \'tool\' message must answer a tool_call_id of the preceding assistant message (\'zz\' does not)',
    })
    expect(await post({ model: 'scripted', messages: [user('x')], tools: [] })).toEqual({ status: 400, message: '[] is too short - \'tools\'' })
    expect(await post({ model: 'other', messages: [user('x')] })).toEqual({ status: 400, message: 'The model `other` does not exist' })
  })
})

/** This Node's message for parsing `text`, which differs between versions. */
function jsonError(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('valid JSON')
}

function registry0(options?: ToolRegistryOptions) {
  return registry(options)
}
