import type { ToolResult } from '@dogu/core'
import { ToolMessage } from '@langchain/core/messages'
import { type ModelOutcome, outcomeOf } from '../common/model-outcome'

/** Text, then images, as LangChain's standard content blocks. */
export type ToolContent = string | ({ type: 'text'; text: string } | { type: 'image'; mimeType: string; data: string })[]

/** What a Dogu tool returns: a ToolMessage for a model's tool call, its content for a direct `invoke(args)`. */
export type DoguToolOutput = ToolMessage | ToolContent

/**
 * A Dogu result as LangChain shows it to the model: Dogu's text (with its images) as the
 * message content; `status: 'error'` unless the call ran (`ok`) or continues in the
 * background (the model asks `task_status` about it, nothing failed); the `ModelOutcome`
 * (status, code, invalid paths, task id, data) as the artifact, which the app reads and
 * the model does not.
 */
export function toolOutputOf(result: ToolResult, toolCallId: string | undefined): DoguToolOutput {
  const content = contentOf(result)
  if (toolCallId === undefined) return content
  const artifact: ModelOutcome = outcomeOf(result)
  return new ToolMessage({
    content,
    tool_call_id: toolCallId,
    name: result.name,
    status: result.status === 'ok' || result.status === 'background' ? 'success' : 'error',
    artifact,
  })
}

function contentOf(result: ToolResult): ToolContent {
  if (!result.images?.length) return result.content
  return [
    { type: 'text', text: result.content },
    ...result.images.map(({ mimeType, data }) => ({ type: 'image' as const, mimeType, data })),
  ]
}
