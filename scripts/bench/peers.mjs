// Dogu under the agent frameworks (@dogu/frameworks): per call, each framework's own path with
// its own `tool()` against the same tool through Dogu's adapter, both driven by the framework's
// public API with its scripted model, in alternating rounds. What the adapter adds is compared
// with the core registry's call (`toolset.execute`) measured in the same run: the bound is
// 1.5× (issue 49), against the framework's own tool with the same features the adapter's tools
// use: a JSON Schema input and, where the framework has one, an approval check (`needsApproval`);
// the zod and unchecked forms are measured beside it. The tool is a read (allowed by default), so
// the adapter's path is the whole pipeline with the permission engine deciding, twice:
// needsApproval (`decide`) and the call.
import { z } from 'zod'
import { defineTool, PermissionEngine, ToolRegistry } from '../../packages/core/lib/index.js'
import { toJsonSchema } from '../../packages/schema/lib/index.js'
import { args, handler, payload, session } from './cases/weather-tool.mjs'
import { compareAll, formatNs, machineLoad, pairedDelta, printLoad, printTable, writeResults } from './harness.mjs'

printLoad('at start')
const loadAtStart = machineLoad()

const parameters = toJsonSchema(args)
/** The same arguments as a zod schema: what a framework user writes for the framework's own `tool()`. */
const zodArgs = z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c'), days: z.number().int().min(0).max(14).default(1) })

function doguToolset() {
  const registry = new ToolRegistry()
  registry.permissions = new PermissionEngine()
  registry.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'read' }, run: handler }))
  return registry.toolset({ session })
}

/** Calls per scripted model turn: the framework's own per-turn cost is shared by them. */
const CALLS = 20

const core = doguToolset()
const coreCall = [{ id: 'c1', name: 'weather', arguments: payload }]
{
  const [result] = await core.execute(coreCall)
  if (result.status !== 'ok') throw new Error(`bench call failed: ${result.content}`)
}

// --- The AI SDK: generateText with MockLanguageModelV3 asking for CALLS tool calls in one step.
const ai = await import('ai')
const { MockLanguageModelV3 } = await import('ai/test')
const { aiSdkTools } = await import('../../packages/frameworks/lib/ai-sdk.js')
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const aiModel = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: Array.from({ length: CALLS }, (_, i) => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: 'weather', input: payload })),
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage,
    warnings: [],
  }),
})
const aiOwn = { weather: ai.tool({ description: 'Weather for a city', inputSchema: zodArgs, execute: handler }) }
// The framework's tool with a plain JSON Schema, which it does not check: its cheapest path.
const aiOwnJson = { weather: ai.tool({ description: 'Weather for a city', inputSchema: ai.jsonSchema(parameters), execute: handler }) }
// …and with an approval check, as a framework user who wants approvals writes one: the
// baseline of the bound, since the adapter's tools have `needsApproval` too.
const aiOwnGated = { weather: ai.tool({ description: 'Weather for a city', inputSchema: ai.jsonSchema(parameters), needsApproval: async () => false, execute: handler }) }
const aiDogu = aiSdkTools(doguToolset())
// A tool's own path, as generateText calls it for each call once the input is parsed:
// needsApproval, execute, and toModelOutput where the tool has one. The bound is held on this path
// (the turn's noise between rounds is larger than what the adapter adds); the turn is measured too.
const aiMessages = [{ role: 'user', content: 'weather?' }]
async function aiToolPath(tool, i) {
  const input = JSON.parse(payload)
  const toolCallId = `c${i}`
  await tool.needsApproval(input, { toolCallId, messages: aiMessages, experimental_context: undefined })
  const output = await tool.execute(input, { toolCallId, messages: aiMessages })
  const shown = tool.toModelOutput ? await tool.toModelOutput({ toolCallId, input, output }) : output
  return shown
}
async function aiTurn(tools) {
  const result = await ai.generateText({ model: aiModel, tools, prompt: 'weather?', stopWhen: ai.stepCountIs(1) })
  const outputs = result.toolResults
  if (outputs.length !== CALLS) throw new Error(`the AI SDK ran ${outputs.length} of ${CALLS} calls: ${JSON.stringify(result.content.slice(0, 2))}`)
  return outputs
}
{
  const [own] = await aiTurn(aiOwn)
  const [dogu] = await aiTurn(aiDogu)
  console.log(`AI SDK outputs: own ${JSON.stringify(own.output)}, through Dogu ${JSON.stringify(dogu.output)}`)
}

