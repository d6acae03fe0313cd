import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, type Tool, ToolRegistry } from '../src'
import { createToolSearchTool, NO_MATCH_THRESHOLD, TOOL_SEARCH_NAME, ToolSearchIndex } from '../src/search'
import { isNoMatch, NO_MATCH_SHARE, NO_MATCH_SURE } from '../src/search/create-tool-search-tool'
import { testGate } from './gate'

const session = { id: 's1', platform: 'discord', userId: 'u1' }

function tool(name: string, description: string, extra: Partial<Parameters<typeof defineTool>[0]> = {}) {
  return defineTool({ name, description, traits: { effect: 'read' }, run: () => `${name} ran`, ...extra })
}

function registryWith(...tools: Tool[]) {
  const registry = new ToolRegistry()
  const disposers = tools.map((item) => registry.define(item))
  return { registry, disposers }
}

const weatherArgs = Schema.object({ city: Schema.string().description('City name').required() })
const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather and forecast for a city.',
  args: weatherArgs,
  traits: { effect: 'read' },
  run: ({ city }) => `sunny in ${city}`,
})
const deploy = tool('deploy_site', 'Deploy the website to production.', { traits: { effect: 'exec' } })
const translate = tool('translate_text', '把文本翻译成另一种语言')
const echo = tool('echo', 'Repeat a text.')

async function search(toolset: ReturnType<ToolRegistry['toolset']>, query: string, limit?: number) {
  const [result] = await toolset.execute([{ id: 'q', name: TOOL_SEARCH_NAME, arguments: { query, ...limit && { limit } } }])
  expect(result.status).toBe('ok')
  return JSON.parse(result.content) as { tools: any[]; message?: string }
}

