import { rm } from 'node:fs/promises'
import type { Asker, DecisionEvent, ModelToolCall, PermissionRequest, Session, ToolResult } from '@dogu/core'
import type { FileChange, UndoOutcome } from '@dogu/fs'
import type { HostPlugin, PluginContext } from '../../test-support/conformance'
import type { InstalledOtel } from '../../test-support/otel'
import { type BeforeAnswer, chatPerson, frameworkAnswers, scriptedAsker } from './approvers'
import { emptyObservations, type Observations, serialize } from './channels'
import { createApp, type RunApp } from './hosts'
import { makeTools, makeWorkspace, type RunRecord, type Toolbox, type Workspace } from './instrumented-tools'
import type { HostSpec, SandboxSpec, Scenario, Undo } from './scenario'
import { swapForLink, tamperWith } from './third-party'
import { ABSOLUTE_TARGET, snapshotTree, type Tree } from './workspace-tree'

// One run: a fresh app on the host, the harness's plugin (the instrumented tools, the
// scripted approver, the middleware), the batch, then every channel collected; last, when
// the scenario says so, the undo of the last file change. A framework's user answers before
// the batch, and the framework makes each call on its own, as its tools' `execute` does.

export const session: Session = { id: 's1', userId: 'u1', platform: 'test', authority: 1 }

/**
 * Long enough that an answer given at once always lands first; a silent approver's question
 * expires. An answer in chat, or after a look at the console, takes a few more hops (the
 * database, the middleware, an HTTP request) than one handed to `respond`.
 */
export function askTimeout(host: HostSpec): number {
  return host.approver === 'chat' || host.console ? 200 : 40
}

/** The undo after the run: the change undone, what was swapped in before, the workspace around it. */
export interface UndoStep {
  change: FileChange
  kind: Undo
  /** What `swapForLink` replaced, if anything. */
  swapped?: string
  outcomes: UndoOutcome[]
  error?: unknown
  before: Tree
  after: Tree
}

export interface RunOutcome {
  host: HostSpec
  scenario: Scenario
  sandbox?: SandboxSpec
  observations: Observations
  runs: RunRecord[]
  /** Every file change `write` and `edit` made, oldest first. */
  changes: FileChange[]
  workspace: Workspace
  before: Tree
  after: Tree
  undo?: UndoStep
}

