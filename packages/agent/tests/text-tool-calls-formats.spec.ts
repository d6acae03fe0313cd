// The formats added for issue 45: Qwen3-Coder's and GLM's XML, Kimi K2's tokens, Llama's tags,
// bare JSON, and Hermes's variants. Cases marked with a URL are the servers' own parser tests
// or outputs from issue reports, adapted to this API; the rest are ours.
import { defineTool, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { extractTextToolCalls, type TextToolCallFormat, type TextToolSchema } from '../src'

const call = (n: number, name: string, args: unknown, id = `text_call_${n}`) => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) })
/** The calls with their arguments parsed, for comparing values rather than spacing. */
const parsed = (text: string, format: TextToolCallFormat, tools?: TextToolSchema[]) => {
  const extracted = extractTextToolCalls(text, format, { tools })
  return { ...extracted, calls: extracted.calls.map((found) => ({ ...found, arguments: JSON.parse(found.arguments) as unknown })) }
}
const nothing = (text: string, format: TextToolCallFormat = 'auto', tools?: TextToolSchema[]) => expect(extractTextToolCalls(text, format, { tools })).toEqual({ calls: [], text })

// vLLM's fixtures for the Qwen3-Coder parser:
// https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_qwen3coder_tool_parser.py
const WEATHER: TextToolSchema = {
  name: 'get_current_weather',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, state: { type: 'string' }, unit: { type: 'string', enum: ['fahrenheit', 'celsius'] } },
    required: ['city', 'state'],
  },
}
const AREA: TextToolSchema = {
  name: 'calculate_area',
  parameters: { type: 'object', properties: { shape: { type: 'string' }, dimensions: { type: 'object' }, precision: { type: 'integer' } } },
}
const QWEN_TOOLS = [WEATHER, AREA]
const DALLAS = '<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>'

