import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool } from '../src'
import { definition } from '@dogu/schema'
import { type SearchDocument, searchFields } from '../src/search/search-document'
import { briefDescription, summarizeTools } from '../src/search/summarize-tools'
import { foldTraditional } from '../src/search/fold-traditional'
import { queryWords, tokenize } from '../src/search/tokenize'
import { EXACT_NAME_BOOST, ToolSearchIndex } from '../src/search/tool-search-index'

describe('tokenize', () => {
  it('splits identifiers on camelCase, snake_case, dots and dashes', () => {
    expect(tokenize('getWeatherForecast')).toEqual(['get', 'weather', 'forecast'])
    expect(tokenize('get_weather_forecast')).toEqual(['get', 'weather', 'forecast'])
    expect(tokenize('weather.forecast-daily')).toEqual(['weather', 'forecast', 'daili'])
    expect(tokenize('HTTPServerConfig')).toEqual(['http', 'server', 'config'])
    expect(tokenize('getPM2.5Level')).toEqual(['get', 'pm2', '5', 'level'])
  })

  it('lowercases, stems and drops stop words and e.g.', () => {
    expect(tokenize('Calculates the calculation of a Calculator, e.g. sums')).toEqual(['calcul', 'calcul', 'calcul', 'sum'])
    expect(tokenize('running files, searching directories')).toEqual(['run', 'file', 'search', 'directori'])
    expect(tokenize('the of and')).toEqual([])
  })

  it('segments Chinese into words, with the bigrams of longer words', () => {
    expect(tokenize('查询城市的天气预报')).toEqual(['查询', '城市', '天气', '预报'])
    // A word longer than two characters also yields its bigrams, so `克力` finds it.
    expect(tokenize('巧克力')).toEqual(['巧克力', '巧克', '克力'])
  })

  it('drops Chinese question words, requests and filler', () => {
    expect(tokenize('明天天气怎么样')).toEqual(['明天', '天气'])
    expect(tokenize('请帮我查一下杭州的天气吗？')).toEqual(['查', '杭州', '天气'])
    expect(tokenize('能不能帮我把这句话翻成英文')).toEqual(['句', '话', '翻成', '英文'])
  })

  it('drops Chinese function words, as English stop words are dropped', () => {
    // Pronouns, numerals, modal verbs, prepositions, conjunctions, adverbs and the verbs of
    // asking (了解, 知道, 进行): common in requests, rare in tool descriptions, so their
    // document frequency alone would make them weigh like a tool's topic.
    expect(tokenize('你能查找关于这个时期的文化信息吗')).toEqual(['查找', '时期', '文化', '信息'])
    expect(tokenize('我想了解一下最近两个月我的数据中的变化')).toEqual(['月', '数据', '变化'])
    expect(tokenize('如果可以的话，顺便对它们进行比较')).toEqual(['比较'])
  })

  it('folds full-width to half-width and Traditional to Simplified', () => {
    expect(tokenize('ｇｅｔＷｅａｔｈｅｒ　１２３')).toEqual(['get', 'weather', '123'])
    expect(tokenize('請幫我查詢臺北的天氣')).toEqual(tokenize('请帮我查询台北的天气'))
    expect(tokenize('請幫我查詢臺北的天氣')).toEqual(['查询', '台北', '天气'])
    expect(foldTraditional('翻譯這個檔案, ok')).toBe('翻译这个档案, ok')
  })

  it('splits mixed Chinese and English, spaced or not', () => {
    expect(tokenize('用 getWeather 查询天气')).toEqual(['get', 'weather', '查询', '天气'])
    expect(tokenize('用 python 跑一下这个脚本')).toEqual(['python', '跑', '脚本'])
    expect(tokenize('用python跑一下这个脚本')).toEqual(['python', '跑', '脚本'])
    expect(tokenize('比较USA和China123的军事力量')).toEqual(['比较', 'usa', 'china123', '军事', '力量'])
  })

  it('groups a query\'s terms by the word they come from, with characters to fall back on', () => {
    expect(queryWords('巧克力 API, 巧克力')).toEqual([
      { terms: ['巧克力', '巧克', '克力'], chars: ['巧', '克', '力'] },
      { terms: ['api'], chars: [] },
    ])
    expect(queryWords('weather forecasts for the weather')).toEqual([{ terms: ['weather'], chars: [] }, { terms: ['forecast'], chars: [] }])
    expect(queryWords('翻成')).toEqual([{ terms: ['翻成'], chars: ['翻', '成'] }])
  })
})