// --- OpenAI Agents: run() with a scripted model returning CALLS function calls, stopping after the tools ran.
const agents = await import('@openai/agents')
const { agentsTools } = await import('../../packages/frameworks/lib/openai-agents.js')
class ScriptedModel {
  async getResponse() {
    return {
      usage: new agents.Usage(),
      output: Array.from({ length: CALLS }, (_, i) => ({ type: 'function_call', callId: `c${i}`, name: 'weather', arguments: payload, status: 'completed' })),
      responseId: 'r1',
    }
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('not streamed in this bench')
  }
}
const agentsModel = new ScriptedModel()
const agentOwn = new agents.Agent({ name: 'own', model: agentsModel, toolUseBehavior: 'stop_on_first_tool', tools: [agents.tool({ name: 'weather', description: 'Weather for a city', parameters: zodArgs, execute: handler })] })
const agentOwnJson = new agents.Agent({ name: 'own-json', model: agentsModel, toolUseBehavior: 'stop_on_first_tool', tools: [agents.tool({ name: 'weather', description: 'Weather for a city', parameters, strict: false, execute: handler })] })
const agentOwnGated = new agents.Agent({ name: 'own-gated', model: agentsModel, toolUseBehavior: 'stop_on_first_tool', tools: [agents.tool({ name: 'weather', description: 'Weather for a city', parameters, strict: false, needsApproval: async () => false, execute: handler })] })
const agentDogu = new agents.Agent({ name: 'dogu', model: agentsModel, toolUseBehavior: 'stop_on_first_tool', tools: agentsTools(doguToolset()) })
const runner = new agents.Runner({ tracingDisabled: true })
// A function tool's own path, as the runner calls it for each call: needsApproval on the parsed
// arguments, invoke with the model's text, then the custom data. The runner's turn around it
// (hundreds of µs here, the same for both tools) is measured too, but its noise between rounds
// is larger than what the adapter adds, so the bound is held on this path.
const agentsRunContext = new agents.RunContext({})
const agentsSignal = new AbortController().signal
const agentsOwnTool = agents.tool({ name: 'weather', description: 'Weather for a city', parameters, strict: false, needsApproval: async () => false, execute: handler })
const [agentsDoguTool] = agentsTools(doguToolset())
async function agentsToolPath(tool, i) {
  const callId = `c${i}`
  await tool.needsApproval(agentsRunContext, JSON.parse(payload), callId)
  const output = await tool.invoke(agentsRunContext, payload, { toolCall: { type: 'function_call', callId, name: 'weather', arguments: payload }, signal: agentsSignal })
  tool.customDataExtractor?.({ runContext: agentsRunContext, toolCall: { callId } })
  if (output !== 'Hangzhou: 21°c') throw new Error(`Agents tool path failed: ${JSON.stringify(output)}`)
  return output
}
async function agentsTurn(agent) {
  const result = await runner.run(agent, 'weather?')
  const outputs = result.newItems.filter((item) => item.type === 'tool_call_output_item')
  if (outputs.length !== CALLS) throw new Error(`Agents ran ${outputs.length} of ${CALLS} calls`)
  return outputs
}
{
  const [own] = await agentsTurn(agentOwn)
  const [dogu] = await agentsTurn(agentDogu)
  console.log(`Agents outputs: own ${JSON.stringify(own.output)}, through Dogu ${JSON.stringify(dogu.output)}`)
}

// --- LangChain: a tool call through the tool's invoke, as ToolNode makes it.
const lc = await import('@langchain/core/tools')
const { langchainTools } = await import('../../packages/frameworks/lib/langchain.js')
const lcOwn = lc.tool(handler, { name: 'weather', description: 'Weather for a city', schema: zodArgs })
const lcOwnJson = lc.tool(handler, { name: 'weather', description: 'Weather for a city', schema: parameters })
const [lcDogu] = langchainTools(doguToolset())
const toolCall = (i) => ({ id: `c${i}`, name: 'weather', args: JSON.parse(payload), type: 'tool_call' })
async function lcCall(tool, i) {
  const message = await tool.invoke(toolCall(i))
  if (!String(message.content).startsWith('Hangzhou')) throw new Error(`LangChain call failed: ${JSON.stringify(message.content)}`)
  return message
}
{
  const own = await lcCall(lcOwn, 0)
  const dogu = await lcCall(lcDogu, 0)
  console.log(`LangChain outputs: own ${JSON.stringify(own.content)}, through Dogu ${JSON.stringify(dogu.content)}`)
}