describe('qwen3-coder', () => {
  it('reads a block, with text before it, and parallel blocks (vLLM\'s parser tests)', () => {
    expect(extractTextToolCalls(DALLAS, 'qwen3-coder', { tools: QWEN_TOOLS })).toEqual({ calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' })], text: '' })
    const withContent = `Sure! Let me check the weather for you.${DALLAS}`
    expect(extractTextToolCalls(withContent, 'qwen3-coder', { tools: QWEN_TOOLS })).toEqual({
      calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' })],
      text: 'Sure! Let me check the weather for you.',
    })
    const parallel = `${DALLAS}\n${DALLAS.replace('Dallas', 'Orlando').replace('TX', 'FL')}`
    expect(extractTextToolCalls(parallel, 'auto', { tools: QWEN_TOOLS }).calls).toEqual([
      call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' }),
      call(1, 'get_current_weather', { city: 'Orlando', state: 'FL', unit: 'fahrenheit' }),
    ])
    // `auto` reads the same: the XML under `<tool_call>` is not Hermes's JSON.
    expect(extractTextToolCalls(withContent, 'auto', { tools: QWEN_TOOLS })).toEqual(extractTextToolCalls(withContent, 'qwen3-coder', { tools: QWEN_TOOLS }))
  })

  it('types values by the schema: an object written as JSON over lines, an integer, a string that looks like neither', () => {
    const text = '<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>'
    expect(parsed(text, 'qwen3-coder', QWEN_TOOLS).calls[0].arguments).toEqual({ shape: 'rectangle', dimensions: { width: 10, height: 20 }, precision: 2 })
    // vLLM's type-conversion test: integer, number (its "float"), boolean, string, object.
    const types: TextToolSchema = {
      name: 'test_types',
      parameters: { type: 'object', properties: { int_param: { type: 'integer' }, float_param: { type: 'number' }, bool_param: { type: 'boolean' }, str_param: { type: 'string' }, obj_param: { type: 'object' } } },
    }
    const typed = '<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n<parameter=float_param>\n3.14\n</parameter>\n<parameter=bool_param>\ntrue\n</parameter>\n<parameter=str_param>\nhello world\n</parameter>\n<parameter=obj_param>\n{"key": "value"}\n</parameter>\n</function>\n</tool_call>'
    expect(parsed(typed, 'qwen3-coder', [types]).calls[0].arguments).toEqual({ int_param: 42, float_param: 3.14, bool_param: true, str_param: 'hello world', obj_param: { key: 'value' } })
  })

  it('types by anyOf and type arrays (Pydantic\'s Optional), null where the schema allows it (vLLM)', () => {
    const tool: TextToolSchema = {
      name: 'test_anyof',
      parameters: {
        type: 'object',
        properties: {
          anyof_int: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: 5 },
          anyof_str: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          anyof_array: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
          anyof_obj: { anyOf: [{ type: 'object' }, { type: 'null' }] },
          type_as_array: { type: ['integer', 'null'] },
          multi_non_null: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
          nothing: { type: ['string', 'null'] },
          ref: { $ref: '#/$defs/Count' },
        },
        $defs: { Count: { type: 'integer' } },
      },
    }
    const param = (key: string, value: string) => `<parameter=${key}>\n${value}\n</parameter>\n`
    const text = `<tool_call>\n<function=test_anyof>\n${param('anyof_int', '5')}${param('anyof_str', 'hello')}${param('anyof_array', '["a", "b", "c"]')}${param('anyof_obj', '{"key": "value"}')}${param('type_as_array', '42')}${param('multi_non_null', 'some text')}${param('nothing', 'null')}${param('ref', '7')}</function>\n</tool_call>`
    expect(parsed(text, 'qwen3-coder', [tool]).calls[0].arguments).toEqual({
      anyof_int: 5, anyof_str: 'hello', anyof_array: ['a', 'b', 'c'], anyof_obj: { key: 'value' }, type_as_array: 42, multi_non_null: 'some text', nothing: null, ref: 7,
    })
  })

  it('keeps a multi-line value whole but for the markup\'s own line breaks, and Chinese as it is', () => {
    const tool: TextToolSchema = { name: 'write_file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } }
    const text = '<tool_call>\n<function=write_file>\n<parameter=path>\nnotes/待办.md\n</parameter>\n<parameter=content>\n\n# 待办\n\n- 买牛奶\n  - 全脂\n\n</parameter>\n</function>\n</tool_call>'
    expect(parsed(text, 'qwen3-coder', [tool]).calls[0].arguments).toEqual({ path: 'notes/待办.md', content: '\n# 待办\n\n- 买牛奶\n  - 全脂\n' })
    // Without a schema every value is the string written, numbers and all.
    expect(parsed(DALLAS.replace('TX', '42'), 'qwen3-coder').calls[0].arguments).toEqual({ city: 'Dallas', state: '42', unit: 'fahrenheit' })
  })

  it('leaves a value that cannot take the schema\'s type as the string written, so validation names its path', async () => {
    const registry = new ToolRegistry()
    registry.define(defineTool({
      name: 'calculate_area',
      description: 'Area of a shape.',
      args: Schema.object({ shape: Schema.string().required(), precision: Schema.natural(), exact: Schema.boolean() }),
      run: () => 'ran',
    }))
    const toolset = registry.toolset({ session: { id: 's' } })
    const tools = toolset.definitions('openai').map((definition) => definition.function)
    const text = '<tool_call>\n<function=calculate_area>\n<parameter=shape>\ncircle\n</parameter>\n<parameter=precision>\ntwo\n</parameter>\n<parameter=exact>\nyes\n</parameter>\n</function>\n</tool_call>'
    const { calls } = extractTextToolCalls(text, 'auto', { tools })
    expect(JSON.parse(calls[0].arguments)).toEqual({ shape: 'circle', precision: 'two', exact: 'yes' })
    const [result] = await toolset.execute(calls)
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain('precision')
    expect(result.content).toContain('exact')
  })

  it('reads a call whose opening <tool_call> the model left out (vLLM; ollama#12751)', () => {
    // https://github.com/ollama/ollama/issues/12751
    const text = 'I\'ll check the weather for you.\n\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>'
    expect(extractTextToolCalls(text, 'auto', { tools: QWEN_TOOLS })).toEqual({ calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX' })], text: 'I\'ll check the weather for you.' })
    expect(extractTextToolCalls('<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>', 'qwen3-coder').calls).toEqual([call(0, 'get_current_weather', { city: 'Dallas' })])
  })

  it('reads a missing </parameter> before the next parameter of the schema, and only with the schema', () => {
    const text = 'Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>'
    expect(extractTextToolCalls(text, 'qwen3-coder', { tools: QWEN_TOOLS })).toEqual({
      calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' })],
      text: 'Let me check the weather for you:',
    })
    // Without the schema, where city's value ends would be a guess: not a call.
    nothing(text, 'qwen3-coder')
  })

  it('keeps a </parameter> inside a value that markup does not follow', () => {
    const tool: TextToolSchema = { name: 'write_file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } }
    const text = '<tool_call>\n<function=write_file>\n<parameter=path>\nREADME.md\n</parameter>\n<parameter=content>\nClose a value with </parameter> and go on.\n</parameter>\n</function>\n</tool_call>'
    expect(parsed(text, 'qwen3-coder', [tool]).calls[0].arguments).toEqual({ path: 'README.md', content: 'Close a value with </parameter> and go on.' })
  })

  it('reads the calls after a thinking block, and a call with no parameters', () => {
    const text = '<think>\n用户想知道天气，我需要调用工具。\n</think>\n\n我来查一下。\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\n北京\n</parameter>\n<parameter=state>\n北京市\n</parameter>\n</function>\n</tool_call>'
    expect(extractTextToolCalls(text, 'auto', { tools: QWEN_TOOLS })).toEqual({
      calls: [call(0, 'get_current_weather', { city: '北京', state: '北京市' })],
      text: '<think>\n用户想知道天气，我需要调用工具。\n</think>\n\n我来查一下。',
    })
    expect(extractTextToolCalls('<tool_call>\n<function=get_time>\n</function>\n</tool_call>', 'auto').calls).toEqual([call(0, 'get_time', {})])
  })

  it('leaves a cut-off call as text and reports it; the whole calls before it are read', () => {
    const cut = 'Checking.\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDall'
    expect(extractTextToolCalls(cut, 'auto', { tools: QWEN_TOOLS })).toEqual({
      calls: [],
      text: cut,
      cutOff: { format: 'qwen3-coder', name: 'get_current_weather', at: 10, reason: 'the value of "city" never closed' },
    })
    const afterWhole = `${DALLAS}\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nOrlando\n</parameter>\n`
    expect(extractTextToolCalls(afterWhole, 'auto', { tools: QWEN_TOOLS })).toEqual({
      calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' })],
      text: '<tool_call>\n<function=get_current_weather>\n<parameter=city>\nOrlando\n</parameter>',
      cutOff: { format: 'qwen3-coder', name: 'get_current_weather', at: DALLAS.length + 1, reason: 'the text ends before </function>' },
    })
    // Cut inside a tag, too.
    expect(extractTextToolCalls('<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n</func', 'qwen3-coder').cutOff?.reason).toBe('the text ends before </function>')
    expect(extractTextToolCalls('<tool_call>\n<function=get_curr', 'qwen3-coder').cutOff?.reason).toBe('the text ends inside <function=…>')
  })

  it('is an example inside Markdown code, and prose when the tags hold prose', () => {
    nothing(`The format:\n\`\`\`xml\n${DALLAS}\n\`\`\``)
    nothing('Qwen3-Coder writes <function=NAME> tags, then its parameters.')
    nothing('<tool_call>\n<function=get_current_weather>\nSome prose instead of parameters.\n</function>\n</tool_call>')
  })
})

// vLLM's GLM-4.5 and GLM-4.7 parser tests:
// https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_glm4_moe_tool_parser.py
// https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_glm47_moe_tool_parser.py
const GLM_TOOLS: TextToolSchema[] = [
  { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, date: { type: 'string' }, days: { type: 'integer' }, hourly: { type: 'boolean' } } } },
  { name: 'get_current_date', parameters: {} },
]

describe('glm', () => {
  it('reads the GLM-4.5 form, one pair per line, and several calls (vLLM)', () => {
    const one = '<tool_call>get_current_weather\n    <arg_key>city</arg_key>\n    <arg_value>Dallas</arg_value>\n    <arg_key>state</arg_key>\n    <arg_value>TX</arg_value>\n    <arg_key>unit</arg_key>\n    <arg_value>fahrenheit</arg_value>\n    </tool_call>'
    expect(extractTextToolCalls(one, 'glm')).toEqual({ calls: [call(0, 'get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' })], text: '' })
    expect(extractTextToolCalls(`${one}\n    ${one.replace('Dallas', 'Orlando')}`, 'auto').calls.map((found) => JSON.parse(found.arguments).city)).toEqual(['Dallas', 'Orlando'])
    const mixed = 'I will help you get the weather info.\n\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>\n</tool_call>\n\nmeaningwhile, I will also check the weather in Shanghai.\n\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Shanghai</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>\n</tool_call>'
    expect(extractTextToolCalls(mixed, 'auto', { tools: GLM_TOOLS })).toEqual({
      calls: [call(0, 'get_weather', { city: 'Beijing', date: '2025-08-01' }), call(1, 'get_weather', { city: 'Shanghai', date: '2025-08-01' })],
      text: 'I will help you get the weather info.\n\nmeaningwhile, I will also check the weather in Shanghai.',
    })
  })

  it('reads the GLM-4.7 form on one line, parallel calls, and calls without arguments (vLLM; lmstudio-bug-tracker#1528)', () => {
    expect(extractTextToolCalls('<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>', 'glm').calls).toEqual([call(0, 'get_weather', { city: 'Beijing' })])
    // https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1528
    const parallel = '<tool_call>get_file_info<arg_key>path</arg_key><arg_value>file1.jpg</arg_value></tool_call>\n<tool_call>get_file_info<arg_key>path</arg_key><arg_value>file2.jpg</arg_value></tool_call>'
    expect(extractTextToolCalls(parallel, 'auto').calls).toEqual([call(0, 'get_file_info', { path: 'file1.jpg' }), call(1, 'get_file_info', { path: 'file2.jpg' })])
    expect(extractTextToolCalls('Checking.<tool_call>get_current_date</tool_call>', 'auto')).toEqual({ calls: [call(0, 'get_current_date', {})], text: 'Checking.' })
    expect(extractTextToolCalls('<tool_call>get_current_date\n</tool_call>', 'glm').calls).toEqual([call(0, 'get_current_date', {})])
  })

  it('keeps the thinking block and the text, and Chinese values as they are', () => {
    const text = '<think>I want to get the weather.</think>\n\n我来查一下北京的天气。\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>\n</tool_call>'
    expect(extractTextToolCalls(text, 'auto', { tools: GLM_TOOLS })).toEqual({
      calls: [call(0, 'get_weather', { city: '北京', date: '2025-08-01' })],
      text: '<think>I want to get the weather.</think>\n\n我来查一下北京的天气。',
    })
  })

  it('types values by the schema, keeps strings strings, and trims only the markup\'s line breaks', () => {
    const text = '<tool_call>get_weather<arg_key>city</arg_key><arg_value>2025</arg_value><arg_key>days</arg_key><arg_value>3</arg_value><arg_key>hourly</arg_key><arg_value>false</arg_value><arg_key>date</arg_key><arg_value>\n  明天\n第二行\n</arg_value></tool_call>'
    expect(parsed(text, 'glm', GLM_TOOLS).calls[0].arguments).toEqual({ city: '2025', days: 3, hourly: false, date: '  明天\n第二行' })
    // A boolean the schema wants but the model did not write stays its text, for validation to refuse.
    expect(parsed(text.replace('false', 'no'), 'glm', GLM_TOOLS).calls[0].arguments).toMatchObject({ hourly: 'no' })
  })

  it('passes a key given twice on as written: which value was meant is not for the reader to pick', () => {
    const { calls } = extractTextToolCalls('<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value><arg_key>city</arg_key><arg_value>上海</arg_value></tool_call>', 'glm')
    expect(calls[0].arguments).toBe('{"city":"北京","city":"上海"}')
  })

  it('leaves an incomplete call as text and reports it (vLLM: "Incomplete tool calls should not be extracted")', () => {
    const text = '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>'
    expect(extractTextToolCalls(text, 'glm')).toEqual({ calls: [], text, cutOff: { format: 'glm', name: 'get_weather', at: 0, reason: 'the text ends before </tool_call>' } })
    expect(extractTextToolCalls('<tool_call>get_weather<arg_key>city</arg_key><arg_value>Bei', 'auto').cutOff).toEqual({ format: 'glm', name: 'get_weather', at: 0, reason: 'the value of "city" never closed' })
  })

  it('is not a call when the name is prose, or the pairs are broken', () => {
    nothing('I can write <tool_call> tags when a server has no parser.')
    nothing('<tool_call>get_weather<arg_key>city</arg_key>Beijing</tool_call>')
    nothing('<tool_call>get weather now</tool_call>')
  })
})

