// The whole cost of one call through `toolset.execute` against the bare floor a call
// cannot avoid: JSON.parse + a compiled ajv validator + `await handler(args)`.
import Ajv from 'ajv/dist/2020.js'
import Schema from 'schemastery'
import { defineTool, PermissionEngine, ToolRegistry } from '../../packages/core/lib/index.js'
import { toJsonSchema } from '../../packages/schema/lib/index.js'
import { compare, formatNs, measureSync, printTable, writeResults } from './harness.mjs'

const session = { id: 'bench', userId: 'u1' }
const args = Schema.object({
  city: Schema.string().required(),
  unit: Schema.union(['c', 'f']).default('c'),
  days: Schema.natural().max(14).default(1),
})
const handler = async ({ city, unit }) => `${city}: 21°${unit}`
const payload = '{"city":"Hangzhou","unit":"c","days":3}'

// Floor: what any runtime has to do.
const validate = new Ajv({ useDefaults: true, strict: false }).compile(toJsonSchema(args))
const floor = async () => {
  const value = JSON.parse(payload)
  if (!validate(value)) throw new Error('invalid')
  return handler(value)
}

// The real permission engine, with the rule that lets this exec tool run.
const engine = new PermissionEngine({ rules: [{ permission: 'tool:weather', decision: 'allow' }] })

function registryFor(effect, gate) {
  const registry = new ToolRegistry()
  registry.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect }, run: handler }))
  registry.permissions = gate
  return registry
}

const rows = []
const figures = {}

/** Checks that the call succeeds, then compares it with the floor in alternating rounds. */
async function benchCall(key, label, toolset, target) {
  const call = [{ id: 'c1', name: 'weather', arguments: payload }]
  const [check] = await toolset.execute(call)
  if (check.status !== 'ok') throw new Error(`bench call failed: ${check.content}`)
  const result = await compare(() => toolset.execute(call), floor)
  figures[key] = result
  rows.push({ case: label, dogu: formatNs(result.subjectNs), floor: formatNs(result.baselineNs), ratio: result.ratio.toFixed(2) + '×', target })
}

await benchCall('callReadNoGate', 'execute(): read tool, no gate', registryFor('read').toolset({ session }), '≤ 2×')
await benchCall('callExecAllowedByRule', 'execute(): exec tool, a rule allows', registryFor('exec', engine).toolset({ session }), '≤ 2×')

{
  // The same call through a Cordis app's `ctx.tools`, where every call emits
  // tools/call-start and tools/call-end on the context.
  const { Context } = await import('cordis')
  const { ToolService } = await import('../../packages/cordis/lib/index.js')
  const app = new Context()
  await app.plugin(ToolService)
  app.tools.registry.permissions = engine
  app.tools.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'exec' }, run: handler }))
  app.on('tools/call-end', () => {})
  await benchCall('callViaCordisWithListener', 'ctx.tools toolset, rule allows, a listener', app.tools.toolset({ session }), '—')
}

printTable('One call, whole pipeline vs bare floor (median of alternating rounds)', rows)

// Toolset creation over 1,000 tools, and cached definitions().
const big = new ToolRegistry()
for (let i = 0; i < 1000; i++) {
  big.define(defineTool({ name: `tool_${i}`, description: `Tool number ${i}`, args, traits: { effect: 'read' }, run: handler }))
}
const createNs = measureSync(() => big.toolset({ session }), { iterations: 200 })
const warm = big.toolset({ session })
warm.definitions('openai')
const cachedNs = measureSync(() => warm.definitions('openai'), { iterations: 100_000 })
const freshNs = measureSync(() => big.toolset({ session }).definitions('openai'), { iterations: 200 })
figures.toolsetCreate1000Ns = createNs
figures.definitionsCachedNs = cachedNs
figures.toolsetPlusDefinitions1000Ns = freshNs
printTable('Toolsets over 1,000 tools', [
  { case: 'create toolset', time: formatNs(createNs) },
  { case: 'definitions(openai), cached on the toolset', time: formatNs(cachedNs) },
  { case: 'new toolset + definitions(openai), per-tool cache', time: formatNs(freshNs) },
])

writeResults('core', figures)
