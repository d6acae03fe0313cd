// `authorize` cost with 10 and with 1,000 rules. Globs are compiled once and rules are
// indexed by permission name, so a call tests only the few rules that can match it; the
// baseline tests every rule's compiled glob in turn, as a naive gate would.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv from 'ajv/dist/2020.js'
import { minimatch } from 'minimatch'
import Schema from 'schemastery'
import { defineTool, PermissionEngine, ToolRegistry } from '../../packages/core/lib/index.js'
import { toJsonSchema } from '../../packages/schema/lib/index.js'
import { compareAll, formatNs, machineLoad, measureSync, median, printLoad, printTable, writeResults } from './harness.mjs'

printLoad('at start')
const loadAtStart = machineLoad()

if (typeof PermissionEngine !== 'function') {
  console.error('packages/core/lib does not export PermissionEngine: add `export * from \'./permissions\'` to core\'s index.ts and run `node scripts/build.mjs`.')
  process.exit(1)
}

const user = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }
const admin = { id: 's2', userId: 'a1', platform: 'discord', authority: 4 }

// The docs' example: anyone may read, only admins deploy to prod, everybody else is
// asked (by the exec default), plus the usual fs, shell and http rules.
const small = [
  { permission: 'deploy:run', target: 'prod', authority: 4, decision: 'allow' },
  { permission: 'deploy:run', target: 'staging', decision: 'allow' },
  { permission: 'deploy:destroy', decision: 'ask' },
  { permission: 'fs.read', decision: 'allow' },
  { permission: 'fs.write', target: 'src/**', decision: 'allow' },
  { permission: 'fs.write', target: '**/.env', decision: 'deny' },
  { permission: 'shell.exec', command: 'git status*', decision: 'allow' },
  { permission: 'shell.exec', command: 'rm *', decision: 'deny' },
  { permission: 'tool:*', platforms: ['qq'], decision: 'deny' },
  { permission: 'http.*', target: 'https://*.example.com/**', decision: 'allow' },
]

// 1,000 rules: 900 over 300 literal names (targets, users, authorities), 100 globs.
function large() {
  const rules = [...small]
  const decisions = ['allow', 'ask', 'deny']
  for (let i = 0; rules.length < 900; i++) {
    const rule = { permission: `tool:t${i % 300}`, decision: decisions[i % 3] }
    if (i % 2) rule.target = `dir${i % 7}/**`
    if (i % 5 === 0) rule.users = [`u${i}`, `v${i}`]
    if (i % 11 === 0) rule.authority = 3
    rules.push(rule)
  }
  for (let i = 0; rules.length < 1000; i++) {
    rules.push({ permission: i % 2 ? `ns${i}:*` : `ns${i}.{read,write}`, target: i % 3 ? undefined : `x${i}/**`, decision: decisions[i % 3] })
  }
  return rules
}

const request = (session, name, target, effect = 'exec') => ({ session, permission: target === undefined ? { name } : { name, target }, effect, tool: 'bench', args: {} })
const cases = [
  ['rule allows (admin deploys prod)', request(admin, 'deploy:run', 'prod')],
  ['rule denies (fs.write on .env)', request(user, 'fs.write', 'src/.env', 'write')],
  ['no rule for user: default ask', request(user, 'deploy:run', 'prod')],
  ['no rule names it: default', request(user, 'tool:unknown', undefined, 'read')],
  ['command glob (git status)', request(user, 'shell.exec', 'git status --short src/a.ts')],
]

/** What a gate without an index does: every rule, each glob tested in turn. */
function naive(rules) {
  const opts = { dot: true, nocomment: true, nonegate: true, preserveMultipleSlashes: true }
  const command = (glob) => new RegExp('^' + glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('[^]*') + '$')
  const compiled = rules.map((rule) => ({
    rule,
    name: minimatch.makeRe(rule.permission, opts),
    target: rule.target ? minimatch.makeRe(rule.target, opts) : rule.command ? command(rule.command) : undefined,
  }))
  return (req) => {
    let ask = false
    let allow = false
    const { session } = req
    for (const { rule, name, target } of compiled) {
      if (!name.test(req.permission.name)) continue
      if (target && (req.permission.target === undefined || !target.test(req.permission.target))) continue
      if (rule.authority !== undefined && !((session.authority ?? 0) >= rule.authority)) continue
      if (rule.users && !rule.users.includes(session.userId)) continue
      if (rule.platforms && !rule.platforms.includes(session.platform)) continue
      if (rule.decision === 'deny') return 'deny'
      if (rule.decision === 'ask') ask = true
      else allow = true
    }
    return ask ? 'ask' : allow ? 'allow' : 'default'
  }
}

