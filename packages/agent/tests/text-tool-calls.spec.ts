import { defineTool, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { HeldText } from '../src/held-text'
import { type AgentEvent, AgentError, type ChatMessage, extractTextToolCalls, runAgent, type ScriptedServer, startScriptedServer, TEXT_TOOL_CALL_FORMATS, type TextToolCallFormat } from '../src'

const call = (n: number, name: string, args: string) => ({ id: `text_call_${n}`, name, arguments: args })
// DeepSeek's tokens, spelled out once: fullwidth vertical lines (U+FF5C) and lower one-eighth blocks (U+2581).
const DS = {
  begin: '<｜tool▁calls▁begin｜>',
  end: '<｜tool▁calls▁end｜>',
  call: '<｜tool▁call▁begin｜>',
  callEnd: '<｜tool▁call▁end｜>',
  sep: '<｜tool▁sep｜>',
}

describe('extractTextToolCalls', () => {
  describe('hermes and qwen', () => {
    it('reads several <tool_call> blocks in a row, keeps the arguments as written, and cuts the markup out of the text', () => {
      const text = 'Let me check both.\n<tool_call>\n{"name": "lookup", "arguments": {"q": "FR"}}\n</tool_call>\n<tool_call>\n{"arguments": {"name": "JP"}, "name": "lookup"}\n</tool_call>'
      expect(extractTextToolCalls(text, 'hermes')).toEqual({
        calls: [call(0, 'lookup', '{"q": "FR"}'), call(1, 'lookup', '{"name": "JP"}')],
        text: 'Let me check both.',
      })
      expect(extractTextToolCalls(text, 'auto')).toEqual(extractTextToolCalls(text, 'hermes'))
      expect(extractTextToolCalls(text, 'qwen')).toEqual(extractTextToolCalls(text, 'hermes'))
    })

    it('reads Qwen\'s "parameters", a call on one line, and an unclosed tag at the end (the server stopped on </tool_call>)', () => {
      expect(extractTextToolCalls('<tool_call>{"name": "get_time", "parameters": {"tz": "Asia/Shanghai"}}</tool_call>', 'qwen').calls)
        .toEqual([call(0, 'get_time', '{"tz": "Asia/Shanghai"}')])
      expect(extractTextToolCalls('Sure.\n<tool_call>\n{"name": "lookup", "arguments": {"q": "FR"}}', 'auto'))
        .toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}')], text: 'Sure.' })
    })

    it('hands malformed arguments on as written, for the pipeline to repair or refuse', () => {
      const broken = [
        '{"q": "FR",}', // a trailing comma
        "{'q': 'FR'}", // single quotes
        '{"q"："巴黎，法国"}', // a full-width colon, and a Chinese comma inside a string
        '"{\\"q\\": \\"FR\\"}"', // encoded twice
      ]
      for (const args of broken) {
        expect(extractTextToolCalls(`<tool_call>{"name": "lookup", "arguments": ${args}}</tool_call>`, 'auto').calls).toEqual([call(0, 'lookup', args)])
      }
      // Cut off, tag and all: the arguments run to the end of the text.
      expect(extractTextToolCalls('<tool_call>{"name": "lookup", "arguments": {"q": "FR", "limit": 5', 'auto').calls).toEqual([call(0, 'lookup', '{"q": "FR", "limit": 5')])
      // The envelope itself sloppy: Python quotes, full-width separators, a fence inside the tag.
      expect(extractTextToolCalls("<tool_call>{'name': 'lookup', 'arguments': {'q': 'FR'}}</tool_call>", 'auto').calls).toEqual([call(0, 'lookup', "{'q': 'FR'}")])
      expect(extractTextToolCalls('<tool_call>{"name"："lookup"，"arguments"：{"q": "FR"}}</tool_call>', 'auto').calls).toEqual([call(0, 'lookup', '{"q": "FR"}')])
      expect(extractTextToolCalls('<tool_call>\n```json\n{"name": "lookup", "arguments": {"q": "FR"}}\n```\n</tool_call>', 'auto').calls).toEqual([call(0, 'lookup', '{"q": "FR"}')])
      // A brace inside a string value does not end the arguments.
      expect(extractTextToolCalls('<tool_call>{"name": "notes", "arguments": {"text": "a } b {"}}</tool_call>', 'auto').calls).toEqual([call(0, 'notes', '{"text": "a } b {"}')])
    })

    it('gives a call without arguments "{}"', () => {
      expect(extractTextToolCalls('<tool_call>{"name": "whoami"}</tool_call>', 'auto').calls).toEqual([call(0, 'whoami', '{}')])
    })
  })

  describe('deepseek', () => {
    it('reads V3 and R1\'s form: the type, the name, the arguments in a json fence', () => {
      const text = `I will look both up.${DS.begin}${DS.call}function${DS.sep}lookup\n\`\`\`json\n{"q": "FR"}\n\`\`\`${DS.callEnd}\n${DS.call}function${DS.sep}lookup\n\`\`\`json\n{"q": "JP",}\n\`\`\`${DS.callEnd}${DS.end}`
      expect(extractTextToolCalls(text, 'deepseek')).toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}'), call(1, 'lookup', '{"q": "JP",}')], text: 'I will look both up.' })
      expect(extractTextToolCalls(text, 'auto')).toEqual(extractTextToolCalls(text, 'deepseek'))
    })

    it('reads V3.1\'s form, the name then the arguments, and the tokens written with ASCII bars and underscores', () => {
      expect(extractTextToolCalls(`${DS.begin}${DS.call}lookup${DS.sep}{"q": "FR"}${DS.callEnd}${DS.end}`, 'auto'))
        .toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}')], text: '' })
      expect(extractTextToolCalls('<|tool_calls_begin|><|tool_call_begin|>lookup<|tool_sep|>{"q": "JP"}<|tool_call_end|><|tool_calls_end|>', 'deepseek').calls)
        .toEqual([call(0, 'lookup', '{"q": "JP"}')])
    })

    it('reads a reply cut off before its end tokens', () => {
      expect(extractTextToolCalls(`${DS.begin}${DS.call}lookup${DS.sep}{"q": "FR"}`, 'auto').calls).toEqual([call(0, 'lookup', '{"q": "FR"}')])
    })
  })

  describe('mistral', () => {
    it('reads the list before tokenizer v11', () => {
      expect(extractTextToolCalls('[TOOL_CALLS] [{"name": "lookup", "arguments": {"q": "FR"}}, {"name": "lookup", "arguments": {"q": "JP"}, "id": "a1b2c3d4e"}]', 'mistral'))
        .toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}'), call(1, 'lookup', '{"q": "JP"}')], text: '' })
    })

    it('reads NAME[ARGS]{…} per call (v11), with a [CALL_ID] (v13), and a name straight before its arguments', () => {
      expect(extractTextToolCalls('Checking.[TOOL_CALLS]lookup[ARGS]{"q": "FR"}[TOOL_CALLS]lookup[CALL_ID]a1b2c3d4e[ARGS]{"q": "JP",}', 'auto'))
        .toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}'), call(1, 'lookup', '{"q": "JP",}')], text: 'Checking.' })
      expect(extractTextToolCalls('[TOOL_CALLS]lookup{"q": "FR"}', 'mistral').calls).toEqual([call(0, 'lookup', '{"q": "FR"}')])
    })
  })

  describe('what is not a call', () => {
    const nothing = (text: string, format: TextToolCallFormat = 'auto') => expect(extractTextToolCalls(text, format)).toEqual({ calls: [], text })

    it('plain prose, and prose that names the markers', () => {
      nothing('The capital of France is Paris.')
      nothing('I can write <tool_call> tags when a server has no parser.')
      nothing('Mistral starts its calls with [TOOL_CALLS] followed by a list.')
      nothing('DeepSeek uses tokens like <｜tool▁calls▁begin｜> around its calls.')
      nothing('')
    })

    it('a call shown in a Markdown code block or an inline code span: an example', () => {
      nothing('To call a tool, write:\n```xml\n<tool_call>\n{"name": "lookup", "arguments": {"q": "FR"}}\n</tool_call>\n```\nand the server runs it.')
      nothing('For Mistral:\n~~~\n[TOOL_CALLS]lookup[ARGS]{"q": "FR"}\n~~~')
      nothing('Write `<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>` to call it.')
      nothing(`Like this:\n\`\`\`\n${DS.begin}${DS.call}lookup${DS.sep}{"q": "FR"}${DS.callEnd}${DS.end}\n\`\`\``)
      // An unclosed fence runs to the end of the text, as in Markdown.
      nothing('```\n<tool_call>{"name": "lookup", "arguments": {}}</tool_call>')
    })

    it('the example stays; the real call after it is read', () => {
      const text = 'The format is `<tool_call>`. Now:\n<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>'
      expect(extractTextToolCalls(text, 'auto')).toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}')], text: 'The format is `<tool_call>`. Now:' })
    })

    it('markup of another format than the one asked for, and a second format after the first in auto', () => {
      nothing('<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>', 'mistral')
      nothing('[TOOL_CALLS]lookup[ARGS]{"q": "FR"}', 'hermes')
      const mixed = '<tool_call>{"name": "lookup", "arguments": {"q": "FR"}}</tool_call>\n[TOOL_CALLS]lookup[ARGS]{"q": "JP"}'
      expect(extractTextToolCalls(mixed, 'auto')).toEqual({ calls: [call(0, 'lookup', '{"q": "FR"}')], text: '[TOOL_CALLS]lookup[ARGS]{"q": "JP"}' })
    })

    it('a tag without a name, or a name no tool could have', () => {
      nothing('<tool_call>{"arguments": {"q": "FR"}}</tool_call>')
      nothing('<tool_call>{"name": "look up the capital", "arguments": {}}</tool_call>')
      nothing('<tool_call>{"name": "lookup", "arguments": {}} and then some words</tool_call>')
      // Ambiguous: which name, which arguments, would be a guess.
      nothing('<tool_call>{"name": "lookup", "name": "notes", "arguments": {}}</tool_call>')
      nothing('<tool_call>{"name": "lookup", "arguments": {"q": "FR"}, "parameters": {"q": "JP"}}</tool_call>')
    })
  })

  it('keeps the text between calls, one paragraph break at each cut', () => {
    const text = 'First.\n\n<tool_call>{"name": "a", "arguments": {}}</tool_call>\n\nBetween.  <tool_call>{"name": "b", "arguments": {}}</tool_call>  \nAfter.'
    expect(extractTextToolCalls(text, 'auto')).toEqual({ calls: [call(0, 'a', '{}'), call(1, 'b', '{}')], text: 'First.\n\nBetween.\n\nAfter.' })
  })

  it('lists its formats', () => {
    expect(TEXT_TOOL_CALL_FORMATS).toEqual(['auto', 'hermes', 'qwen', 'deepseek', 'mistral', 'qwen3-coder', 'glm', 'kimi', 'llama'])
  })
})

