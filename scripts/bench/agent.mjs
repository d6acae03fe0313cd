// The agent loop's own cost per model turn: `runAgent` against the scripted
// OpenAI-compatible server on loopback, compared with the bare HTTP round trip of the same
// request (fetch, then read the whole SSE body), measured in the same run. The difference
// is what the loop adds: building the request, parsing SSE and deltas, executing calls
// through the toolset, and keeping the conversation.
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { runAgent, startScriptedServer } from '../../packages/agent/lib/index.js'
import { compareAll, formatNs, printTable, writeResults } from './harness.mjs'

const TEXT = 'Paris is the capital of France, and it has been for a very long time.'
// Streamed in 8-character pieces: about 10 text events per reply, as a short real answer.
const server = await startScriptedServer({
  script: (request) => {
    const last = request.body.messages.at(-1)
    if (last.role === 'user' && last.content === 'tool') {
      return { text: 'Checking.', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"FR"}' }], pieceSize: 8 }
    }
    return { text: TEXT, pieceSize: 8 }
  },
})

const registry = new ToolRegistry()
registry.define(defineTool({ name: 'lookup', description: 'Look up a capital.', traits: { effect: 'read' }, run: () => 'Paris' }))
const toolset = registry.toolset({ session: { id: 'bench' } })
const endpoint = { baseURL: server.baseURL, model: 'bench' }
const url = `${server.baseURL}/chat/completions`

/** The bare round trip: the loop's first request body, posted and read to the end. */
function bare(content) {
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content }], tools: toolset.definitions('openai'), stream: true, stream_options: { include_usage: true } })
  return async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    await response.text()
  }
}

const textTurn = () => runAgent({ endpoint, toolset, messages: [{ role: 'user', content: 'text' }] })
const toolTurns = () => runAgent({ endpoint, toolset, messages: [{ role: 'user', content: 'tool' }] })
const bareText = bare('text')
const bareTool = bare('tool')
// Two bare round trips: the two turns of a run with one tool call.
const bareTwo = async () => {
  await bareTool()
  await bareText()
}

const ns = await compareAll({ bareText, textTurn, bareTwo, toolTurns }, { iterations: 300, rounds: 7 })
await server.close()

const perTurn = {
  textOverheadNs: ns.textTurn - ns.bareText,
  toolRunOverheadPerTurnNs: (ns.toolTurns - ns.bareTwo) / 2,
}
const rows = [
  { case: '1 turn, text only', 'runAgent': formatNs(ns.textTurn), 'bare HTTP': formatNs(ns.bareText), 'loop overhead / turn': formatNs(perTurn.textOverheadNs), ratio: (ns.textTurn / ns.bareText).toFixed(2) + '×' },
  { case: '2 turns, 1 tool call', 'runAgent': formatNs(ns.toolTurns), 'bare HTTP': formatNs(ns.bareTwo), 'loop overhead / turn': formatNs(perTurn.toolRunOverheadPerTurnNs), ratio: (ns.toolTurns / ns.bareTwo).toFixed(2) + '×' },
]
printTable('agent loop vs the bare round trip to the scripted server (loopback, SSE, ~10 text events per reply)', rows)
writeResults('agent', { medianNs: ns, ...perTurn, ratios: { text: ns.textTurn / ns.bareText, tool: ns.toolTurns / ns.bareTwo } })