// vLLM's Kimi K2 parser tests:
// https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_kimi_k2_tool_parser.py
const KIMI = {
  begin: '<|tool_calls_section_begin|>',
  end: '<|tool_calls_section_end|>',
  call: (id: string, args: string) => `<|tool_call_begin|>${id} <|tool_call_argument_begin|>${args}<|tool_call_end|>`,
}
const kimiSection = (...calls: string[]) => KIMI.begin + calls.join('') + KIMI.end

describe('kimi', () => {
  it('reads one call, parallel calls and three, keeping the model\'s own ids (vLLM)', () => {
    expect(extractTextToolCalls(`I'll check. ${kimiSection(KIMI.call('functions.get_weather:0', '{"city": "Beijing"}'))}`, 'kimi')).toEqual({
      calls: [call(0, 'get_weather', '{"city": "Beijing"}', 'functions.get_weather:0')],
      text: 'I\'ll check.',
    })
    const three = kimiSection(
      KIMI.call('functions.get_weather:0', '{"city": "New York"}'),
      KIMI.call('functions.get_news:1', '{"topic": "technology"}'),
      KIMI.call('functions.send_email:2', '{"to": "user@example.com", "subject": "Daily Update"}'),
    )
    expect(extractTextToolCalls(`Multiple tasks. ${three}`, 'auto').calls).toEqual([
      call(0, 'get_weather', '{"city": "New York"}', 'functions.get_weather:0'),
      call(1, 'get_news', '{"topic": "technology"}', 'functions.get_news:1'),
      call(2, 'send_email', '{"to": "user@example.com", "subject": "Daily Update"}', 'functions.send_email:2'),
    ])
  })

  it('reads JSON over lines, markup inside strings, no namespace, empty arguments (vLLM)', () => {
    expect(extractTextToolCalls(kimiSection(KIMI.call('functions.process_data:0', '{\n  "name": "test",\n  "value": 123\n}')), 'kimi').calls[0].arguments).toBe('{\n  "name": "test",\n  "value": 123\n}')
    expect(extractTextToolCalls(kimiSection(KIMI.call('functions.process_html:0', '{"html": "<div>content</div><|tool_call_end|>"}')), 'kimi').calls[0].arguments).toBe('{"html": "<div>content</div><|tool_call_end|>"}')
    expect(extractTextToolCalls(kimiSection(KIMI.call('get_weather:0', '{"city": "Tokyo"}')), 'kimi').calls).toEqual([call(0, 'get_weather', '{"city": "Tokyo"}', 'get_weather:0')])
    expect(extractTextToolCalls(kimiSection(KIMI.call('functions.test:0', '{}')), 'kimi').calls).toEqual([call(0, 'test', '{}', 'functions.test:0')])
  })

  it('reads the singular section token and spaces between the tokens (llama.cpp#17376; llxprt-code#749)', () => {
    // https://github.com/vybestack/llxprt-code/issues/749
    const spaced = '<|tool_calls_section_begin|> <|tool_call_begin|> functions.list_directory:0 <|tool_call_argument_begin|> {"path": "/some/path"} <|tool_call_end|> <|tool_calls_section_end|>'
    expect(extractTextToolCalls(spaced, 'auto').calls).toEqual([call(0, 'list_directory', '{"path": "/some/path"}', 'functions.list_directory:0')])
    expect(extractTextToolCalls('<|tool_call_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"query": "北京天气"}<|tool_call_end|><|tool_call_section_end|>', 'kimi').calls)
      .toEqual([call(0, 'search', '{"query": "北京天气"}', 'functions.search:0')])
  })

  it('passes malformed arguments on for the pipeline, skips a bare index that names no tool, and numbers a repeated id', () => {
    // vLLM passes them on too; Dogu's pipeline then repairs or refuses them.
    expect(extractTextToolCalls(kimiSection(KIMI.call('functions.bad:0', '{"city": "Beijing",}')), 'kimi').calls).toEqual([call(0, 'bad', '{"city": "Beijing",}', 'functions.bad:0')])
    // vLLM guesses the tool from the arguments; that is a guess.
    nothing(kimiSection(KIMI.call('0', '{"city": "Tokyo"}')), 'kimi')
    expect(extractTextToolCalls(kimiSection(KIMI.call('functions.a:0', '{}'), KIMI.call('functions.a:0', '{}')), 'kimi').calls.map((found) => found.id)).toEqual(['functions.a:0', 'text_call_1'])
  })

  it('leaves a cut-off call as text and reports it', () => {
    const text = `查一下。${KIMI.begin}<|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"query": "北京`
    expect(extractTextToolCalls(text, 'auto')).toEqual({ calls: [], text, cutOff: { format: 'kimi', name: 'search', at: 4, reason: 'the text ends before <|tool_call_end|>' } })
    // A section whose end token never came, after calls that closed: those run.
    expect(extractTextToolCalls(`${KIMI.begin}${KIMI.call('functions.search:0', '{"query": "北京"}')}`, 'kimi').calls).toEqual([call(0, 'search', '{"query": "北京"}', 'functions.search:0')])
  })
})