describe('search mode', () => {
  it('advertises eager tools plus tool_search, whose description summarizes the deferred tools', () => {
    const { registry } = registryWith(weather, deploy, translate, echo)
    const toolset = registry.toolset({ session, mode: 'search', eager: ['ech*'] })
    expect(toolset.definitions('json').map((d) => d.name)).toEqual(['echo', TOOL_SEARCH_NAME])
    expect(toolset.deferred).toEqual(['deploy_site', 'get_weather', 'translate_text'])
    const [, search] = toolset.definitions('json')
    expect(search.description).toContain('3 tools are available this way:\n'
      + '- deploy_site: Deploy the website to production.\n'
      + '- get_weather: Current weather and forecast for a city.\n'
      + '- translate_text: 把文本翻译成另一种语言')
    expect(search.parameters).toMatchObject({ properties: { query: { type: 'string' }, limit: { default: 5, maximum: 20 } }, required: ['query'] })

    const names = registry.toolset({ session, mode: 'search', summary: 'names' }).definitions('json')
    expect(names.map((d) => d.name)).toEqual([TOOL_SEARCH_NAME])
    expect(names[0].description).toContain('4 tools are available this way:\ndeploy_site, echo, get_weather, translate_text')
    const none = registry.toolset({ session, mode: 'search', summary: 'none' }).definitions('json')[0]
    expect(none.description).toMatch(/4 tools are available this way\.$/)
  })

  it('defers tools declared with mode "search" in an ordinary toolset', () => {
    const lazy = tool('rare_report', 'Build the quarterly report.', { mode: 'search' })
    const { registry } = registryWith(echo, lazy)
    const toolset = registry.toolset({ session })
    expect(toolset.definitions('openai').map((d) => d.function.name)).toEqual(['echo', TOOL_SEARCH_NAME])
    expect(toolset.deferred).toEqual(['rare_report'])
    // Without deferred tools there is no tool_search.
    expect(registryWith(echo).registry.toolset({ session }).definitions('json').map((d) => d.name)).toEqual(['echo'])
  })

  it('returns full definitions of the best matches in the dialect the toolset was asked for', async () => {
    const { registry } = registryWith(weather, deploy, translate, echo)
    const toolset = registry.toolset({ session, mode: 'search' })
    toolset.definitions('openai')
    const { tools } = await search(toolset, 'weather forecast for Berlin tomorrow')
    expect(tools[0]).toEqual({
      type: 'function',
      function: expect.objectContaining({
        name: 'get_weather',
        description: 'Current weather and forecast for a city.',
        parameters: expect.objectContaining({ properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] }),
      }),
    })
    const chinese = await search(registry.toolset({ session, mode: 'search' }), '帮我翻译这段文本', 1)
    expect(chinese.tools).toEqual([expect.objectContaining({ name: 'translate_text' })])
  })

  it('answers in a fixed dialect when the toolset names one', async () => {
    const { registry } = registryWith(weather, deploy, translate, echo)
    const toolset = registry.toolset({ session, mode: 'search', dialect: 'anthropic' })
    toolset.definitions('openai')
    const { tools } = await search(toolset, 'weather in a city', 1)
    expect(tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ required: ['city'] }) })])
  })

  it('says so when nothing matches well', async () => {
    const { registry } = registryWith(weather, deploy, translate, echo)
    const result = await search(registry.toolset({ session, mode: 'search' }), 'order a large pepperoni pizza')
    expect(result.tools).toEqual([])
    expect(result.message).toContain('No tool matches "order a large pepperoni pizza" well')
  })

  it('keeps deferred tools callable whether or not they were searched', async () => {
    const { registry } = registryWith(weather, echo)
    const toolset = registry.toolset({ session, mode: 'search', eager: ['echo'] })
    const [result] = await toolset.execute([{ id: '1', name: 'get_weather', arguments: { city: 'Oslo' } }])
    expect(result).toMatchObject({ status: 'ok', content: 'sunny in Oslo' })
    expect(toolset.has('get_weather')).toBe(true)
    // ...and validated like any other call.
    const [bad] = await toolset.execute([{ id: '2', name: 'get_weather', arguments: {} }])
    expect(bad).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })

  it('hands out the definitions tool_search returned, the same objects each time, for the next request', async () => {
    const { registry } = registryWith(weather, deploy, echo)
    const toolset = registry.toolset({ session, mode: 'search', eager: ['echo'] })
    toolset.definitions('openai')
    const [result] = await toolset.execute([{ id: 'q', name: TOOL_SEARCH_NAME, arguments: { query: 'weather forecast' } }])
    const names = (result.data as { matches: { name: string }[] }).matches.map((match) => match.name)
    expect(names).toEqual(['get_weather'])
    const loaded = toolset.definitionsOf([...names, 'no_such_tool'], 'openai')
    expect(loaded).toEqual(JSON.parse(result.content).tools)
    expect(loaded[0]).toBe(toolset.definitionsOf(['get_weather'], 'openai')[0])
    expect(Object.isFrozen(loaded[0])).toBe(true)
    expect(toolset.definitionsOf(['deploy_site', 'echo'], 'json').map((definition) => definition.name)).toEqual(['deploy_site', 'echo'])
  })

  it('applies permissions to searched tools; tool_search itself is a read', async () => {
    const { registry } = registryWith(weather, deploy)
    const { gate, log } = testGate((request) => ({ decision: request.effect === 'exec' ? 'deny' : 'allow', reason: 'no deploys' }))
    registry.permissions = gate
    const toolset = registry.toolset({ session, mode: 'search' })
    const { tools } = await search(toolset, 'deploy the website')
    expect(tools.map((d) => d.name)).toEqual(['deploy_site'])
    const [result] = await toolset.execute([{ id: '1', name: 'deploy_site', arguments: {} }])
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(log).toEqual([`authorize tool:${TOOL_SEARCH_NAME} read`, 'authorize tool:deploy_site exec'])
  })

  it('never returns or lists a tool the session cannot see, even named exactly', async () => {
    const secret = tool('admin_reset', 'Reset every user password.', { visibility: (s) => (s.authority ?? 0) >= 4 })
    const { registry } = registryWith(weather, secret)
    const toolset = registry.toolset({ session, mode: 'search' })
    expect(toolset.definitions('json')[0].description).not.toContain('admin_reset')
    const result = await search(toolset, 'admin_reset')
    expect(result.tools.map((d) => d.name)).not.toContain('admin_reset')
    const [call] = await toolset.execute([{ id: '1', name: 'admin_reset', arguments: {} }])
    expect(call.code).toBe('unknown_tool')
    // An admin sees it.
    const admin = await search(registry.toolset({ session: { ...session, authority: 4 }, mode: 'search' }), 'admin_reset')
    expect(admin.tools.map((d) => d.name)).toEqual(['admin_reset'])
  })

  it('only returns the toolset\'s own deferred tools, not eager or excluded ones', async () => {
    const { registry } = registryWith(weather, deploy, echo)
    const toolset = registry.toolset({ session, mode: 'search', eager: ['get_weather'], exclude: ['deploy_*'] })
    expect((await search(toolset, 'weather forecast')).tools).toEqual([])
    expect((await search(toolset, 'deploy website')).tools).toEqual([])
    expect((await search(toolset, 'echo repeat text')).tools.map((d) => d.name)).toEqual(['echo'])
  })

  it('follows define and dispose: the registry index updates incrementally', async () => {
    const { registry, disposers } = registryWith(weather, echo)
    expect((await search(registry.toolset({ session, mode: 'search' }), 'deploy website')).tools).toEqual([])
    const dispose = registry.define(deploy)
    expect((await search(registry.toolset({ session, mode: 'search' }), 'deploy website')).tools.map((d) => d.name)).toEqual(['deploy_site'])
    dispose()
    dispose()
    disposers[0]()
    const toolset = registry.toolset({ session, mode: 'search' })
    expect(toolset.deferred).toEqual(['echo'])
    expect((await search(toolset, 'deploy website')).tools).toEqual([])
    expect((await search(toolset, 'weather city')).tools).toEqual([])
  })

  it('caps limit at 20 and defaults it to 5', async () => {
    const many = Array.from({ length: 30 }, (_, i) => tool(`weather_${i}`, `Weather report number ${i}.`))
    const { registry } = registryWith(...many)
    const toolset = registry.toolset({ session, mode: 'search' })
    expect((await search(toolset, 'weather report')).tools).toHaveLength(5)
    expect((await search(toolset, 'weather report', 20)).tools).toHaveLength(20)
    const [tooMany] = await toolset.execute([{ id: '1', name: TOOL_SEARCH_NAME, arguments: { query: 'weather', limit: 50 } }])
    expect(tooMany).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })
})

