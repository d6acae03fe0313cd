// The whole cost of one call through `toolset.execute`: the floor a call cannot avoid
// (JSON.parse + a compiled ajv validator + `await handler(args)`), the bare core registry,
// and the default Cordis plugin as users load it, all measured in alternating rounds.
import Ajv from 'ajv/dist/2020.js'
import Module from 'node:module'
import { defineTool, PermissionEngine, ToolRegistry } from '../../packages/core/lib/index.js'
import { toJsonSchema } from '../../packages/schema/lib/index.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { args, handler, payload, session } from './cases/weather-tool.mjs'
import { compareAll, formatNs, machineLoad, measureSync, pairedDelta, printLoad, printTable, writeResults } from './harness.mjs'
import { koishiPath } from './cases/koishi-path.mjs'
import { unconfiguredPairs } from './cases/unconfigured-points.mjs'
import { scale } from './cases/scale.mjs'

printLoad('at start')
const loadAtStart = machineLoad()


// Floor: what any runtime has to do.
const validate = new Ajv({ useDefaults: true, strict: false }).compile(toJsonSchema(args))
const floor = async () => {
  const value = JSON.parse(payload)
  if (!validate(value)) throw new Error('invalid')
  return handler(value)
}

// Two fresh copies of the core, alike but for @opentelemetry/api: one finds it (installed,
// no SDK registered), one cannot, as an app without it loads. Each serves only its own
// registry below, so neither carries the JIT history of the cases above.
const withOtel = await import('../../packages/core/lib/index.js?with-opentelemetry')
// (Module._load, not _resolveFilename: the first copy's require is cached per parent file.)
const load = Module._load
let refused = 0
Module._load = function (request, ...rest) {
  if (request === '@opentelemetry/api') {
    refused++
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' })
  }
  return load.call(this, request, ...rest)
}
const withoutOtel = await import('../../packages/core/lib/index.js?without-opentelemetry')
Module._load = load
if (!refused) throw new Error('the core copy without @opentelemetry/api never asked for it: the telemetry baseline would measure nothing')

// The real permission engine, with the rule that lets this exec tool run.
const engine = new PermissionEngine({ rules: [{ permission: 'tool:weather', decision: 'allow' }] })

function registryFor(effect, gate) {
  const registry = new ToolRegistry()
  registry.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect }, run: handler }))
  registry.permissions = gate
  return registry
}

function registryOf(core) {
  const registry = new core.ToolRegistry()
  registry.define(core.defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'read' }, run: handler }))
  return registry
}

const rows = []
const figures = {}
const call = [{ id: 'c1', name: 'weather', arguments: payload }]

/** Fails the bench if a case's call does not succeed: a fast error is no figure. */
async function checked(toolset, calls = call) {
  const [result] = await toolset.execute(calls)
  if (result.status !== 'ok') throw new Error(`bench call failed: ${result.status} ${result.content}`)
  return () => toolset.execute(calls)
}

// The path users run: a Cordis app with the default plugin (tools, permissions,
// background) loaded as docs/getting-started.md does, and a plugin that defines the tool.
// Read and exec tools as a user defines them; the exec tool is allowed by a configured rule.
const { Context } = await import('cordis')
const { default: Dogu } = await import('../../packages/cordis/lib/index.js')
const dataDir = mkdtempSync(join(tmpdir(), 'dogu-bench-'))
let apps = 0
// Auditing is on by default (a record per call, to audit.jsonl): each app keeps its file in
// the bench's own folder, not data/dogu/ of the working directory.
async function defaultPluginApp(audit = {}, tools = {}) {
  const app = new Context()
  const n = apps++
  await app.plugin(Dogu, {
    tools,
    permissions: { rules: [{ permission: 'tool:weather_exec', decision: 'allow' }], storePath: join(dataDir, `grants-${n}.json`) },
    background: { storePath: join(dataDir, `tasks-${n}.json`) },
    audit: { storePath: join(dataDir, `audit-${n}.jsonl`), ...audit },
  })
  await app.plugin({
    name: 'weather',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'read' }, run: handler }))
      ctx.tools.define(defineTool({ name: 'weather_exec', description: 'Weather for a city', args, traits: { effect: 'exec' }, run: handler }))
    },
  })
  return app
}
const app = await defaultPluginApp()
// One pass-through middleware (ctx.tools.use), added by a plugin as a user would.
// Both sides of the middleware's figure run without the audit log: its batched writes are
// the noisiest part of a call, and a middleware's cost does not depend on them.
const wrapped = await defaultPluginApp({ enabled: false })
await wrapped.plugin({ name: 'policy', inject: ['tools'], apply: (ctx) => { ctx.tools.use((call, next) => next(), { name: 'pass' }) } })
const wrappedAsync = await defaultPluginApp({ enabled: false })
await wrappedAsync.plugin({ name: 'policy', inject: ['tools'], apply: (ctx) => { ctx.tools.use(async (call, next) => next(), { name: 'pass' }) } })
// One quota on the tool (memory counter, as without a database) and one maxRunning cap, each
// loaded through the plugin's config; audit off on both sides, as for the middleware.
const quota = await defaultPluginApp({ enabled: false }, { quotas: [{ tools: 'weather', per: 'user', max: Number.MAX_SAFE_INTEGER, window: '1h' }] })
const capped = await defaultPluginApp({ enabled: false }, { maxRunning: { session: 64 } })
// Repair is on by default: a valid call against the same plugin with `repair: false`.
const unrepaired = await defaultPluginApp({ enabled: false }, { repair: false })
const listened = await defaultPluginApp()
const unaudited = await defaultPluginApp({ enabled: false })
listened.on('tools/call-end', () => {})

