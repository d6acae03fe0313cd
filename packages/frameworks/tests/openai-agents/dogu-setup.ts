// A host-free Dogu under OpenAI Agents: a registry with a permission engine and an audit log
// (as docs/audit.md wires them), its tools counting their runs, and an agent whose model is
// the SDK's ScriptedModel. The spec and the child process of the RunState test both use it.
import { AuditLog, defineTool, PermissionEngine, type PermissionRule, type Session, type Tool, type ToolsetOptions, ToolRegistry } from '@dogu/core'
import { Agent, type ModelRequest, setTracingDisabled } from '@openai/agents'
import { ScriptedModel, type ScriptedModelInput } from '@openai/agents/testing'
import Schema from 'schemastery'
import { agentsTools, type AgentsToolsOptions } from '../../src/openai-agents'

// No tracing exporter: no network, and no warning about a missing API key.
setTracingDisabled(true)

export const session: Session = { id: 'thread-1', userId: 'alice', platform: 'web' }

export interface DoguSetup {
  registry: ToolRegistry
  engine: PermissionEngine
  audit: AuditLog
  /** What the tools did, in order: `save hi`, `lookup x`. */
  runs: string[]
  /** Calls of `wait` that saw their signal abort. */
  aborted: string[]
  /** Resolves when `wait` has started. */
  waiting: Promise<void>
  stop(): Promise<void>
}

export function doguSetup(options: { rules?: PermissionRule[]; tools?: Tool[] } = {}): DoguSetup {
  const audit = new AuditLog()
  const engine = new PermissionEngine({ rules: options.rules ?? [], onDecision: (event) => audit.onDecision(event) })
  const registry = new ToolRegistry({ emit: (name, ...args) => { if (name === 'tools/call-end') audit.onCallEnd(args[0] as never, args[1] as never) } })
  registry.permissions = engine
  const runs: string[] = []
  const aborted: string[] = []
  let started!: () => void
  const waiting = new Promise<void>((resolve) => { started = resolve })
  registry.define(defineTool({
    name: 'lookup',
    description: 'Look a word up',
    args: Schema.object({ q: Schema.string().required(), limit: Schema.natural().max(10) }),
    traits: { effect: 'read' },
    run: ({ q }) => { runs.push(`lookup ${q}`); return `found ${q}` },
  }))
  registry.define(defineTool({
    name: 'save-note',
    description: 'Save a note',
    args: Schema.object({ text: Schema.string().required() }),
    traits: { effect: 'write' },
    run: ({ text }) => { runs.push(`save ${text}`); return `saved ${text}` },
  }))
  registry.define(defineTool({
    name: 'wait',
    description: 'Wait until cancelled',
    args: Schema.object({}),
    traits: { effect: 'read' },
    run: (_, call) => new Promise((resolve) => {
      call.signal.addEventListener('abort', () => { aborted.push(call.id); resolve('stopped') }, { once: true })
      started()
    }),
  }))
  for (const tool of options.tools ?? []) registry.define(tool)
  return { registry, engine, audit, runs, aborted, waiting, stop: () => Promise.all([audit.stop(), engine.stop()]).then(() => {}) }
}

/** The agent the model drives, with the Dogu toolset of `session` as its tools. */
export function scriptedAgent(dogu: DoguSetup, steps: ScriptedModelInput[], options?: AgentsToolsOptions<AppContext>, toolset?: Partial<ToolsetOptions>) {
  const model = new ScriptedModel(steps)
  const tools = agentsTools<AppContext>(dogu.registry.toolset({ session, ...toolset }), options)
  const agent = new Agent<AppContext>({ name: 'ops', instructions: 'Use the tools.', model, tools })
  return { agent, model, tools }
}

/** The run context these tests give: the Dogu session id of the run. */
export interface AppContext {
  sessionId?: string
  /** What the `session` option of one test reads instead. */
  room?: string
}

/** What the model was told of each call, by call id, in its `index`th request. */
export function toolOutputs(request: ModelRequest): Record<string, unknown> {
  const outputs: Record<string, unknown> = {}
  for (const item of request.input as { type?: string; callId?: string; output?: { type: string; text?: string } | unknown[] }[]) {
    if (item.type !== 'function_call_result') continue
    const output = item.output as { type: string; text?: string }
    outputs[item.callId!] = output && !Array.isArray(output) && output.type === 'text' ? output.text : output
  }
  return outputs
}