describe('createToolSearchTool', () => {
  it('is a read tool that asks definitionsOf for the matches in rank order', async () => {
    const index = new ToolSearchIndex()
    const tools = [
      { name: 'alpha', description: 'Sort a list of numbers.' },
      { name: 'beta', description: 'Sort and deduplicate a list of words.' },
      { name: 'gamma', description: 'Unrelated.' },
    ]
    for (const item of tools) index.add(item)
    index.add({ name: 'hidden', description: 'Sort anything at all, sort sort.' })
    const asked: string[][] = []
    const search = createToolSearchTool({
      index,
      tools,
      accept: (name) => name !== 'beta',
      definitionsOf: (names) => {
        asked.push(names)
        return names.map((name) => ({ name }))
      },
    })
    expect(search.traits.effect).toBe('read')
    expect(search.name).toBe(TOOL_SEARCH_NAME)
    const output = await search.run({ query: 'sort numbers', limit: 5 }, {} as any) as { text: string; data: any }
    expect(JSON.parse(output.text)).toEqual({ tools: [{ name: 'alpha' }] })
    expect(asked).toEqual([['alpha']])
    expect(output.data.matches.map((m: any) => m.name)).toEqual(['alpha'])
    // Below the threshold, but it has every word of the query: still a good match.
    expect(output.data.matches[0]).toMatchObject({ coverage: 1, score: expect.any(Number) })
    expect(output.data.matches[0].score).toBeLessThan(NO_MATCH_THRESHOLD)
  })
})

