import type { OpenAIToolDefinition, Toolset } from '@dogu/core'
import type { FunctionTool, RunContext } from '@openai/agents'
import { AgentsRuns, type AgentsToolsOptions } from './agents-options'
import { type AgentsOutcome, type AgentsToolOutput, customOutcome, modelOutput } from './model-output'
import { rememberAsked, takeAsked } from './asked-calls'
import { sdkAnswer } from './sdk-approval'

/** One Dogu tool as the SDK's function tool. */
export type AgentsTool<TContext = unknown> = FunctionTool<TContext, any, AgentsToolOutput>

/**
 * The toolset's tools as OpenAI Agents JS `FunctionTool`s, one per `toolset.names` entry,
 * each named as the Dogu tool is, for `new Agent({ tools })`.
 *
 * - `parameters` and `strict` are the tool's `openai` definition: strict mode when the schema
 *   can be stated in it, else plain JSON Schema with `strict: false`; `toolset.loosened('openai')`
 *   lists what those say less than the schema. Dogu validates every call against the exact rule.
 * - `needsApproval` is Dogu's decision (`toolset.decide`): `ask` interrupts the run, and
 *   `state.approve(item)` / `state.reject(item)` answer. Rules that allow or deny decide without
 *   an interruption.
 * - `invoke` runs the model's JSON text through Dogu's pipeline (repair, validation, rules,
 *   sandbox, quotas, audit) with the run's abort signal. An approved call is authorized again as
 *   it runs, with the SDK user's yes as its answer (audited `via: 'openai-agents'`), so a rule
 *   that denies it by then wins, even after a `RunState` was restored in another process.
 * - The model reads Dogu's text (and images); the output item's `customData.dogu` carries the
 *   status, code, invalid paths, background task and data for the app.
 *
 * @example
 * const agent = new Agent({ name: 'ops', tools: agentsTools(registry.toolset({ session })) })
 * let result = await run(agent, 'deploy', { context: { sessionId: 'thread-1' } })
 * for (const item of result.interruptions) result.state.approve(item)
 * result = await run(agent, result.state)
 */
export function agentsTools<TContext = unknown>(toolset: Toolset, options: AgentsToolsOptions<TContext> = {}): AgentsTool<TContext>[] {
  const runs = new AgentsRuns(toolset, options)
  // `definitions` also tells the toolset that its model sees the `openai` form.
  const advertised = new Map(toolset.definitions('openai').map((definition) => [definition.function.name, definition]))
  const rest = toolset.names.filter((name) => !advertised.has(name))
  for (const definition of toolset.definitionsOf(rest, 'openai')) advertised.set(definition.function.name, definition)
  const outcomes = new WeakMap<RunContext<TContext>, Map<string, AgentsOutcome>>()
  const unasked = new WeakMap<RunContext<TContext>, Set<string>>()
  return toolset.names.map((name) => functionTool(advertised.get(name)!, runs, outcomes, unasked))
}

let unnamedCalls = 0

/**
 * `unasked`: the calls of each run that this process's `needsApproval` let through without an
 * interruption, so no SDK approval can exist for them: their `invoke` skips asking the SDK
 * (its `isToolApproved` costs several times a Dogu call). A call approved in another process, or
 * for the whole run (`alwaysApprove`), is not in it, and is looked up.
 */
function functionTool<TContext>(definition: OpenAIToolDefinition, runs: AgentsRuns<TContext>, outcomes: WeakMap<RunContext<TContext>, Map<string, AgentsOutcome>>, unasked: WeakMap<RunContext<TContext>, Set<string>>): AgentsTool<TContext> {
  const { name, description, parameters, strict } = definition.function
  return {
    type: 'function',
    name,
    description,
    parameters: parameters as AgentsTool['parameters'],
    strict,
    // The SDK hands over the arguments it parsed; what Dogu would do is decided again when the call is made.
    // (The SDK types this run context without the app's context type.)
    needsApproval: async (runContext, input, callId) => {
      const toolset = runs.toolsetOf(runContext as RunContext<TContext>)
      const decision = await toolset.decide({ id: callId ?? '', name, arguments: input })
      // A rejection is told to `agentsRejectionFormatter` without the arguments: kept for it.
      if (decision.decision === 'ask') {
        if (callId) rememberAsked(toolset.session.id, name, callId, input)
        return true
      }
      if (callId) {
        const context = runContext as RunContext<TContext>
        let calls = unasked.get(context)
        if (!calls) unasked.set(context, calls = new Set())
        calls.add(callId)
      }
      return false
    },
    isEnabled: async () => true,
    invoke: async (runContext, input, details) => {
      const callId = details?.toolCall?.callId ?? `dogu-call-${++unnamedCalls}`
      const toolset = runs.toolsetOf(runContext)
      const calls = unasked.get(runContext)
      const answer = calls?.delete(callId) ? undefined : sdkAnswer(runContext, name, callId, toolset.session, runs.approverOf(callId, runContext))
      if (answer) takeAsked(toolset.session.id, name, callId)
      // The raw JSON text, so that Dogu's repair and validation are the ones that run.
      const [result] = await toolset.execute([{ id: callId, name, arguments: input }], {
        ...(details?.signal ? { signal: details.signal } : {}),
        ...(answer ? { answers: { [callId]: answer } } : {}),
      })
      let byCall = outcomes.get(runContext)
      if (!byCall) outcomes.set(runContext, byCall = new Map())
      byCall.set(callId, customOutcome(result!))
      return modelOutput(result!)
    },
    customDataExtractor: ({ runContext, toolCall }) => {
      const byCall = outcomes.get(runContext)
      const outcome = byCall?.get(toolCall.callId)
      byCall?.delete(toolCall.callId)
      return outcome ? { dogu: outcome } : undefined
    },
  }
}