// Per call: a turn's time over its CALLS calls. The table's cases in one alternating comparison;
// what the adapter adds, against the baseline of the bound, by paired rounds (harness.pairedDelta:
// baseline, adapter, adapter, baseline per round, the fastest rounds compared), which a turn's
// noise of a few per cent would otherwise swamp.
const perTurn = { iterations: 100, rounds: 9 }
const turns = await compareAll({
  aiOwn: () => aiTurn(aiOwn),
  aiOwnJson: () => aiTurn(aiOwnJson),
  aiOwnGated: () => aiTurn(aiOwnGated),
  aiDogu: () => aiTurn(aiDogu),
  agentsOwn: () => agentsTurn(agentOwn),
  agentsOwnJson: () => agentsTurn(agentOwnJson),
  agentsOwnGated: () => agentsTurn(agentOwnGated),
  agentsDogu: () => agentsTurn(agentDogu),
}, perTurn)
const single = await compareAll({
  core: () => core.execute(coreCall),
  lcOwn: (i) => lcCall(lcOwn, i),
  lcOwnJson: (i) => lcCall(lcOwnJson, i),
  lcDogu: (i) => lcCall(lcDogu, i),
  aiToolOwn: (i) => aiToolPath(aiOwnGated.weather, i),
  aiToolDogu: (i) => aiToolPath(aiDogu.weather, i),
  agentsToolOwn: (i) => agentsToolPath(agentsOwnTool, i),
  agentsToolDogu: (i) => agentsToolPath(agentsDoguTool, i),
}, { iterations: 5_000, rounds: 9 })
const aiTurnAdded = await pairedDelta(() => aiTurn(aiOwnGated), () => aiTurn(aiDogu), { iterations: 100, rounds: 15 })
const aiAdded = await pairedDelta((i) => aiToolPath(aiOwnGated.weather, i), (i) => aiToolPath(aiDogu.weather, i), { iterations: 5_000, rounds: 15 })
const agentsTurnAdded = await pairedDelta(() => agentsTurn(agentOwnGated), () => agentsTurn(agentDogu), { iterations: 30, rounds: 15 })
const agentsAdded = await pairedDelta((i) => agentsToolPath(agentsOwnTool, i), (i) => agentsToolPath(agentsDoguTool, i), { iterations: 5_000, rounds: 15 })
const lcAdded = await pairedDelta((i) => lcCall(lcOwnJson, i), (i) => lcCall(lcDogu, i), { iterations: 5_000, rounds: 15 })

const coreNs = single.core
const rows = []
const figures = { coreNs, callsPerTurn: CALLS, frameworks: {} }
const bound = 1.5
let over = false
for (const [framework, cases, added] of [
  ['AI SDK 6 (generateText; added: the tool path)', { zod: turns.aiOwn / CALLS, json: turns.aiOwnJson / CALLS, gated: turns.aiOwnGated / CALLS, dogu: turns.aiDogu / CALLS, ownTool: single.aiToolOwn, doguTool: single.aiToolDogu, turnAdded: aiTurnAdded.deltaNs / CALLS }, aiAdded.deltaNs],
  ['OpenAI Agents 0.20 (run; added: the tool path)', { zod: turns.agentsOwn / CALLS, json: turns.agentsOwnJson / CALLS, gated: turns.agentsOwnGated / CALLS, dogu: turns.agentsDogu / CALLS, ownTool: single.agentsToolOwn, doguTool: single.agentsToolDogu, turnAdded: agentsTurnAdded.deltaNs / CALLS }, agentsAdded.deltaNs],
  ['LangChain 1.5 (tool.invoke)', { zod: single.lcOwn, json: single.lcOwnJson, dogu: single.lcDogu }, lcAdded.deltaNs],
]) {
  const ratio = added / coreNs
  if (ratio > bound) over = true
  figures.frameworks[framework] = { ownZodNs: cases.zod, ownJsonSchemaNs: cases.json, ownWithApprovalCheckNs: cases.gated, doguNs: cases.dogu, addedNs: added, addedOverCore: ratio }
  if (cases.ownTool !== undefined) Object.assign(figures.frameworks[framework], { toolPathOwnNs: cases.ownTool, toolPathDoguNs: cases.doguTool, turnAddedNs: cases.turnAdded })
  rows.push({
    framework,
    'own, zod': formatNs(cases.zod),
    'own, JSON Schema': formatNs(cases.json),
    '+ needsApproval': cases.gated === undefined ? '(none)' : formatNs(cases.gated),
    'through Dogu': formatNs(cases.dogu),
    'added (paired)': formatNs(added),
    'added / core call': `${ratio.toFixed(2)}× (bound ${bound}×)`,
  })
}
console.log(`\nAI SDK, the tool path alone: own ${formatNs(single.aiToolOwn)}, through Dogu ${formatNs(single.aiToolDogu)}; the whole turn's paired difference per call: ${formatNs(aiTurnAdded.deltaNs / CALLS)}`)
console.log(`OpenAI Agents, the tool path alone: own ${formatNs(single.agentsToolOwn)}, through Dogu ${formatNs(single.agentsToolDogu)}; the whole turn's paired difference per call: ${formatNs(agentsTurnAdded.deltaNs / CALLS)}`)
printTable(`per call; the core registry call (toolset.execute, read tool) is ${formatNs(coreNs)} in this run`, rows)
printLoad('at end')
writeResults('peers', { loadAtStart, bound, ...figures })
if (over) {
  console.error(`\nan adapter adds more than ${bound}× the core call`)
  process.exitCode = 1
}
