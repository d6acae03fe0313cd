import { type AskAnswer, type ModelToolCall, maskSecrets, secretPaths, summarizeArgs, type ToolResult, type Toolset } from '@dogu/core'
import type { RunnableConfig } from '@langchain/core/runnables'
import type { ToolRunnableConfig } from '@langchain/core/tools'
import { type FrameworkApprover, frameworkAnswer } from '../common/framework-answer'
import { SessionToolsets } from '../common/session-toolsets'
import { DoguStructuredTool } from './dogu-structured-tool'
import { type ApprovalInterrupt, askInGraph, canInterrupt } from './graph-approval'
import { StartedCalls } from './started-calls'
import { type DoguToolOutput, toolOutputOf } from './tool-output'

export interface LangchainToolsOptions {
  /**
   * Who approves through the graph's resume, and for how long their yes holds: one for all
   * calls, or one per call id. A resume's own `scope` wins over this one's.
   * @default { by: the session's userId, scope: 'once' }
   */
  approver?: FrameworkApprover | ((callId: string) => FrameworkApprover)
  /**
   * The Dogu session a call belongs to, from the tool's config: its grants (`session` scope),
   * quotas and audit records are keyed to it. `undefined` is the toolset's own session.
   * @default (config) => config.configurable?.thread_id, LangGraph's thread
   */
  session?: (config: RunnableConfig) => string | undefined
}

/** Added to Dogu's `no_asker` denial: the other way to ask, for the developer reading the run. */
const NO_INTERRUPT = '; or run the tool inside a LangGraph graph compiled with a checkpointer, where @dogu/frameworks/langchain asks through interrupt()'

/**
 * Dogu's tools as LangChain `StructuredTool`s, one per `toolset.names` entry, named as the Dogu
 * tool, for `bindTools`, LangGraph's `ToolNode` or any agent. Each call goes through Dogu's
 * pipeline: repair and validation (LangChain's own schema check is left out, so the model
 * reads Dogu's `invalid_arguments` with its paths), rules, grants, quotas, sandbox, audit.
 *
 * A call Dogu's rules would ask about becomes a LangGraph `interrupt()` carrying an
 * `ApprovalInterrupt`, when the tool runs inside a graph with a checkpointer: the graph pauses,
 * and `new Command({ resume: ApprovalResume })` answers it; the call is authorized again then
 * and runs once. Elsewhere (a direct `invoke`, a graph without a checkpointer) it is made as it
 * comes: Dogu asks its own askers if the app registered any (`engine.addAsker`), else the model
 * reads Dogu's denial saying approval was needed and nobody could be asked.
 *
 * A tool call (ToolNode's input) returns a `ToolMessage`: Dogu's text, `status: 'error'` for a
 * call that did not run, the `ModelOutcome` as its artifact. A direct `invoke(args)` returns the text.
 */
export function langchainTools(toolset: Toolset, options: LangchainToolsOptions = {}): DoguStructuredTool[] {
  const sessions = new SessionToolsets(toolset)
  const started = new StartedCalls<DoguToolOutput>()
  const sessionOf = options.session ?? threadOf
  const approverFor = (callId: string): FrameworkApprover => (typeof options.approver === 'function' ? options.approver(callId) : options.approver) ?? {}
  const loosened = toolset.loosened('json')
  // The model is shown plain JSON Schema: calls are read in that dialect (no JSON-encoded fields).
  toolset.definitions('json')

  const runner = (name: string) => async (args: unknown, config: ToolRunnableConfig): Promise<DoguToolOutput> => {
    const tools = sessions.get(sessionOf(config))
    const session = tools.session.id
    const toolCallId = config.toolCall?.id
    const call: ModelToolCall = { id: toolCallId ?? `langchain_${globalThis.crypto.randomUUID()}`, name, arguments: args as ModelToolCall['arguments'] }
    const inGraph = toolCallId !== undefined && canInterrupt(config)
    if (inGraph) {
      const earlier = started.get(session, call.id)
      if (earlier) {
        // Its question keeps its place among the node's interrupts, which LangGraph counts.
        if (earlier.asked) await askInGraph(earlier.asked)
        return earlier.output
      }
    }
    let answers: Record<string, AskAnswer> | undefined
    let asked: ApprovalInterrupt | undefined
    if (inGraph) {
      const decision = await tools.decide(call)
      if (decision.decision === 'ask') {
        asked = questionOf(tools, call, decision.permission, decision.reason)
        const resume = await askInGraph(asked)
        const approver = approverFor(call.id)
        answers = { [call.id]: frameworkAnswer(tools.session, resume.approved, 'langchain', resume.scope ? { ...approver, scope: resume.scope } : approver, resume.reason) }
      }
    }
    const output = tools.execute([call], { signal: config.signal, answers }).then(([result]) => toolOutputOf(withHint(result!), toolCallId))
    if (inGraph) started.add(session, call.id, asked ? { output, asked } : { output })
    return output
  }

  const definitions = toolset.definitionsOf(toolset.names, 'json')
  return definitions.map((definition) => new DoguStructuredTool(definition, Object.hasOwn(loosened, definition.name) ? loosened[definition.name]! : [], runner(definition.name)))
}

function threadOf(config: RunnableConfig): string | undefined {
  const thread: unknown = config.configurable?.thread_id
  return thread === undefined || thread === null ? undefined : String(thread)
}

/** Dogu's question, as the graph's interrupt carries it. */
function questionOf(toolset: Toolset, call: ModelToolCall, permission: { name: string; target?: string }, reason: string | undefined): ApprovalInterrupt {
  const args = maskSecrets(parsedArgs(call.arguments), secretPaths(toolset.get(call.name)!.args))
  const question: ApprovalInterrupt = {
    type: 'dogu/approval',
    callId: call.id,
    tool: call.name,
    summary: summarizeArgs(call.name, args, permission),
    args,
    permission: permission.target === undefined ? { name: permission.name } : { name: permission.name, target: permission.target },
    session: toolset.session.id,
  }
  if (reason !== undefined) question.reason = reason
  return question
}

function parsedArgs(args: ModelToolCall['arguments']): unknown {
  if (typeof args !== 'string') return args ?? {}
  try {
    return JSON.parse(args)
  } catch {
    return args
  }
}

function withHint(result: ToolResult): ToolResult {
  const denial = result.params as { cause?: string } | undefined
  return result.status === 'denied' && denial?.cause === 'no_asker' ? { ...result, content: result.content + NO_INTERRUPT } : result
}