describe('tool_search for Chinese users', () => {
  // Sixty English tools, as a bot's tool packs would have, and a few described in Chinese.
  const english: [string, string][] = [
    ['convert_currency', 'Convert an amount between currencies at today\'s exchange rate.'],
    ['stock_quote', 'Get the latest price of a stock by its ticker symbol.'],
    ['tide_times', 'High and low tide times and the tide forecast for a harbour.'],
    ['send_email', 'Send an e-mail to one or more recipients.'],
    ['read_inbox', 'List the newest messages in the mailbox.'],
    ['create_event', 'Create a calendar event with a title, start and end time.'],
    ['list_events', 'List calendar events between two dates.'],
    ['set_reminder', 'Remind the user of something at a given time.'],
    ['set_alarm', 'Set an alarm clock that rings at a time of day.'],
    ['start_timer', 'Start a countdown timer.'],
    ['read_file', 'Read a text file from the workspace.'],
    ['write_file', 'Write text to a file in the workspace.'],
    ['list_directory', 'List the files and folders in a directory.'],
    ['search_files', 'Find files whose names match a glob pattern.'],
    ['grep', 'Search file contents for a regular expression.'],
    ['git_status', 'Show the working tree status of a git repository.'],
    ['git_commit', 'Record staged changes in a git repository.'],
    ['open_pull_request', 'Open a pull request on GitHub.'],
    ['list_issues', 'List open issues of a GitHub repository.'],
    ['http_get', 'Fetch a URL over HTTP and return the body.'],
    ['web_search', 'Search the web and return the top results.'],
    ['summarize_page', 'Summarize the text of a web page.'],
    ['wikipedia_lookup', 'Look up an article on Wikipedia.'],
    ['dictionary_define', 'Give the definition of an English word.'],
    ['spell_check', 'Check the spelling of a text.'],
    ['calculator', 'Evaluate an arithmetic expression.'],
    ['unit_convert', 'Convert a quantity between units, such as miles to kilometres.'],
    ['random_number', 'Pick a random number in a range.'],
    ['roll_dice', 'Roll dice for a tabletop game.'],
    ['flip_coin', 'Flip a coin.'],
    ['play_music', 'Play a song or a playlist on the speaker.'],
    ['pause_music', 'Pause the music that is playing.'],
    ['set_volume', 'Set the speaker volume.'],
    ['turn_on_light', 'Turn on a smart light in a room.'],
    ['turn_off_light', 'Turn off a smart light in a room.'],
    ['set_thermostat', 'Set the thermostat to a temperature.'],
    ['lock_door', 'Lock a smart door lock.'],
    ['order_food', 'Order food from a restaurant for delivery.'],
    ['find_restaurant', 'Find restaurants nearby by cuisine and rating.'],
    ['book_table', 'Book a table at a restaurant.'],
    ['book_flight', 'Book a flight between two airports.'],
    ['book_hotel', 'Book a hotel room in a city.'],
    ['call_taxi', 'Call a taxi to a pickup address.'],
    ['get_directions', 'Get driving or walking directions between two places.'],
    ['traffic_status', 'Current traffic on a road or route.'],
    ['track_package', 'Track a parcel by its tracking number.'],
    ['create_invoice', 'Create an invoice for a customer.'],
    ['pay_bill', 'Pay a bill from the user\'s account.'],
    ['account_balance', 'Show the balance of a bank account.'],
    ['add_todo', 'Add an item to the to-do list.'],
    ['list_todos', 'List the items on the to-do list.'],
    ['take_note', 'Save a note.'],
    ['search_notes', 'Search the saved notes.'],
    ['create_poll', 'Create a poll in a chat channel.'],
    ['kick_member', 'Remove a member from a chat group.'],
    ['mute_member', 'Mute a member of a chat group for a while.'],
    ['generate_image', 'Generate an image from a text prompt.'],
    ['describe_image', 'Describe what an image shows.'],
    ['ocr_image', 'Extract the text in an image.'],
    ['speech_to_text', 'Transcribe an audio recording to text.'],
  ]
  const chinese = [
    tool('weather', '查询城市的实时天气和未来几天的天气预报', { args: Schema.object({ city: Schema.string().description('城市名') }) }),
    tool('translate', '把文本翻译成另一种语言，如中文、英文、日文', { args: Schema.object({ text: Schema.string().description('要翻译的文本'), target: Schema.string().description('目标语言') }) }),
    tool('run_script', '运行 Python 或 Shell 脚本并返回输出'),
    tool('express_tracking', '查询快递单号的物流状态'),
  ]
  const toolset = () => registryWith(...english.map(([name, description]) => tool(name, description)), ...chinese).registry.toolset({ session, mode: 'search' })
  const first = async (query: string) => (await search(toolset(), query)).tools[0]?.name

  it('finds tools from the words and natural sentences of the issue', async () => {
    expect(english).toHaveLength(60)
    expect(await first('天气')).toBe('weather')
    expect(await first('翻译')).toBe('translate')
    expect(await first('明天杭州天气怎么样')).toBe('weather')
    // `翻成` is a word no tool has: its characters find `翻译成`.
    expect(await first('帮我把这句话翻成英文')).toBe('translate')
    // The name is the only English the `weather` tool has.
    expect(await first('weather forecast')).toBe('weather')
  })

  it('matches mixed queries, Traditional characters and full-width forms', async () => {
    expect(await first('用 python 跑一下这个脚本')).toBe('run_script')
    expect(await first('用python跑一下这个脚本')).toBe('run_script')
    expect(await first('請問明天臺北天氣如何')).toBe('weather')
    expect(await first('ｗｅａｔｈｅｒ')).toBe('weather')
    expect(await first('我的快遞到哪裡了，單號是ＳＦ１２３４５')).toBe('express_tracking')
    // English queries keep finding English tools among them.
    expect(await first('convert 30 euros to yen at the exchange rate')).toBe('convert_currency')
    expect(await first('when is high tide in the harbour')).toBe('tide_times')
  })

  it('calibrates "no match" for Chinese requests on the best hit\'s share of the attainable evidence', () => {
    const hit = (score: number, share: number) => [{ name: 'aiProductQualityAssessment', score, coverage: 0.5, share, named: false }]
    const nearMiss = '我需要评估家里的空气质量，能不能给我每小时生成一份详细报告？'
    // A Chinese near miss: common words (评估, 质量, 报告) give a fair score, but other tools
    // hold far more of what the request asks for.
    expect(isNoMatch(hit(1.4, 0.1), NO_MATCH_THRESHOLD, nearMiss)).toBe(true)
    expect(isNoMatch(hit(1.4, NO_MATCH_SHARE), NO_MATCH_THRESHOLD, nearMiss)).toBe(false)
    expect(isNoMatch(hit(NO_MATCH_SURE, 0.1), NO_MATCH_THRESHOLD, nearMiss)).toBe(false)
    // English queries keep the plain threshold, and so does a query given without its text.
    expect(isNoMatch(hit(1.4, 0.1), NO_MATCH_THRESHOLD, 'assess the air quality at home every hour')).toBe(false)
    expect(isNoMatch(hit(1.4, 0.1))).toBe(false)
    // A tool with every word of the query, or named by it, always matches.
    expect(isNoMatch([{ ...hit(0.3, 0.1)[0], coverage: 1 }], NO_MATCH_THRESHOLD, nearMiss)).toBe(false)
    expect(isNoMatch([{ ...hit(0.3, 0.1)[0], named: true }], NO_MATCH_THRESHOLD, nearMiss)).toBe(false)
  })

  it('keeps answering when a tool fits part of a long sentence, and says "no match" when none fits', async () => {
    expect(await first('我下周要去杭州出差，顺便想看看那边的景点，先帮我查一下杭州下周的天气预报吧')).toBe('weather')
    expect(await first('这段日志看不懂，帮我把它翻译成中文，谢谢')).toBe('translate')
    for (const query of ['今天中午吃什么好呢', '给我讲个笑话吧', '帮我订一张去上海的高铁票']) {
      const result = await search(toolset(), query)
      expect(result.tools, query).toEqual([])
      expect(result.message, query).toContain(`No tool matches ${JSON.stringify(query)} well`)
    }
  })
})
