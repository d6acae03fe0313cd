// Scheduling cost: 1,000 parallel trivial calls in one batch through the read/write gate,
// against the same handlers run by Promise.all.
import Schema from 'schemastery'
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { compare, formatNs, printTable, writeResults } from './harness.mjs'

const args = Schema.object({ n: Schema.natural().default(0) })
const handler = async ({ n }) => `r${n}`
const registry = new ToolRegistry()
registry.define(defineTool({ name: 'read', description: 'trivial read', args, traits: { effect: 'read' }, run: handler }))
registry.define(defineTool({ name: 'write', description: 'trivial write', args, traits: { effect: 'write' }, run: handler }))
registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }

const N = 1000
const toolset = registry.toolset({ session: { id: 'bench' }, concurrency: N })
const reads = Array.from({ length: N }, (_, n) => ({ id: `c${n}`, name: 'read', arguments: `{"n":${n}}` }))
const writes = Array.from({ length: N }, (_, n) => ({ id: `c${n}`, name: 'write', arguments: `{"n":${n}}` }))
const parsedArgs = reads.map((call) => JSON.parse(call.arguments))
const bare = () => Promise.all(parsedArgs.map((a) => handler(a)))

const check = await toolset.execute(reads)
if (check.some((result) => result.status !== 'ok')) throw new Error('bench batch failed')

const parallel = await compare(() => toolset.execute(reads), bare, { iterations: 20, rounds: 9 })
const exclusive = await compare(() => toolset.execute(writes), bare, { iterations: 20, rounds: 9 })
const rows = [
  { case: '1,000 parallel calls, one batch', dogu: formatNs(parallel.subjectNs / N) + '/call', 'Promise.all': formatNs(parallel.baselineNs / N) + '/call', ratio: parallel.ratio.toFixed(2) + '×' },
  { case: '1,000 exclusive calls, one batch', dogu: formatNs(exclusive.subjectNs / N) + '/call', 'Promise.all': formatNs(exclusive.baselineNs / N) + '/call', ratio: exclusive.ratio.toFixed(2) + '×' },
]
printTable('Scheduling cost per call (whole pipeline incl. validation) vs bare Promise.all', rows)
writeResults('scheduling', {
  calls: N,
  parallelPerCallNs: parallel.subjectNs / N,
  exclusivePerCallNs: exclusive.subjectNs / N,
  promiseAllPerCallNs: parallel.baselineNs / N,
  parallelRatio: parallel.ratio,
  exclusiveRatio: exclusive.ratio,
})
