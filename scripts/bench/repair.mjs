// `yarn bench repair`: how well the repair of malformed tool-call arguments does on the
// broken-tool-call corpus (test-support/broken-tool-calls/), and what it costs. Every case
// runs through a bare registry's `toolset.execute`, judged as the spec judges it
// (repaired / refused / unchanged correctly, wrongly repaired, wrongly refused), overall and
// per family; the calls written as text, per format, and what reading each costs; then, in
// alternating rounds, a valid call with repair on against the same call with `repair: false`,
// and repaired calls against the valid one. Needs the built packages (`node scripts/build.mjs`;
// `yarn bench` builds first).
import { isDeepStrictEqual } from 'node:util'
import Schema from 'schemastery'
import { defineTool, repairArguments, ToolRegistry } from '../../packages/core/lib/index.js'
import { extractTextToolCalls, TEXT_TOOL_CALL_FORMATS } from '../../packages/agent/lib/index.js'
import { argumentCases, fixtureTools, judgeArgumentCase, summaryLine, tally, textCases, VERDICTS } from '../../test-support/broken-tool-calls/corpus.mjs'
import { compareAll, formatNs, measureSync, pairedDelta, printTable, writeResults } from './harness.mjs'

const session = { id: 'bench', userId: 'u1' }
function toolsetOf(options = {}) {
  const runs = new Map()
  const registry = new ToolRegistry(options)
  for (const tool of fixtureTools({ defineTool, Schema }, runs)) registry.define(tool)
  return { toolset: registry.toolset({ session }), runs }
}

// The corpus figures.
const cases = argumentCases()
const { toolset, runs } = toolsetOf()
const judgements = []
for (const entry of cases) judgements.push({ entry, ...(await judgeArgumentCase(toolset, entry, runs)) })
const counts = tally(judgements)
const short = { repaired: 'repaired ✓', refused: 'refused ✓', unchanged: 'unchanged ✓', 'steps-differ': 'other steps', 'wrongly-repaired': 'wrongly repaired', 'wrongly-refused': 'wrongly refused', other: 'other' }
const familyRow = (family, row) => ({ family, cases: VERDICTS.reduce((sum, verdict) => sum + row[verdict], 0), ...Object.fromEntries(VERDICTS.map((verdict) => [short[verdict], row[verdict]])) })
printTable('The corpus, per family', [...Object.entries(counts.families).map(([family, row]) => familyRow(family, row)), familyRow('all', counts.total)])
console.log(`\n${summaryLine(counts)}`)
const wrong = judgements.filter((judged) => judged.verdict !== 'repaired' && judged.verdict !== 'refused' && judged.verdict !== 'unchanged')
for (const judged of wrong) console.log(`  ${judged.entry.id} ${judged.verdict}: ${judged.detail}`)

// Text-written calls, per format asked (`auto` is its own row: the formats found by their
// markers), with the fixture tools as a turn sends them: bare JSON names one, XML values take
// their types. A wrong run is a call the case does not hold, or one with other arguments.
const texts = textCases()
const textTools = toolset.definitions('openai').map((definition) => definition.function)
const textRow = (format) => ({ format, cases: 0, 'with calls': 0, 'calls exact': 0, 'right count': 0, missed: 0, 'wrong runs': 0, 'cut off reported': 0, 'cut off expected': 0 })
const textRows = new Map(TEXT_TOOL_CALL_FORMATS.map((format) => [format, textRow(format)]))
const textTotal = textRow('all')
const argumentsOf = (text) => {
  try {
    const value = JSON.parse(text)
    return typeof value === 'string' ? JSON.parse(value) : value
  } catch {
    return text
  }
}
let textRight = 0
let textInvented = 0
for (const entry of texts) {
  const { calls, cutOff } = extractTextToolCalls(entry.text, entry.format, { tools: textTools })
  const expected = entry.expect.calls
  const same = (call, i) => expected[i] && call.name === expected[i].name && isDeepStrictEqual(argumentsOf(call.arguments), expected[i].args)
  const row = textRows.get(entry.format) ?? textRow(entry.format)
  textRows.set(entry.format, row)
  for (const target of [row, textTotal]) {
    target.cases++
    if (expected.length) target['with calls']++
    if (calls.length === expected.length) target['right count']++
    if (expected.length && calls.length === expected.length && calls.every(same)) target['calls exact']++
    if (calls.length < expected.length) target.missed++
    if (!calls.every(same)) target['wrong runs']++
    if (cutOff && cutOff.format === entry.expect.cutOff) target['cut off reported']++
    if (entry.expect.cutOff) target['cut off expected']++
  }
  if (calls.length === expected.length) textRight++
  else if (!expected.length) textInvented++
}
printTable('Calls written as text, per format asked (auto: found by its marker)', [...textRows.values()].filter((row) => row.cases).concat(textTotal))
console.log(`text tool calls: ${texts.length} cases, ${textRight} with the right number of calls, ${textInvented} extracted from text that holds none, ${textTotal['wrong runs']} wrong runs`)

