import { InvalidToolInputError, type ToolCallRepairFunction, type ToolSet } from 'ai'
import { repairArguments } from '@dogu/core'
import { TOOL_ADAPTERS } from './tool-adapters'

/**
 * An `experimental_repairToolCall` for `generateText` / `streamText` that hands a Dogu
 * tool's unparsable arguments to Dogu instead of the SDK's parse error: the SDK parses the
 * model's JSON text before `execute`, and without this refuses malformed text with its
 * own message. With it, the call goes on; its `execute` gives Dogu the model's text as it
 * was, and Dogu repairs it (the result and the audit record say what was repaired) or
 * refuses it with its own `invalid_arguments` text. The call's input in the SDK's history
 * is Dogu's repair of the text, or, when that fails, the text itself as a JSON string
 * (what the SDK keeps for an unparsable call, too).
 *
 * `fallback` handles the rest: calls of tools not made by `aiSdkTools`, and names no tool
 * has (the SDK's `NoSuchToolError`). Without one, those stay the SDK's errors.
 *
 * @example generateText({ model, tools: aiSdkTools(toolset), experimental_repairToolCall: repairToolCall(), prompt })
 */
export function repairToolCall<TOOLS extends ToolSet = ToolSet>(fallback?: ToolCallRepairFunction<TOOLS>): ToolCallRepairFunction<TOOLS> {
  return async (options) => {
    const { toolCall, tools, error } = options
    // The model chose the name: own properties only.
    const tool = Object.hasOwn(tools, toolCall.toolName) ? tools[toolCall.toolName] : undefined
    const raw = tool ? TOOL_ADAPTERS.get(tool)?.raw : undefined
    if (!raw || !InvalidToolInputError.isInstance(error)) return fallback ? fallback(options) : null
    const fixed = repairArguments(toolCall.input)
    const input = 'error' in fixed || !isObject(fixed.value) ? JSON.stringify(toolCall.input) : fixed.json
    raw.keep(toolCall.toolCallId, toolCall.input, input)
    return { ...toolCall, input }
  }
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