/** The harness's plugin: the tools, the middleware, and the person's asker (none for a framework's user: the framework asks them). */
function harness(scenario: Scenario, tools: Toolbox, observations: Observations, asker: Asker | undefined): HostPlugin {
  return {
    name: 'invariants-harness',
    inject: ['tools', 'permissions'],
    apply(ctx: PluginContext) {
      for (const tool of tools.tools) ctx.tools.define(tool)
      if (asker) ctx.permissions.asker(asker)
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

/** Reads the console's question board and the pending store, and changes the previewed file, before the person answers. */
function beforeAnswer(app: RunApp, scenario: Scenario, workspace: Workspace, observations: Observations): BeforeAnswer {
  return async (shown, request) => {
    if (app.console) observations.console.push(serialize(await app.console('approvals.list')))
    // Only the engine's own questions are kept: a framework's is asked before the call is made.
    if (request && scenario.durable !== false) {
      const stored = await keptRecord(app, request)
      if (stored !== undefined) observations.stored.push(stored)
    }
    const tampering = await tamperWith(scenario.tamper, workspace, shown)
    if (tampering) observations.tampered.push(tampering)
  }
}

/**
 * What the pending store holds once it keeps `request` (`permissions.durable`: the record is
 * written as the question is asked, without the call waiting for it): what a restart would
 * read, and a channel I2 checks for secrets. Looked for during the first half of the
 * question's time only, so that the answer still comes in time (the harness's questions
 * expire within 40 ms); a record written later is not seen (`undefined`).
 */
async function keptRecord(app: RunApp, request: Readonly<PermissionRequest>): Promise<string | undefined> {
  const until = request.createdAt + (request.expiresAt - request.createdAt) / 2
  do {
    const text = await app.pendingStore()
    if (text.includes(request.id)) return text
    await new Promise((resolve) => setTimeout(resolve, 2))
  } while (Date.now() < until)
  return undefined
}

/** Undoes the last change, after swapping its path for a link when the scenario says so. */
async function undoLast(kind: Undo, tools: Toolbox, workspace: Workspace): Promise<UndoStep | undefined> {
  const change = tools.changes.list().at(-1)
  if (kind === 'none' || !change) return undefined
  const swapped = await swapForLink(kind, workspace, change)
  const before = await snapshotTree(workspace)
  let outcomes: UndoOutcome[] = []
  let error: unknown
  try {
    outcomes = await tools.changes.undo(change.id)
  } catch (thrown) {
    error = thrown
  }
  return { change, kind, swapped, outcomes, error, before, after: await snapshotTree(workspace) }
}

export async function runScenario(host: HostSpec, scenario: Scenario, otel: InstalledOtel, sandbox?: SandboxSpec): Promise<RunOutcome> {
  const workspace = await makeWorkspace()
  const tools = makeTools(workspace, sandbox)
  const observations = emptyObservations()
  const controller = new AbortController()
  const spansBefore = otel.spans().length
  const app = await createApp(host, {
    dir: workspace.stores,
    mode: scenario.mode,
    rules: scenario.rules,
    askTimeout: askTimeout(host),
    repair: scenario.repair,
    quotas: scenario.quotas,
    maxRunning: scenario.maxRunning,
    maxRecords: scenario.maxRecords,
    durable: scenario.durable,
  })
  const logsBefore = app.guard.lines.length
  const before = await snapshotTree(workspace)
  const answering = beforeAnswer(app, scenario, workspace, observations)
  const person = app.chat && chatPerson(app.chat, scenario.answer, observations, controller, answering)
  try {
    for (const name of ['tools/call-start', 'tools/call-progress', 'tools/call-log', 'tools/call-end', 'permissions/decision']) {
      app.on(name, (...args: unknown[]) => { observations.events.push(serialize({ name, args })) })
    }
    app.on('permissions/decision', (event: DecisionEvent) => { observations.decisions.push(event) })
    const framework = host.approver === 'framework'
    await app.plugin(harness(scenario, tools, observations, framework ? undefined : person?.asker ?? scriptedAsker(scenario.answer, observations, controller, answering)))
    if (scenario.cancelBefore) controller.abort()
    const calls: ModelToolCall[] = scenario.calls.map((call) => ({ id: call.id, name: call.tool, arguments: structuredClone(call.arguments) }))
    try {
      observations.results = framework
        ? await executeAsFramework(app, calls, scenario, observations, controller, answering)
        : await app.execute(calls, { session: app.chat?.session ?? session, signal: controller.signal })
    } catch (error) {
      observations.thrown.push(error)
    }
    if (scenario.flood) {
      const flood = Array.from({ length: scenario.flood }, (_, i) => ({ id: `f${i}`, name: 'nope', arguments: {} }))
      try {
        observations.floodResults = await app.execute(flood, { session: app.chat?.session ?? session })
      } catch (error) {
        observations.thrown.push(error)
      }
    }
    // The person's last words (a late answer, a "no" after a refused edit) before anything is read.
    await person?.settled()
    observations.audit = await app.audit()
    if (app.console) {
      observations.console.push(serialize(await app.console('log.list')))
      observations.console.push(serialize(await app.console('audit.list', { limit: 200 })))
    }
  } finally {
    await tools.processes?.dispose()
    await app.stop()
    if (app.chat) observations.chat.push(...app.chat.posts, ...app.chat.replies)
    observations.logs = app.guard.lines.slice(logsBefore)
    observations.errors = app.errors
    observations.spans = otel.spans().slice(spansBefore)
  }
  const after = await snapshotTree(workspace)
  const undo = await undoLast(scenario.undo, tools, workspace)
  return { host, scenario, sandbox, observations, runs: tools.runs, changes: tools.changes.list(), workspace, before, after, undo }
}

/**
 * The calls as an agent framework makes them with @dogu/frameworks: the person's answers
 * first (`frameworkAnswers`: `decide`, then the question), then each call by its own
 * `execute`, all at once with the run's signal, an answer given as that call's `answers`.
 */
async function executeAsFramework(app: RunApp, calls: ModelToolCall[], scenario: Scenario, observations: Observations, controller: AbortController, answering: BeforeAnswer): Promise<ToolResult[]> {
  const toolset = app.toolset(session)
  const answers = await frameworkAnswers(toolset, calls, scenario.answer, observations, controller, answering)
  const results = await Promise.all(calls.map((call, i) => {
    const answer = answers[i]
    return toolset.execute([call], { signal: controller.signal, ...(answer ? { answers: { [call.id]: answer } } : {}) })
  }))
  return results.flat()
}

export async function cleanUp(outcome: RunOutcome): Promise<void> {
  await rm(outcome.workspace.root, { recursive: true, force: true })
  await rm(ABSOLUTE_TARGET, { force: true })
}