// The cost. The valid call is the one the corpus' search tool gets most.
const valid = '{"query":"北京天气","limit":5}'
const broken = {
  'trailing-comma': '{"query":"北京天气","limit":5,}',
  quotes: "{'query': '北京天气', 'limit': 5}",
  'full-width': '{"query"："北京天气"，"limit"：5}',
  fence: '```json\n{"query":"北京天气","limit":5}\n```',
  'double-encoded': JSON.stringify(valid),
  'closing-brackets': '{"query":"北京天气","limit":5,"lang":"zh"',
}
const refusedText = '{"query":"北京天'
const call = (arguments_) => [{ id: 'c1', name: 'search', arguments: arguments_ }]
const on = toolsetOf().toolset
const off = toolsetOf({ repair: false }).toolset
async function checked(set, arguments_, status = 'ok') {
  const [result] = await set.execute(call(arguments_))
  if (result.status !== status) throw new Error(`bench call ended ${result.status} ${result.content}`)
  return () => set.execute(call(arguments_))
}

const signed = (ns) => `${ns < 0 ? '−' : '+'}${formatNs(Math.abs(ns))}`
const figures = { counts: counts.total, families: counts.families, textCases: { cases: texts.length, right: textRight, inventedFromNone: textInvented, wrongRuns: textTotal['wrong runs'], formats: Object.fromEntries([...textRows].map(([format, { format: _, ...row }]) => [format, row])) } }
const validOn = await checked(on, valid)
const validOff = await checked(off, valid)
const onOff = await pairedDelta(validOff, validOn, { rounds: 25 })
figures.validCallRepairOn = onOff

const callCases = { valid: validOn, refused: await checked(on, refusedText, 'error') }
for (const [step, text] of Object.entries(broken)) callCases[step] = await checked(on, text)
const ns = await compareAll(callCases, { iterations: 5_000 })
const rows = [{ case: 'valid call, repair on (default)', time: formatNs(ns.valid), against: '', ratio: '' }]
rows.push({ case: 'valid call: repair on against repair: false (paired)', time: signed(onOff.deltaNs), against: `repair: false ${formatNs(onOff.baselineNs)} (median of pairs ${signed(onOff.medianDeltaNs)})`, ratio: `${((onOff.subjectNs / onOff.baselineNs - 1) * 100).toFixed(1)}%` })
figures.calls = {}
for (const key of Object.keys(callCases).filter((key) => key !== 'valid')) {
  figures.calls[key] = { ns: ns[key], validNs: ns.valid, ratio: ns[key] / ns.valid }
  rows.push({ case: key === 'refused' ? 'refused (a cut-off string)' : `repaired: ${key}`, time: formatNs(ns[key]), against: `valid ${formatNs(ns.valid)}`, ratio: `${(ns[key] / ns.valid).toFixed(2)}×` })
}
printTable('One call of `search` through `toolset.execute` (bare core registry, median of alternating rounds)', rows)

// repairArguments alone, over the whole corpus's broken texts, per text.
const brokenTexts = cases.filter((entry) => !('unchanged' in entry.expect)).map((entry) => entry.arguments)
const perText = measureSync((i) => repairArguments(brokenTexts[i % brokenTexts.length]), { iterations: brokenTexts.length * 20 })
const prose = '北京今天晴，最高 5 度，最低零下 3 度。明天转多云，有小雪的可能，出门记得带伞。'.repeat(4)
const extractProse = measureSync(() => extractTextToolCalls(prose, 'auto'), { iterations: 50_000 })
figures.repairArgumentsPerTextNs = perText
figures.extractTextToolCallsProseNs = extractProse
const alone = [
  { case: `repairArguments, mean over the corpus's ${brokenTexts.length} broken texts`, time: formatNs(perText) },
  { case: `extractTextToolCalls(prose of ${prose.length} characters, 'auto'): a reply without calls`, time: formatNs(extractProse) },
]
// Reading one reply per format: the corpus's first case under that format that holds two calls or more (else one).
figures.extractTextToolCallsNs = {}
for (const format of textRows.keys()) {
  if (format === 'auto') continue
  const held = texts.filter((entry) => entry.format === format && entry.expect.calls.length)
  const entry = held.find((candidate) => candidate.expect.calls.length > 1) ?? held[0]
  if (!entry) continue
  const ns = measureSync(() => extractTextToolCalls(entry.text, format, { tools: textTools }), { iterations: 20_000 })
  figures.extractTextToolCallsNs[format] = { case: entry.id, ns }
  alone.push({ case: `extractTextToolCalls, ${format}: ${entry.id}, ${entry.expect.calls.length} call(s), ${entry.text.length} characters`, time: formatNs(ns) })
}
printTable('Alone', alone)

writeResults('repair', figures)
if (counts.total['wrongly-repaired']) {
  console.error(`\n${counts.total['wrongly-repaired']} wrong repairs: the target is 0`)
  process.exitCode = 1
}
if (textTotal['wrong runs']) {
  console.error(`\n${textTotal['wrong runs']} text cases with a wrong run: the target is 0`)
  process.exitCode = 1
}