const figures = { rules: {} }
const rows = []
for (const [label, rules] of [['10', small], ['1000', large()]]) {
  const engine = new PermissionEngine({ rules })
  const audited = new PermissionEngine({ rules, onDecision: () => {} })
  const scan = naive(rules)
  figures.rules[label] = {}
  for (const [name, req] of cases) {
    const ns = measureSync(() => engine.authorize(req), { iterations: 200_000 })
    const withEvent = measureSync(() => audited.authorize(req), { iterations: 200_000 })
    const naiveNs = measureSync(() => scan(req), { iterations: label === '10' ? 200_000 : 5_000 })
    if (scan(req) !== engine.authorize(req).decision && scan(req) !== 'default') throw new Error(`naive scan disagrees on ${name}`)
    figures.rules[label][name] = { decision: engine.authorize(req).decision, ns, withEventNs: withEvent, naiveScanNs: naiveNs }
    rows.push({ rules: label, case: name, decision: engine.authorize(req).decision, authorize: formatNs(ns), 'with event': formatNs(withEvent), 'naive scan': formatNs(naiveNs), 'scan/authorize': (naiveNs / ns).toFixed(1) + '×' })
  }
}

// A remembered session grant turns an ask into an allow: one extra Map lookup.
{
  const engine = new PermissionEngine({ rules: large() })
  engine.addAsker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
  const req = request(user, 'deploy:run', 'prod')
  await engine.approve({ ...req, callId: 'c1' })
  const ns = measureSync(() => engine.authorize(req), { iterations: 200_000 })
  figures.rules['1000']['session grant allows'] = { decision: engine.authorize(req).decision, ns }
  rows.push({ rules: '1000', case: 'session grant allows', decision: engine.authorize(req).decision, authorize: formatNs(ns), 'with event': '', 'naive scan': '', 'scan/authorize': '' })
}

// Building the index: compiling 1,000 globs once, at load.
const buildNs = measureSync(() => new PermissionEngine({ rules: large() }), { iterations: 20, rounds: 5 })
figures.compile1000RulesNs = buildNs

printTable('authorize() per call (median); target: a few µs with 1,000 rules', rows)
printTable('Loading rules', [{ case: 'new PermissionEngine({ rules: 1,000 })', time: formatNs(buildNs) }])