describe('llama', () => {
  it('reads <|python_tag|> JSON, with "type": "function", calls separated by ";", and the turn\'s end token', () => {
    expect(extractTextToolCalls('<|python_tag|>{"name": "get_weather", "parameters": {"city": "San Francisco"}}<|eom_id|>', 'llama')).toEqual({
      calls: [call(0, 'get_weather', '{"city": "San Francisco"}')],
      text: '',
    })
    expect(extractTextToolCalls('<|python_tag|>{"type": "function", "name": "search", "parameters": {"query": "北京天气"}}', 'auto').calls).toEqual([call(0, 'search', '{"query": "北京天气"}')])
    // The separator of vLLM's Llama 3 JSON tests: https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_llama3_json_tool_parser.py
    const several = '<|python_tag|>{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}} ; {"name": "searchTool", "parameters": {"query": "test2"}}'
    expect(extractTextToolCalls(several, 'llama').calls).toEqual([call(0, 'searchTool', '{"query": "test1"}'), call(1, 'getOpenIncidentsTool', '{}'), call(2, 'searchTool', '{"query": "test2"}')])
  })

  it('reads Llama 4\'s <|python_start|> calls written as Python, and as JSON (vLLM\'s llama4_pythonic tests)', () => {
    // https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_llama4_pythonic_tool_parser.py
    expect(extractTextToolCalls("<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>", 'llama').calls).toEqual([call(0, 'get_weather', { city: 'LA', metric: 'C' })])
    const types = "<|python_start|>[register_user(name='Doe', age=9, address={'city': 'LA', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])]<|python_end|>"
    expect(parsed(types, 'auto').calls[0].arguments).toEqual({ name: 'Doe', age: 9, address: { city: 'LA', state: 'CA' }, role: null, passed_test: true, aliases: ['John', 'Johnny'] })
    const escaped = String.raw`<|python_start|>[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]<|python_end|>`
    expect(parsed(escaped, 'llama').calls[0].arguments).toEqual({ city: "Martha's Vineyard", metric: '"cool units"' })
    expect(extractTextToolCalls("<|python_start|>[get_weather(city='LA', metric='C'), get_weather(), do_something_cool(steps=[])]<|python_end|>", 'llama').calls)
      .toEqual([call(0, 'get_weather', { city: 'LA', metric: 'C' }), call(1, 'get_weather', {}), call(2, 'do_something_cool', { steps: [] })])
    expect(extractTextToolCalls('<|python_start|>{"name": "search", "parameters": {"query": "杭州"}}<|python_end|>', 'llama').calls).toEqual([call(0, 'search', '{"query": "杭州"}')])
  })

  it('is not a call for a built-in tool\'s method call, a positional argument, or an expression', () => {
    nothing('<|python_tag|>brave_search.call(query="weather in Paris")', 'llama')
    nothing("<|python_start|>[get_weather('LA')]<|python_end|>", 'llama')
    nothing('<|python_start|>[add(a=1+2)]<|python_end|>', 'llama')
  })

  it('leaves a cut-off call as text and reports it', () => {
    expect(extractTextToolCalls("<|python_start|>[get_weather(city='L", 'auto')).toMatchObject({ calls: [], cutOff: { format: 'llama', at: 0, reason: 'the text ends inside the calls' } })
    expect(extractTextToolCalls('<|python_tag|>{"name": "search", "parameters": {"query": "北京', 'llama')).toMatchObject({ calls: [], cutOff: { format: 'llama', name: 'search' } })
  })
})