describe('searchFields', () => {
  it('reads parameter names, descriptions and enum values from JSON Schema, nested too', () => {
    expect(searchFields({
      name: 'book_hotel',
      description: 'Books a room.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'Where to stay' },
          room: { type: 'string', enum: ['single', 'double'] },
          guest: { type: 'object', properties: { fullName: { type: 'string', title: 'Name on the booking' } } },
          dates: { type: 'array', items: { type: 'object', properties: { checkIn: { description: 'Arrival day' } } } },
        },
      },
    })).toEqual({
      name: 'book_hotel',
      description: 'Books a room.',
      parameterNames: 'city room guest fullName dates checkIn',
      parameterText: 'Where to stay \nsingle \ndouble \nName on the booking \nArrival day',
    })
  })

  it('reads the fields of named definitions ($defs) that properties refer to', () => {
    const address = definition('address', Schema.object({ postcode: Schema.string().description('Postal code') }))
    const tool = defineTool({ name: 'ship', description: 'Ships a parcel.', args: Schema.object({ to: address, from: address }), run: () => '' })
    expect(searchFields(tool)).toMatchObject({ parameterNames: 'to from postcode', parameterText: 'Postal code' })
  })

  it('reads a defined tool through its schemastery args', () => {
    const tool = defineTool({
      name: 'send_mail',
      description: 'Sends an e-mail.',
      args: Schema.object({ recipient: Schema.string().description('Address to send to').required() }),
      run: () => '',
    })
    expect(searchFields(tool)).toMatchObject({ parameterNames: 'recipient', parameterText: 'Address to send to' })
  })
})

const catalog: SearchDocument[] = [
  { name: 'get_weather', description: 'Current weather and forecast for a city.', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } } },
  { name: 'sendMessage', description: 'Send a chat message to a user or a channel.', parameters: { type: 'object', properties: { text: { type: 'string' }, channel: { type: 'string' } } } },
  { name: 'fs.read_file', description: 'Read a text file from the workspace.', parameters: { type: 'object', properties: { path: { type: 'string', description: 'Relative file path' } } } },
  { name: 'convert_currency', description: 'Convert an amount between currencies at today\'s exchange rate.', parameters: { type: 'object', properties: { amount: { type: 'number' }, from: { type: 'string', description: 'ISO 4217 code' }, to: { type: 'string' } } } },
  { name: 'find', description: 'Find files by glob pattern.', parameters: { type: 'object', properties: { pattern: { type: 'string' } } } },
  { name: 'translate_text', description: '把文本翻译成另一种语言', parameters: { type: 'object', properties: { text: { type: 'string', description: '要翻译的文本' }, target: { type: 'string', description: '目标语言' } } } },
  { name: 'query_weather_cn', description: '查询指定城市的天气预报', parameters: { type: 'object', properties: { city: { type: 'string', description: '城市名称' } } } },
]

function indexOf(list = catalog) {
  const index = new ToolSearchIndex()
  for (const document of list) index.add(document)
  return index
}

const names = (hits: { name: string }[]) => hits.map((hit) => hit.name)