const execCall = [{ id: 'c1', name: 'weather_exec', arguments: payload }]
// The Koishi path: ctx.tools in a Koishi app, a toolset for a chat session of the mock bot.
const koishi = await koishiPath({ args, handler, dataDir })
const cases = {
  koishi: await checked(koishi.toolset),
  floor,
  core: await checked(registryFor('read').toolset({ session })),
  coreExecRule: await checked(registryFor('exec', engine).toolset({ session })),
  plugin: await checked(app.tools.toolset({ session })),
  pluginExec: await checked(app.tools.toolset({ session }), execCall),
  pluginListener: await checked(listened.tools.toolset({ session })),
  pluginAuditOff: await checked(unaudited.tools.toolset({ session })),
}
const ns = await compareAll(cases)
const row = (key, label, base, target) => {
  const ratio = ns[key] / ns[base]
  figures[key] = { ns: ns[key], baseline: base, baselineNs: ns[base], ratio }
  rows.push({ case: label, time: formatNs(ns[key]), against: `${base} ${formatNs(ns[base])}`, ratio: ratio.toFixed(2) + '×', target })
}
row('core', 'bare @dogu/core registry: read tool, no gate', 'floor', '→ 2×')
row('coreExecRule', 'bare registry + PermissionEngine: exec tool, a rule allows', 'floor', '→ 2×')
row('plugin', 'default plugin (ctx.plugin(Dogu)): read tool', 'core', '≤ 1.25×')
row('pluginExec', 'default plugin: exec tool, a configured rule allows', 'coreExecRule', '≤ 1.25×')
row('pluginAuditOff', 'default plugin, audit: { enabled: false }: read tool', 'core', '—')
row('pluginListener', 'default plugin + one tools/call-end listener', 'core', '—')
row('koishi', 'Koishi: ctx.tools, a toolset for a chat session (mock bot)', 'core', '≤ 1.5×')
figures.coreVsFloor = ns.core / ns.floor
figures.pluginVsFloor = ns.plugin / ns.floor
rows.push({ case: 'default plugin against the floor', time: formatNs(ns.plugin), against: `floor ${formatNs(ns.floor)}`, ratio: figures.pluginVsFloor.toFixed(2) + '×', target: '≤ 3.0×' })

// Small costs, measured in pairs (baseline, subject, subject, baseline per round).
const middleware = await pairedDelta(cases.pluginAuditOff, await checked(wrapped.tools.toolset({ session })), { rounds: 25 })
const asyncMiddleware = await pairedDelta(cases.pluginAuditOff, await checked(wrappedAsync.tools.toolset({ session })))
const otel = await pairedDelta(await checked(registryOf(withoutOtel).toolset({ session })), await checked(registryOf(withOtel).toolset({ session })), { rounds: 25 })
const quotaDelta = await pairedDelta(cases.pluginAuditOff, await checked(quota.tools.toolset({ session })), { rounds: 25 })
const capDelta = await pairedDelta(cases.pluginAuditOff, await checked(capped.tools.toolset({ session })), { rounds: 25 })
const repairDelta = await pairedDelta(await checked(unrepaired.tools.toolset({ session })), cases.pluginAuditOff, { rounds: 25 })
figures.repairOnValidCall = { ...repairDelta, percent: 100 * repairDelta.deltaNs / repairDelta.baselineNs, medianPercent: 100 * repairDelta.medianDeltaNs / repairDelta.baselineNs }
figures.quota = quotaDelta
figures.maxRunning = capDelta
figures.middleware = middleware
figures.asyncMiddleware = asyncMiddleware
figures.telemetryApiNoSdk = otel
const delta = (label, { deltaNs, medianDeltaNs, baselineNs }, base, target) => rows.push({ case: label, time: `+${formatNs(deltaNs)}`, against: `${base} ${formatNs(baselineNs)} (fastest rounds; median of pairs +${formatNs(medianDeltaNs)})`, ratio: '', target })
delta('one pass-through middleware, (call, next) => next()', middleware, 'plugin, audit off', '≤ 300 ns')
delta('one async pass-through middleware', asyncMiddleware, 'plugin, audit off', '—')
delta('one quota (memory counter): tools weather, per user, 1 h', quotaDelta, 'plugin, audit off', '≤ 500 ns')
delta('maxRunning: { session: 64 }', capDelta, 'plugin, audit off', '—')
delta(`repair on (the default), a valid call: ${figures.repairOnValidCall.percent.toFixed(1)}% (median ${figures.repairOnValidCall.medianPercent.toFixed(1)}%)`, repairDelta, 'plugin, repair: false', '≤ 2%')
delta('@opentelemetry/api installed, no SDK registered (bare core)', otel, 'core without the API', '≤ 100 ns')
await app.fiber.dispose()
await listened.fiber.dispose()
await quota.fiber.dispose()
await capped.fiber.dispose()
await unrepaired.fiber.dispose()
await wrapped.fiber.dispose()
await wrappedAsync.fiber.dispose()
await unaudited.fiber.dispose()
// A policy point that is not configured costs nothing: each pair below, in its own rounds.
const unconfigured = await unconfiguredPairs({ defaultPluginApp, checked, session, telemetry: otel })
figures.unconfigured = unconfigured.figures
await koishi.stop()
rmSync(dataDir, { recursive: true, force: true })

printTable('One call: the floor, the bare core, and the default plugin users load (median of alternating rounds)', rows)
printTable('A policy point that is not configured costs nothing: the default plugin against the same call without that point (see docs/benchmarks.md)', unconfigured.rows)

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

// Scale: defining 50,000 tools, and tool_search over them.
figures.scale = await scale({ ToolRegistry, defineTool })

printLoad('at end')
figures.loadAtStart = loadAtStart
writeResults('core', figures)