describe('a bare JSON call', () => {
  const SEARCH: TextToolSchema = { name: 'web_search', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }

  it('is read when the whole message is one, naming a tool of this turn (Rapid-MLX#700)', () => {
    // https://github.com/raullenchai/Rapid-MLX/issues/700: Llama 3.1 answering 你好 with a call.
    const text = '{"name": "web_search", "parameters": {"query": "你好"}}'
    expect(extractTextToolCalls(text, 'auto', { tools: [SEARCH] })).toEqual({ calls: [call(0, 'web_search', '{"query": "你好"}')], text: '' })
    expect(extractTextToolCalls(`\n  ${text.replace('parameters', 'arguments')}\n`, 'llama', { tools: [SEARCH] }).calls).toEqual([call(0, 'web_search', '{"query": "你好"}')])
    expect(extractTextToolCalls('{"type": "function", "name": "web_search", "parameters": {"query": "x"}}', 'qwen', { tools: [SEARCH] }).calls).toHaveLength(1)
    // Several, as Llama separates them (vLLM's Llama 3 JSON tests).
    expect(extractTextToolCalls('{"name": "web_search", "parameters": {"query": "a"}}; {"name": "web_search", "parameters": {"query": "b"}}', 'llama', { tools: [SEARCH] }).calls).toHaveLength(2)
  })

  it('is an answer otherwise: prose around it, a name the toolset lacks, no tools given, no arguments key, other keys', () => {
    const tools = [SEARCH]
    // vLLM extracts this one; a sentence around an object is an answer that shows it.
    nothing('Here is the result: {"name": "web_search", "parameters": {"query": "x"}} Would you like to know more?', 'auto', tools)
    nothing('{"name": "Alice", "parameters": {"age": 30}}', 'auto', tools)
    nothing('{"name": "web_search", "parameters": {"query": "x"}}', 'auto')
    nothing('{"name": "web_search"}', 'auto', tools)
    nothing('{"name": "web_search", "parameters": {"query": "x"}, "confidence": 0.9}', 'auto', tools)
    nothing('{"name": "web_search", "parameters": {"query": "x"}, "type": "person"}', 'auto', tools)
    nothing('```json\n{"name": "web_search", "parameters": {"query": "x"}}\n```', 'auto', tools)
    // Hermes, DeepSeek, Mistral and the XML formats have markers of their own.
    nothing('{"name": "web_search", "parameters": {"query": "x"}}', 'hermes', tools)
  })

  it('is reported, not read, when the message ends inside it', () => {
    const text = '{"name": "web_search", "parameters": {"query": "北京'
    expect(extractTextToolCalls(text, 'auto', { tools: [SEARCH] })).toEqual({ calls: [], text, cutOff: { format: 'json', name: 'web_search', at: 0, reason: 'the text ends inside the call' } })
  })
})

