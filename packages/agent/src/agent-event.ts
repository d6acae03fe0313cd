import type { BackgroundTask, ModelToolCall, ToolResult } from '@dogu/core'
import type { AgentResult, AgentUsage } from './run-agent'
import type { CutOffTextToolCall } from './text-tool-calls'

/** What `runAgent` reports to `onEvent`, as it happens. */
export type AgentEvent =
  /** A model turn begins (1-based). */
  | { type: 'step'; step: number }
  /** A piece of the model's text. */
  | { type: 'text'; delta: string }
  /** A call the model made; all of one turn's calls come before their results. */
  | { type: 'tool-call'; call: ModelToolCall }
  /** The result of one call, in the calls' order once the batch is done. */
  | { type: 'tool-result'; result: ToolResult }
  /** Tools `tool_search` loaded: in the definitions from the next turn on. */
  | { type: 'tools-loaded'; names: string[] }
  /** Settled background tasks, told to the model before this turn. */
  | { type: 'notice'; tasks: BackgroundTask[]; text: string }
  /** Tokens of one turn, as the endpoint counted them. */
  | { type: 'usage'; step: number; usage: AgentUsage }
  /** The reply's text ends inside a call written as text (cut at its token limit, most often): it stays text and did not run. */
  | { type: 'text-call-cut-off'; step: number; cutOff: CutOffTextToolCall }
  /** A failed request about to be sent again. */
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  /** The run ended with an answer. */
  | { type: 'end'; result: AgentResult }