describe('HeldText', () => {
  function held(deltas: string[], shown?: (text: string) => string) {
    const out: string[] = []
    const text = new HeldText(['<tool_call>', '[TOOL_CALLS]'], (delta) => out.push(delta))
    for (const delta of deltas) text.push(delta)
    const whole = deltas.join('')
    text.finish(shown ? shown(whole) : whole)
    return out
  }

  it('shows text as it comes, holding only a tail that could become a marker, and trailing whitespace', () => {
    expect(held(['Paris ', 'is <', 'b>big</b>', '.  '])).toEqual(['Paris', ' is', ' <b>big</b>', '.', '  '])
    expect(held(['a [TOOL', '_CALLS] b'])).toEqual(['a', ' [TOOL_CALLS] b'])
  })

  it('holds a reply that starts with a leading marker (a bare JSON call is one only whole), and shows one that does not', () => {
    const out: string[] = []
    const text = new HeldText(['<tool_call>'], (delta) => out.push(delta), ['{'])
    for (const delta of ['  ', '\n{"name"', ': "a"}']) text.push(delta)
    expect(out).toEqual([])
    text.finish('')
    expect(out).toEqual([])
    const shown: string[] = []
    const prose = new HeldText(['<tool_call>'], (delta) => shown.push(delta), ['{'])
    for (const delta of [' ', 'Paris {', 'x}']) prose.push(delta)
    expect(shown).toEqual([' Paris {', 'x}'])
  })

  it('holds everything from a marker, split across deltas, and releases what the turn shows at the end', () => {
    const reply = ['Checking.\n<tool', '_call>{"name": "a", "arguments": {}}</tool_call>\nDone.']
    expect(held(reply, (whole) => extractTextToolCalls(whole, 'auto').text)).toEqual(['Checking.', '\n\nDone.'])
    // Leading whitespace that went out before the cut trimmed it does not break the rest.
    expect(held(['  Hi', ' <tool_call>{"name": "a"}</tool_call> there'], (whole) => extractTextToolCalls(whole, 'auto').text)).toEqual(['  Hi', '\n\nthere'])
  })
})