describe('hermes variants seen in real output', () => {
  it('reads doubled braces, outer ones only or all of them (llamadart#43)', () => {
    // https://github.com/leehack/llamadart/pull/43: "Some models output {{...}} instead of {...} due to template issues".
    expect(extractTextToolCalls('<tool_call>\n{{"name": "search", "arguments": {"query": "北京天气"}}}\n</tool_call>', 'hermes').calls).toEqual([call(0, 'search', '{"query": "北京天气"}')])
    expect(extractTextToolCalls('<tool_call>\n{{"name": "search", "arguments": {{"query": "a {b} c", "filters": {{}}}}}}\n</tool_call>', 'auto').calls).toEqual([call(0, 'search', '{"query": "a {b} c", "filters": {}}')])
    // Doubled some places and not others, past the outer pair: no reading is certain.
    nothing('<tool_call>{{"name": "search", "arguments": {{"query": "x"}}}</tool_call>', 'hermes')
  })

  it('reads "args" for the arguments (ollama#18388)', () => {
    // https://github.com/ollama/ollama/pull/18388
    expect(extractTextToolCalls('<tool_call>\n{"name": "search", "args": {"query": "北京天气"}}\n</tool_call>', 'qwen').calls).toEqual([call(0, 'search', '{"query": "北京天气"}')])
    nothing('<tool_call>{"name": "search", "args": {"query": "a"}, "arguments": {"query": "b"}}</tool_call>', 'hermes')
  })
})

