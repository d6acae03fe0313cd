import { rm } from 'node:fs/promises'
import type { AskerContext, DecisionEvent, ModelToolCall, PermissionRequest, Session } from '@dogu/core'
import type { HostPlugin, PluginContext } from '../../test-support/conformance'
import type { InstalledOtel } from '../../test-support/otel'
import { type ApproverAction, emptyObservations, type Observations, serialize } from './channels'
import { createApp } from './hosts'
import { makeTools, makeWorkspace, type RunRecord, type Workspace } from './instrumented-tools'
import type { EditKind, HostName, SandboxSpec, Scenario } from './scenario'
import { ABSOLUTE_TARGET, snapshotTree, type Tree } from './workspace-tree'

// One run: a fresh app on the host, the harness's plugin (the instrumented tools, the
// scripted approver, the middleware), the batch, then every channel collected.

export const session: Session = { id: 's1', userId: 'u1', platform: 'test', authority: 1 }
const caller = { id: 'u1', platform: 'test', authority: 1 }
/** Long enough that an answer given at once always lands first; a silent approver's question expires. */
export const ASK_TIMEOUT = 40

export interface RunOutcome {
  scenario: Scenario
  sandbox?: SandboxSpec
  observations: Observations
  runs: RunRecord[]
  workspace: Workspace
  before: Tree
  after: Tree
}

/** The edit each kind makes to a tool's arguments, from what the approver was shown. */
export function editFor(tool: string, kind: EditKind, shown: Record<string, unknown>): Record<string, unknown> {
  const edits: Record<string, Record<EditKind, Record<string, unknown>>> = {
    deploy: { 'valid': { ref: 'edited' }, 'unknown-key': { Env: 'staging' }, 'invalid': { env: 'moon' }, 'permission': { env: shown.env === 'prod' ? 'staging' : 'prod' } },
    note: { 'valid': { text: 'edited' }, 'unknown-key': { Count: 2 }, 'invalid': { count: 9 }, 'permission': { count: 3 } },
    peek: { 'valid': { q: 'edited' }, 'unknown-key': { Q: 'x' }, 'invalid': { q: 5 }, 'permission': { q: 'y' } },
    write: { 'valid': { content: 'edited' }, 'unknown-key': { Path: '.git/config' }, 'invalid': { path: 5 }, 'permission': { path: '.git/config' } },
    bash: { 'valid': { timeout: 5_000 }, 'unknown-key': { Command: 'echo x >> .git/config' }, 'invalid': { command: 5 }, 'permission': { command: 'echo x >> .git/config' } },
  }
  return edits[tool]?.[kind] ?? {}
}

function harness(scenario: Scenario, tools: ReturnType<typeof makeTools>, observations: Observations, controller: AbortController): HostPlugin {
  return {
    name: 'invariants-harness',
    inject: ['tools', 'permissions'],
    apply(ctx: PluginContext) {
      for (const tool of tools.tools) ctx.tools.define(tool)
      ctx.permissions.asker((request: PermissionRequest, { respond }: AskerContext) => {
        observations.questions.push(serialize(request))
        const answer = scenario.answer
        const action: ApproverAction = { callId: request.callId, tool: request.tool, answer: answer.kind }
        observations.approver.push(action)
        if (answer.kind === 'silent') return
        if (answer.kind === 'cancel') return void controller.abort()
        if (answer.kind === 'deny') return void (action.verdict = respond({ decision: 'deny', by: caller }))
        if (answer.kind === 'allow') return void (action.verdict = respond({ decision: 'allow', scope: answer.scope, by: caller }))
        // Chat's `e {json}`: merged key by key over the arguments shown.
        const shown = (request.input?.initial ?? request.args ?? {}) as Record<string, unknown>
        action.value = { ...shown, ...editFor(request.tool, answer.edit, shown) }
        action.verdict = respond({ decision: 'allow', by: caller, value: action.value })
        // A refused edit: the person gives up, and says no.
        if (action.verdict !== 'accepted') respond({ decision: 'deny', by: caller, reason: 'the edit was refused' })
      })
      if (scenario.middleware !== 'none') {
        ctx.tools.use(async (call, next) => {
          if (scenario.middleware === 'end' && (call.tool.name === 'deploy' || call.tool.name === 'note')) return { status: 'denied', reason: 'the middleware ends it' }
          const changes: Record<string, Record<string, unknown>> = { deploy: { ref: 'rewritten' }, note: { text: 'rewritten' } }
          if (scenario.middleware === 'rewrite' && changes[call.tool.name]) {
            const args = { ...(call.args as Record<string, unknown>), ...changes[call.tool.name] }
            observations.rewrites.push({ callId: call.id, tool: call.tool.name, args })
            return next(args)
          }
          return next()
        }, { name: 'invariants-middleware' })
      }
    },
  }
}

export async function runScenario(host: HostName, scenario: Scenario, otel: InstalledOtel, sandbox?: SandboxSpec): Promise<RunOutcome> {
  const workspace = await makeWorkspace()
  const tools = makeTools(workspace, sandbox)
  const observations = emptyObservations()
  const controller = new AbortController()
  const spansBefore = otel.spans().length
  const app = await createApp(host, {
    dir: workspace.stores,
    mode: scenario.mode,
    rules: scenario.rules,
    askTimeout: ASK_TIMEOUT,
    repair: scenario.repair,
    quotas: scenario.quotas,
    maxRunning: scenario.maxRunning,
    maxRecords: scenario.maxRecords,
  })
  const logsBefore = app.guard.lines.length
  const before = await snapshotTree(workspace)
  try {
    for (const name of ['tools/call-start', 'tools/call-progress', 'tools/call-log', 'tools/call-end', 'permissions/decision']) {
      app.on(name, (...args: unknown[]) => { observations.events.push(serialize({ name, args })) })
    }
    app.on('permissions/decision', (event: DecisionEvent) => { observations.decisions.push(event) })
    await app.plugin(harness(scenario, tools, observations, controller))
    if (scenario.cancelBefore) controller.abort()
    const calls: ModelToolCall[] = scenario.calls.map((call) => ({ id: call.id, name: call.tool, arguments: structuredClone(call.arguments) }))
    try {
      observations.results = await app.execute(calls, { session, signal: controller.signal })
    } catch (error) {
      observations.thrown.push(error)
    }
    if (scenario.flood) {
      const flood = Array.from({ length: scenario.flood }, (_, i) => ({ id: `f${i}`, name: 'nope', arguments: {} }))
      try {
        observations.floodResults = await app.execute(flood, { session })
      } catch (error) {
        observations.thrown.push(error)
      }
    }
    observations.audit = await app.audit()
  } finally {
    await tools.processes?.dispose()
    await app.stop()
    observations.logs = app.guard.lines.slice(logsBefore)
    observations.errors = app.errors
    observations.spans = otel.spans().slice(spansBefore)
  }
  const after = await snapshotTree(workspace)
  return { scenario, sandbox, observations, runs: tools.runs, workspace, before, after }
}

export async function cleanUp(outcome: RunOutcome): Promise<void> {
  await rm(outcome.workspace.root, { recursive: true, force: true })
  await rm(ABSOLUTE_TARGET, { force: true })
}