describe('runAgent with calls written as text', () => {
  let server: ScriptedServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  function registry() {
    const registry = new ToolRegistry()
    const ran: string[] = []
    registry.define(defineTool({
      name: 'lookup',
      description: 'Look up the capital of a country by its code.',
      args: Schema.object({ q: Schema.string().required() }),
      traits: { effect: 'read' },
      run: ({ q }) => {
        ran.push(q)
        return ({ FR: 'Paris', JP: 'Tokyo' } as Record<string, string>)[q] ?? `no country ${q}`
      },
    }))
    return { registry, ran }
  }

  async function run(first: string, options: { textToolCalls?: TextToolCallFormat | 'off'; pieceSize?: number; stream?: boolean } = {}) {
    const { registry: tools, ran } = registry()
    server = await startScriptedServer({ script: [{ text: first, pieceSize: options.pieceSize }, { text: 'Paris and Tokyo.' }], model: 'scripted' })
    const events: AgentEvent[] = []
    const result = await runAgent({
      endpoint: { baseURL: server.baseURL, model: 'scripted', ...(options.textToolCalls ? { textToolCalls: options.textToolCalls } : {}) },
      toolset: tools.toolset({ session: { id: 's' } }),
      messages: [{ role: 'user', content: 'Capitals of FR and JP?' }],
      stream: options.stream,
      onEvent: (event) => events.push(event),
    })
    const shown = events.flatMap((event) => (event.type === 'text' ? [event.delta] : []))
    return { result, ran, events, shown, requests: server.requests }
  }

  /** The conversation after a turn whose calls were read from its text: structured calls, then their results. */
  const conversation = (text: string, args: readonly [string, string], ids: readonly [string, string] = ['text_call_0', 'text_call_1']): ChatMessage[] => [
    { role: 'user', content: 'Capitals of FR and JP?' },
    {
      role: 'assistant',
      content: text,
      tool_calls: [
        { id: ids[0], type: 'function', function: { name: 'lookup', arguments: args[0] } },
        { id: ids[1], type: 'function', function: { name: 'lookup', arguments: args[1] } },
      ],
    },
    { role: 'tool', tool_call_id: ids[0], content: 'Paris' },
    { role: 'tool', tool_call_id: ids[1], content: 'Tokyo' },
    { role: 'assistant', content: 'Paris and Tokyo.' },
  ]

  const ARGS = ['{"q": "FR"}', '{"q": "JP"}'] as const
  /** XML values become JSON the reader writes, typed by the schema the turn sent. */
  const TYPED = ['{"q":"FR"}', '{"q":"JP"}'] as const
  const replies: Record<Exclude<TextToolCallFormat, 'auto'>, { text: string; args?: readonly [string, string]; ids?: readonly [string, string] }> = {
    hermes: { text: 'Checking.\n<tool_call>\n{"name": "lookup", "arguments": {"q": "FR"}}\n</tool_call>\n<tool_call>\n{"name": "lookup", "arguments": {"q": "JP"}}\n</tool_call>' },
    qwen: { text: 'Checking.\n<tool_call>\n{"name": "lookup", "parameters": {"q": "FR"}}\n</tool_call>\n<tool_call>\n{"name": "lookup", "parameters": {"q": "JP"}}\n</tool_call>' },
    deepseek: { text: `Checking.${DS.begin}${DS.call}function${DS.sep}lookup\n\`\`\`json\n{"q": "FR"}\n\`\`\`${DS.callEnd}${DS.call}lookup${DS.sep}{"q": "JP"}${DS.callEnd}${DS.end}` },
    mistral: { text: 'Checking.[TOOL_CALLS][{"name": "lookup", "arguments": {"q": "FR"}}, {"name": "lookup", "arguments": {"q": "JP"}}]' },
    'qwen3-coder': {
      text: 'Checking.\n<tool_call>\n<function=lookup>\n<parameter=q>\nFR\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=lookup>\n<parameter=q>\nJP\n</parameter>\n</function>\n</tool_call>',
      args: TYPED,
    },
    glm: { text: 'Checking.<tool_call>lookup<arg_key>q</arg_key><arg_value>FR</arg_value></tool_call><tool_call>lookup\n<arg_key>q</arg_key>\n<arg_value>JP</arg_value>\n</tool_call>', args: TYPED },
    kimi: {
      text: 'Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.lookup:0<|tool_call_argument_begin|>{"q": "FR"}<|tool_call_end|><|tool_call_begin|>functions.lookup:1<|tool_call_argument_begin|>{"q": "JP"}<|tool_call_end|><|tool_calls_section_end|>',
      ids: ['functions.lookup:0', 'functions.lookup:1'],
    },
    llama: { text: 'Checking.<|python_tag|>{"name": "lookup", "parameters": {"q": "FR"}}; {"name": "lookup", "parameters": {"q": "JP"}}<|eom_id|>' },
  }

  for (const [format, reply] of Object.entries(replies) as [Exclude<TextToolCallFormat, 'auto'>, (typeof replies)[keyof typeof replies]][]) {
    for (const setting of [format, undefined] as const) {
      it(`${format}${setting ? '' : ' (by default, auto)'}: runs the calls, shows the text without them, and sends them back as tool_calls`, async () => {
        // Streamed in small pieces: a marker split across deltas is held back all the same.
        const { result, ran, events, shown, requests } = await run(reply.text, { textToolCalls: setting, pieceSize: 3 })
        const ids = reply.ids ?? ['text_call_0', 'text_call_1']
        expect(ran).toEqual(['FR', 'JP'])
        expect(result.text).toBe('Paris and Tokyo.')
        expect(result.steps).toBe(2)
        expect(result.messages).toEqual(conversation('Checking.', reply.args ?? ARGS, ids))
        expect(shown.join('')).toBe('Checking.Paris and Tokyo.')
        expect(events.filter((event) => event.type === 'tool-call').map((event) => event.type === 'tool-call' && event.call.id)).toEqual(ids)
        // The second request carried the calls as structured calls, and a strict endpoint took it.
        expect(requests[1].body.messages![1]).toEqual(result.messages[1])
        expect(requests.flatMap((request) => request.problems)).toEqual([])
      })
    }
  }

  it('sends a repaired call back repaired, and a refused one as "{}": the conversation stays one the endpoint takes', async () => {
    const text = '<tool_call>{"name": "lookup", "arguments": {"q": "FR",}}</tool_call>\n<tool_call>{"name": "lookup", "arguments": {"q": "J'
    const { result, ran, requests } = await run(text)
    expect(ran).toEqual(['FR'])
    const [assistant, first, second] = result.messages.slice(1, 4)
    expect(assistant).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'text_call_0', type: 'function', function: { name: 'lookup', arguments: '{"q":"FR"}' } },
        { id: 'text_call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
      ],
    })
    expect(first).toEqual({ role: 'tool', tool_call_id: 'text_call_0', content: 'Note: your arguments were not valid JSON; they were repaired (trailing-comma) before the call ran. Send strict JSON.\n\nParis' })
    expect(second).toMatchObject({ role: 'tool', tool_call_id: 'text_call_1', content: expect.stringMatching(/^Error: Arguments are not valid JSON \(.+\)\. .*They cannot be repaired without guessing/) })
    expect(requests.flatMap((request) => request.problems)).toEqual([])
  })

  it('leaves the text alone with `off`: the reply is the answer', async () => {
    const { result, ran, shown } = await run(replies.hermes.text, { textToolCalls: 'off' })
    expect(ran).toEqual([])
    expect(result.text).toBe(replies.hermes.text)
    expect(result.steps).toBe(1)
    expect(shown.join('')).toBe(replies.hermes.text)
  })

  it('answers with prose and with a fenced example as they are, shown whole (not streamed: held until the end)', async () => {
    const example = 'Write it like this:\n```\n<tool_call>\n{"name": "lookup", "arguments": {"q": "FR"}}\n</tool_call>\n```'
    for (const text of ['Paris is the capital of France.', example]) {
      const { result, ran, shown } = await run(text, { pieceSize: 4 })
      expect(ran).toEqual([])
      expect(result).toMatchObject({ text, steps: 1, finishReason: 'stop' })
      expect(shown.join('')).toBe(text)
      await server!.close()
    }
  })

  it('reads calls from a reply that was not streamed', async () => {
    const { result, ran, shown } = await run(replies.mistral.text, { stream: false })
    expect(ran).toEqual(['FR', 'JP'])
    expect(result.messages[1]).toMatchObject({ content: 'Checking.' })
    expect(shown).toEqual(['Checking.', 'Paris and Tokyo.'])
  })

  it('leaves text alone when the reply has structured calls', async () => {
    const { registry: tools, ran } = registry()
    server = await startScriptedServer({
      script: [{ text: 'Example: <tool_call>{"name": "lookup", "arguments": {"q": "JP"}}</tool_call>', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"FR"}' }] }, { text: 'Paris.' }],
    })
    const result = await runAgent({ endpoint: { baseURL: server.baseURL, model: 'm' }, toolset: tools.toolset({ session: { id: 's' } }), messages: [{ role: 'user', content: 'FR?' }] })
    expect(ran).toEqual(['FR'])
    expect(result.messages[1]).toMatchObject({ content: 'Example: <tool_call>{"name": "lookup", "arguments": {"q": "JP"}}</tool_call>' })
  })

  it('refuses an unknown textToolCalls setting as a developer\'s mistake', async () => {
    const { registry: tools } = registry()
    const error = await runAgent({
      endpoint: { baseURL: 'http://127.0.0.1:9/v1', model: 'm', textToolCalls: 'gemma' as never },
      toolset: tools.toolset({ session: { id: 's' } }),
      messages: [],
    }).catch((error: unknown) => error)
    expect(AgentError.is(error) && error.code).toBe('INVALID_OPTIONS')
    expect((error as Error).message).toBe('runAgent: endpoint.textToolCalls must be one of \'auto\', \'hermes\', \'qwen\', \'deepseek\', \'mistral\', \'qwen3-coder\', \'glm\', \'kimi\', \'llama\', \'off\', got "gemma"')
  })

  it('runs a reply that is a bare JSON call to one of its tools, holding it back while it streams', async () => {
    const { result, ran, shown } = await run('{"name": "lookup", "parameters": {"q": "FR"}}', { pieceSize: 2 })
    expect(ran).toEqual(['FR'])
    expect(result.messages[1]).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'text_call_0', type: 'function', function: { name: 'lookup', arguments: '{"q": "FR"}' } }] })
    expect(shown.join('')).toBe('Paris and Tokyo.')
  })

  it('answers with JSON that is not a call as it is, shown whole once the turn ends', async () => {
    const text = '{"name": "Paris", "parameters": {"population": 2102650}}'
    const { result, ran, shown } = await run(text, { pieceSize: 5 })
    expect(ran).toEqual([])
    expect(result).toMatchObject({ text, steps: 1 })
    expect(shown).toEqual([text])
  })

  it('types XML values by the schema it sent: a value that cannot take the type comes back to the model as invalid_arguments naming it', async () => {
    const tools = new ToolRegistry()
    const got: unknown[] = []
    tools.define(defineTool({
      name: 'forecast',
      description: 'The forecast for a city, for some days.',
      args: Schema.object({ city: Schema.string().required(), days: Schema.natural().required() }),
      traits: { effect: 'read' },
      run: (args) => {
        got.push(args)
        return 'sunny'
      },
    }))
    const reply = (days: string) => `<tool_call>\n<function=forecast>\n<parameter=city>\n北京\n</parameter>\n<parameter=days>\n${days}\n</parameter>\n</function>\n</tool_call>`
    server = await startScriptedServer({ script: [{ text: reply('three') }, { text: reply('3') }, { text: '晴。' }] })
    const result = await runAgent({ endpoint: { baseURL: server.baseURL, model: 'm' }, toolset: tools.toolset({ session: { id: 's' } }), messages: [{ role: 'user', content: '北京天气？' }] })
    expect(got).toEqual([{ city: '北京', days: 3 }])
    expect(result.messages[1]).toMatchObject({ tool_calls: [{ function: { arguments: '{"city":"北京","days":"three"}' } }] })
    expect(result.messages[2]).toEqual({ role: 'tool', tool_call_id: 'text_call_0', content: 'Error: Invalid arguments:\n- $.days: expected a number, got string "three"' })
    expect(result.text).toBe('晴。')
  })

  it('leaves a call cut off at the token limit as text, runs nothing, and reports it', async () => {
    const text = 'Checking.\n<tool_call>\n<function=lookup>\n<parameter=q>\nF'
    const { registry: tools, ran } = registry()
    server = await startScriptedServer({ script: [{ text, finishReason: 'length' }] })
    const events: AgentEvent[] = []
    const result = await runAgent({
      endpoint: { baseURL: server.baseURL, model: 'm' },
      toolset: tools.toolset({ session: { id: 's' } }),
      messages: [{ role: 'user', content: 'FR?' }],
      onEvent: (event) => events.push(event),
    })
    expect(ran).toEqual([])
    expect(result).toMatchObject({ text, steps: 1, finishReason: 'length' })
    expect(events.filter((event) => event.type === 'text-call-cut-off')).toEqual([
      { type: 'text-call-cut-off', step: 1, cutOff: { format: 'qwen3-coder', name: 'lookup', at: 10, reason: 'the value of "q" never closed' } },
    ])
  })
})
