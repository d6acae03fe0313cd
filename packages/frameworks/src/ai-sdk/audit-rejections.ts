import type { PrepareStepFunction, ToolSet } from 'ai'
import { rejectionsIn } from './approval-response'
import { TOOL_ADAPTERS } from './tool-adapters'

/**
 * A `prepareStep` for `generateText` / `streamText` / `ToolLoopAgent` that gives Dogu the
 * user's rejections: when a request brings `tool-approval-response`s with `approved: false`,
 * the SDK answers the model with `execution-denied` itself and calls nothing of the tool,
 * so Dogu would never hear of them. Before the first step this hands each rejected call of
 * a tool of `tools` to Dogu with the user's no as its answer: it is denied (never run, no
 * quota taken) and audited as declined, `via: 'ai-sdk'`, by the approver, with the
 * response's reason. What the model reads is unchanged. Each approval is recorded once per
 * `aiSdkTools()` (a request sent again is not recorded again, in the same process).
 *
 * `fallback`: the app's own `prepareStep`, called after, whose result is returned.
 *
 * @example generateText({ model, tools, messages, prepareStep: auditRejections(tools) })
 */
export function auditRejections<TOOLS extends ToolSet>(tools: TOOLS, fallback?: PrepareStepFunction<TOOLS>): PrepareStepFunction<TOOLS> {
  return async (options) => {
    if (options.stepNumber === 0) {
      for (const rejection of rejectionsIn(options.messages)) {
        // The model chose the names in the history: own properties only.
        const tool = Object.hasOwn(tools, rejection.toolName) ? tools[rejection.toolName] : undefined
        const adapter = tool ? TOOL_ADAPTERS.get(tool) : undefined
        if (adapter) await adapter.recordRejection(rejection, { messages: options.messages, experimental_context: options.experimental_context })
      }
    }
    return fallback ? fallback(options) : undefined
  }
}