// The audit trail's cost on the path users run: the default plugin (ctx.plugin(Dogu)), an
// exec tool a configured rule allows, with auditing on (the default: a record per call,
// written to audit.jsonl in batches) and off, against the floor (JSON.parse + a compiled
// validator + the handler), all in alternating rounds of one run. Target: on ≤ 1.10× off.
{
  const { Context } = await import('cordis')
  const { default: Dogu } = await import('../../packages/cordis/lib/index.js')
  const args = Schema.object({ city: Schema.string().required(), unit: Schema.union(['c', 'f']).default('c'), days: Schema.natural().max(14).default(1) })
  const handler = async ({ city, unit }) => `${city}: 21°${unit}`
  const payload = '{"city":"Hangzhou","unit":"c","days":3}'
  const validate = new Ajv({ useDefaults: true, strict: false }).compile(toJsonSchema(args))
  const floor = async () => {
    const value = JSON.parse(payload)
    if (!validate(value)) throw new Error('invalid')
    return handler(value)
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'dogu-bench-audit-'))
  const apps = []
  async function appWith(audit) {
    const app = new Context()
    await app.plugin(Dogu, {
      permissions: { rules: [{ permission: 'tool:weather', decision: 'allow' }], storePath: join(dataDir, `grants-${apps.length}.json`) },
      background: { storePath: join(dataDir, `tasks-${apps.length}.json`) },
      audit: { storePath: join(dataDir, `audit-${apps.length}.jsonl`), ...audit },
    })
    await app.plugin({ name: 'weather', inject: ['tools'], apply: (ctx) => { ctx.tools.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'exec' }, run: handler })) } })
    apps.push(app)
    const toolset = app.tools.toolset({ session: { id: 'bench', userId: 'u1', platform: 'discord' } })
    const call = [{ id: 'c1', name: 'weather', arguments: payload }]
    const [result] = await toolset.execute(call)
    if (result.status !== 'ok') throw new Error(`bench call failed: ${result.status} ${result.content}`)
    return { app, run: () => toolset.execute(call) }
  }
  const off = await appWith({ enabled: false })
  const on = await appWith({})
  const hashed = await appWith({ hashArguments: true })
  // The bare core registry with the same engine and rule: what the plugin's call is held to (≤ 1.25×).
  const bare = new ToolRegistry()
  bare.define(defineTool({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'exec' }, run: handler }))
  bare.permissions = new PermissionEngine({ rules: [{ permission: 'tool:weather', decision: 'allow' }] })
  const bareToolset = bare.toolset({ session: { id: 'bench', userId: 'u1', platform: 'discord' } })
  const bareCall = [{ id: 'c1', name: 'weather', arguments: payload }]
  if ((await bareToolset.execute(bareCall))[0].status !== 'ok') throw new Error('the bare core call failed')
  const ns = await compareAll({ floor, core: () => bareToolset.execute(bareCall), auditOff: off.run, auditOn: on.run, auditHashed: hashed.run })
  // The rounds above never yield to the event loop, so no file write completes inside them:
  // they time what a call pays (the events, the draft, keeping it queued), and the records
  // are written after. Here each round's records are written inside it: its calls, then
  // `flush()` (ids, serializing, the appends, the prunes), against the same calls unaudited.
  await on.app.audit.flush()
  const written = { off: [], on: [] }
  for (let round = 0; round < 7; round++) {
    for (const [key, app] of [['off', off], ['on', on]]) {
      await new Promise((resolve) => setImmediate(resolve))
      const start = process.hrtime.bigint()
      for (let i = 0; i < 5_000; i++) await app.run()
      await app.app.audit.flush()
      if (round) written[key].push(Number(process.hrtime.bigint() - start) / 5_000)
    }
  }
  ns.writtenOff = median(written.off)
  ns.writtenOn = median(written.on)
  // The bench's own records must have been kept, or the figure measures nothing.
  const kept = (await on.app.audit.query({ limit: 1 }))[0]
  if (!kept || kept.tool !== 'weather' || kept.outcome !== 'ok' || kept.decided?.kind !== 'rule') throw new Error(`auditing kept no record of the bench's calls: ${JSON.stringify(kept)}`)
  if (!(await hashed.app.audit.query({ limit: 1 }))[0]?.argsHash) throw new Error('the hashed app kept no argsHash')
  for (const app of apps) await app.fiber.dispose()
  rmSync(dataDir, { recursive: true, force: true })
  figures.audit = {
    floorNs: ns.floor,
    offNs: ns.auditOff,
    onNs: ns.auditOn,
    hashedNs: ns.auditHashed,
    onVsOff: ns.auditOn / ns.auditOff,
    hashedVsOff: ns.auditHashed / ns.auditOff,
    offVsFloor: ns.auditOff / ns.floor,
    coreNs: ns.core,
    coreVsFloor: ns.core / ns.floor,
    onVsCore: ns.auditOn / ns.core,
    onVsFloor: ns.auditOn / ns.floor,
    writtenOffNs: ns.writtenOff,
    writtenOnNs: ns.writtenOn,
    writtenOnVsOff: ns.writtenOn / ns.writtenOff,
  }
  printTable('Default plugin, exec tool a rule allows: auditing on vs off vs the floor (median of alternating rounds)', [
    { case: 'floor: JSON.parse + validator + handler', time: formatNs(ns.floor), 'vs off': '', 'vs floor': '1.00×', target: '' },
    { case: 'bare core registry + PermissionEngine, the same rule', time: formatNs(ns.core), 'vs off': '', 'vs floor': (ns.core / ns.floor).toFixed(2) + '×', target: '≤ 2.5× the floor' },
    { case: 'default plugin, audit: { enabled: false }', time: formatNs(ns.auditOff), 'vs off': '1.00×', 'vs floor': (ns.auditOff / ns.floor).toFixed(2) + '×', target: '' },
    { case: 'default plugin, auditing on (default)', time: formatNs(ns.auditOn), 'vs off': (ns.auditOn / ns.auditOff).toFixed(2) + '×', 'vs floor': (ns.auditOn / ns.floor).toFixed(2) + '×', target: '≤ 1.10× off' },
    { case: 'default plugin, auditing on, against the bare core', time: formatNs(ns.auditOn), 'vs off': `${(ns.auditOn / ns.core).toFixed(2)}× the core`, 'vs floor': '', target: '≤ 1.25× the core' },
    { case: 'default plugin, auditing on, hashArguments: true', time: formatNs(ns.auditHashed), 'vs off': (ns.auditHashed / ns.auditOff).toFixed(2) + '×', 'vs floor': (ns.auditHashed / ns.floor).toFixed(2) + '×', target: '—' },
  ])
  printTable('The same, each round\'s records written inside it (calls + flush to audit.jsonl; 6 rounds of 5,000)', [
    { case: 'default plugin, audit: { enabled: false }', time: formatNs(ns.writtenOff), 'vs off': '1.00×' },
    { case: 'default plugin, auditing on, records written', time: formatNs(ns.writtenOn), 'vs off': (ns.writtenOn / ns.writtenOff).toFixed(2) + '×' },
  ])
}
printLoad('at end')
figures.loadAtStart = loadAtStart
writeResults('permissions', figures)