describe('any text', () => {
  // Pieces of every format's markup, shuffled with words: the readers meet every way a reply can break.
  const pieces = [
    '<tool_call>', '</tool_call>', '<function=search>', '</function>', '<parameter=query>', '</parameter>', '<arg_key>query</arg_key>', '<arg_value>', '</arg_value>',
    '<|tool_calls_section_begin|>', '<|tool_call_begin|>', 'functions.search:0', '<|tool_call_argument_begin|>', '<|tool_call_end|>', '<|tool_calls_section_end|>',
    '<|python_tag|>', '<|python_start|>', '<|python_end|>', '[search(query=', "'北京'", ')]', ';',
    '{"name": "search", "arguments": ', '{"query": "北京"}', '{{', '}}', '{', '}', '"', '\n', ' ', '```', '`', 'search', '北京天气', 'True', '5',
    '<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '[TOOL_CALLS]', '[ARGS]',
  ]
  const text = fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 4 })), { maxLength: 24 }).map((parts) => parts.join(''))
  const tools: TextToolSchema[] = [{ name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } } }]

  it('never throws, returns JSON-ish argument texts and distinct ids, and leaves text with no call as it was', () => {
    fc.assert(fc.property(text, fc.constantFrom<TextToolCallFormat>('auto', 'hermes', 'qwen3-coder', 'glm', 'kimi', 'llama', 'deepseek', 'mistral'), (input, format) => {
      const extracted = extractTextToolCalls(input, format, { tools })
      expect(new Set(extracted.calls.map((found) => found.id)).size).toBe(extracted.calls.length)
      for (const found of extracted.calls) expect(typeof found.arguments).toBe('string')
      if (!extracted.calls.length) expect(extracted.text).toBe(input)
      if (extracted.cutOff) expect(extracted.cutOff.at).toBeLessThan(input.length)
    }), { numRuns: 3000 })
  })

  it('reads a typed XML call as JSON that parses, whatever its values hold', () => {
    // Values of markup-like characters and line breaks (a CRLF counts as one line break, so no lone CR here).
    const value = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '<', '>', '/', '=', 'p', 'parameter', '1', '-', '.', 'e', '"', '{', '}', '北'), maxLength: 30 })
    fc.assert(fc.property(value, value, (query, limit) => {
      const written = `<tool_call>\n<function=search>\n<parameter=query>\n${query}\n</parameter>\n<parameter=limit>\n${limit}\n</parameter>\n</function>\n</tool_call>`
      const { calls } = extractTextToolCalls(written, 'qwen3-coder', { tools })
      // A value holding a line that opens a parameter, or the closing tag, is no call: which tag closes it is unclear.
      if (/\n<parameter=[^>\n]{1,128}>|<\/parameter>/.test(`\n${query}\n${limit}`)) return
      expect(calls).toHaveLength(1)
      const args = JSON.parse(calls[0].arguments) as { query: unknown; limit: unknown }
      expect(args.query).toBe(query)
      // The integer field: a number when the text is one in JSON's grammar, else the text itself, for validation to refuse.
      if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(limit.trim())) expect(args.limit).toBe(Number(limit.trim()))
      else expect(args.limit).toBe(limit)
    }), { numRuns: 2000 })
  })

  it('reads a GLM call\'s string values as written, whatever they hold but the closing tag', () => {
    const value = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '<', '>', '/', 'arg_value', 'tool_call', '北', '{', '"'), maxLength: 30 }).filter((raw) => !raw.includes('</arg_value>'))
    fc.assert(fc.property(value, (query) => {
      const { calls } = extractTextToolCalls(`<tool_call>search<arg_key>query</arg_key><arg_value>${query}</arg_value></tool_call>`, 'glm', { tools })
      expect(calls).toHaveLength(1)
      expect(JSON.parse(calls[0].arguments)).toEqual({ query: query.replace(/^\n/, '').replace(/\n$/, '') })
    }), { numRuns: 1000 })
  })
})