describe('ToolSearchIndex', () => {
  it('ranks by names, descriptions and parameters', () => {
    const index = indexOf()
    expect(names(index.search('what is the weather like in Paris tomorrow', { limit: 1 }))).toEqual(['get_weather'])
    expect(names(index.search('post a message in the team channel', { limit: 1 }))).toEqual(['sendMessage'])
    expect(names(index.search('how many yen is 30 euros at the current exchange rate', { limit: 1 }))).toEqual(['convert_currency'])
    // Only a parameter description says "relative path".
    expect(names(index.search('open the relative path docs/a.md', { limit: 1 }))).toEqual(['fs.read_file'])
  })

  it('ranks Chinese queries against Chinese descriptions', () => {
    const index = indexOf()
    expect(names(index.search('明天杭州天气怎么样', { limit: 1 }))).toEqual(['query_weather_cn'])
    expect(names(index.search('帮我把这段话翻译成英文', { limit: 1 }))).toEqual(['translate_text'])
  })

  it('gives a tool nothing for sharing only function words with a Chinese request', () => {
    const index = new ToolSearchIndex()
    index.add({ name: 'history_figures', description: '查找关于历史人物的资料，能够进行比较' })
    index.add({ name: 'query_weather_cn', description: '查询城市的天气预报' })
    // 能, 关于, 进行 and 最近 are all it shares with the first request.
    expect(index.search('你能告诉我关于最近进行的那场比赛吗', { limit: 5 })).toEqual([])
    expect(names(index.search('最近能查一下历史人物吗', { limit: 1 }))).toEqual(['history_figures'])
  })

  it('boosts a tool the query names exactly, in any spelling of the identifier', () => {
    const index = indexOf()
    for (const query of ['fs.read_file', 'fs_read_file', 'call fsReadFile please', 'send message']) {
      const [hit] = index.search(query, { limit: 3 })
      expect(hit.score, query).toBeGreaterThan(EXACT_NAME_BOOST)
    }
    expect(names(index.search('send message', { limit: 1 }))).toEqual(['sendMessage'])
    // A plain word in a sentence does not name the `find` tool.
    const hits = index.search('find the weather in Oslo', { limit: 3 })
    expect(names(hits)).toContain('find')
    expect(hits.every((hit) => hit.score < EXACT_NAME_BOOST)).toBe(true)
  })

  it('scores evidence in units of one distinctive word, whatever else the query says', () => {
    const index = indexOf()
    const [good] = index.search('weather forecast for a city', { limit: 1 })
    expect(good).toMatchObject({ name: 'get_weather', coverage: 1 })
    expect(good.score).toBeGreaterThan(1)
    // Words no tool has neither help nor hurt the score; they do lower the coverage.
    const [padded] = index.search('weather forecast for a city: Hangzhou 2024', { limit: 1 })
    expect(padded).toEqual({ name: 'get_weather', score: good.score, coverage: 0.6, share: good.share, named: false })
    const [weak] = index.search('bake a chocolate cake with strawberries for the city party', { limit: 1 })
    expect(weak.score).toBeLessThan(0.7)
    expect(weak.coverage).toBeLessThan(0.5)
    expect(index.search('zyzzyva quux', { limit: 5 })).toEqual([])
    expect(index.search('', { limit: 5 })).toEqual([])
    expect(index.search('weather', { limit: 5, threshold: 50 })).toEqual([])
  })

  it('lets names count in every language, and a word no tool has fall back on its characters', () => {
    const index = indexOf([
      { name: 'weather', description: '查询城市的实时天气和天气预报' },
      { name: 'tide_times', description: 'High and low tide times and the tide forecast.' },
      { name: 'translate', description: '把文本翻译成另一种语言' },
      { name: 'page_turn', description: '翻页' },
    ])
    // `weather` has no English but its name; the query holds all of it.
    expect(index.search('weather forecast', { limit: 2 })).toEqual([
      { name: 'weather', score: expect.any(Number), coverage: 0.5, share: expect.any(Number), named: true },
      { name: 'tide_times', score: expect.any(Number), coverage: 0.5, share: expect.any(Number), named: false },
    ])
    // A Chinese word on a tool with an English name weighs as a name word and a description
    // word together, as an English word on an English tool does.
    expect(index.search('天气', { limit: 1 })[0].score).toBeGreaterThan(0.7)
    // `翻成` is in no description: only a tool with both `翻` and `成` gets it.
    expect(index.search('翻成', { limit: 5 })).toEqual([{ name: 'translate', score: expect.any(Number), coverage: 1, share: 1, named: false }])
    expect(index.search('翻页', { limit: 1 }).map((hit) => hit.name)).toEqual(['page_turn'])
  })

  it('measures a hit\'s share of the evidence the query could get from the accepted tools', () => {
    const index = indexOf([
      { name: 'weather', description: '查询城市的实时天气和天气预报' },
      { name: 'stock_price', description: '查询股票的实时价格' },
    ])
    // Each tool holds the only evidence for one of the two words: the shares add up to 1.
    const [first, second] = index.search('天气 股票', { limit: 2 })
    expect(first.share).toBeGreaterThan(0)
    expect(first.share + second.share).toBeCloseTo(1, 10)
    // A tool left out by `accept` adds nothing the query could get.
    expect(index.search('天气 股票', { limit: 2, accept: (name) => name === 'weather' })).toEqual([
      { name: 'weather', score: expect.any(Number), coverage: 0.5, share: 1, named: false },
    ])
  })

  it('honours limit and accept, calling accept only for contenders', () => {
    const index = indexOf()
    const asked: string[] = []
    const hits = index.search('weather city file message', {
      limit: 2,
      accept: (name) => {
        asked.push(name)
        return name !== 'get_weather'
      },
    })
    expect(hits).toHaveLength(2)
    expect(names(hits)).not.toContain('get_weather')
    expect(asked).toContain('get_weather')
    expect(index.search('weather', { limit: 0 })).toEqual([])
    expect(index.search('weather', { limit: 5, accept: () => false })).toEqual([])
  })

  it('updates incrementally and agrees with an index built from scratch', () => {
    const index = indexOf()
    expect(index.size).toBe(catalog.length)
    expect(index.remove('get_weather')).toBe(true)
    expect(index.remove('get_weather')).toBe(false)
    expect(index.has('get_weather')).toBe(false)
    expect(names(index.search('weather forecast city', { limit: 10 }))).not.toContain('get_weather')
    // A freed slot is reused by the next tool, with none of the old tool's terms.
    index.add({ name: 'roll_dice', description: 'Roll dice for a tabletop game.' })
    expect(names(index.search('roll two dice', { limit: 1 }))).toEqual(['roll_dice'])
    expect(index.search('forecast', { limit: 10 })).toEqual([])
    // Replacing a tool replaces its terms.
    index.add({ name: 'find', description: 'Locate a restaurant nearby.' })
    expect(names(index.search('glob pattern files', { limit: 10 }))).not.toContain('find')
    expect(index.size).toBe(catalog.length)

    const fresh = indexOf([...catalog.filter((tool) => tool.name !== 'get_weather' && tool.name !== 'find'),
      { name: 'roll_dice', description: 'Roll dice for a tabletop game.' },
      { name: 'find', description: 'Locate a restaurant nearby.' }])
    for (const query of ['weather city', 'read a file', 'restaurant nearby', '翻译文本', 'roll dice', 'message channel user']) {
      const a = index.search(query, { limit: 10 })
      const b = fresh.search(query, { limit: 10 })
      expect(names(a), query).toEqual(names(b))
      a.forEach((hit, i) => expect(hit.score).toBeCloseTo(b[i].score, 10))
    }
  })

  it('orders ties by name and returns nothing from an empty index', () => {
    const index = new ToolSearchIndex()
    expect(index.search('anything', { limit: 5 })).toEqual([])
    index.add({ name: 'b_tool', description: 'same words' })
    index.add({ name: 'a_tool', description: 'same words' })
    expect(names(index.search('same words', { limit: 5 }))).toEqual(['a_tool', 'b_tool'])
  })
})

describe('summarizeTools', () => {
  const tools = [
    { name: 'get_weather', description: 'Current weather for a city. Uses the national service, updated hourly.' },
    { name: 'translate', description: '把文本翻译成另一种语言。支持一百多种语言。' },
    { name: 'noop', description: '' },
  ]

  it('lists names, brief lines or nothing', () => {
    expect(summarizeTools(tools, 'names')).toBe('get_weather, translate, noop')
    expect(summarizeTools(tools, 'brief')).toBe('- get_weather: Current weather for a city.\n- translate: 把文本翻译成另一种语言。\n- noop')
    expect(summarizeTools(tools, 'none')).toBe('')
    expect(summarizeTools([], 'brief')).toBe('')
  })

  it('keeps brief descriptions to one short line', () => {
    expect(briefDescription('Line one\nstill one. Two.')).toBe('Line one still one.')
    expect(briefDescription('version 1.2.3 is out')).toBe('version 1.2.3 is out')
    const long = briefDescription('x'.repeat(300))
    expect(long).toHaveLength(100)
    expect(long.endsWith('…')).toBe(true)
  })
})
