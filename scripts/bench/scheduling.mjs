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

// The same calls one by one, each a batch of one (no gate, no queue): what the pipeline
// costs without scheduling. The difference to the batch is the scheduler's own share.
const alone = reads.map((call) => [call])
const oneByOne = async () => { for (const call of alone) await toolset.execute(call) }
const pipelineOnly = await compare(oneByOne, bare, { iterations: 20, rounds: 9 })

const parallel = await compare(() => toolset.execute(reads), bare, { iterations: 20, rounds: 9 })
const exclusive = await compare(() => toolset.execute(writes), bare, { iterations: 20, rounds: 9 })
const rows = [
  { case: '1,000 parallel calls, one batch', dogu: formatNs(parallel.subjectNs / N) + '/call', 'Promise.all': formatNs(parallel.baselineNs / N) + '/call', ratio: parallel.ratio.toFixed(2) + '×' },
  { case: '1,000 exclusive calls, one batch', dogu: formatNs(exclusive.subjectNs / N) + '/call', 'Promise.all': formatNs(exclusive.baselineNs / N) + '/call', ratio: exclusive.ratio.toFixed(2) + '×' },
]
rows.push({ case: '1,000 calls one by one, no scheduler', dogu: formatNs(pipelineOnly.subjectNs / N) + '/call', 'Promise.all': formatNs(pipelineOnly.baselineNs / N) + '/call', ratio: pipelineOnly.ratio.toFixed(2) + '×' })
printTable('Per call: whole pipeline incl. validation, in one batch and one by one, vs bare Promise.all of the handlers', rows)
const schedulingShareNs = parallel.subjectNs / N - pipelineOnly.subjectNs / N
console.log(`\nThe gate's own share per parallel call: ${formatNs(Math.max(0, schedulingShareNs))} (batch per call minus one-by-one per call)`)
writeResults('scheduling', {
  calls: N,
  parallelPerCallNs: parallel.subjectNs / N,
  exclusivePerCallNs: exclusive.subjectNs / N,
  promiseAllPerCallNs: parallel.baselineNs / N,
  pipelineAlonePerCallNs: pipelineOnly.subjectNs / N,
  schedulingSharePerCallNs: schedulingShareNs,
  parallelRatio: parallel.ratio,
  exclusiveRatio: exclusive.ratio,
})
