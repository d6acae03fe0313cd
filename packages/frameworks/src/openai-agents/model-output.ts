import type { ToolResult } from '@dogu/core'
import type { ToolOutputImage, ToolOutputText } from '@openai/agents'
import { type ModelOutcome, outcomeOf } from '../common/model-outcome'

/** What a Dogu tool's `invoke` returns: Dogu's text, followed by its images when it has any. */
export type AgentsToolOutput = string | (ToolOutputText | ToolOutputImage)[]

/**
 * The result as the model reads it: Dogu's `content` (a denial, `invalid_arguments` naming
 * the paths, a background task's id), and its images as the SDK's structured output.
 */
export function modelOutput(result: ToolResult): AgentsToolOutput {
  if (!result.images?.length) return result.content
  return [
    { type: 'text', text: result.content },
    ...result.images.map((image): ToolOutputImage => ({ type: 'image', image: { data: image.data, mediaType: image.mimeType } })),
  ]
}

/** What the app reads on the output item (`item.customData.dogu`), less the text the model read. */
export type AgentsOutcome = Omit<ModelOutcome, 'content'>

/**
 * The outcome as the SDK's custom data must be: plain JSON. A tool's `data` that is not
 * JSON is left out rather than failing the run.
 */
export function customOutcome(result: ToolResult): AgentsOutcome {
  const { content, ...outcome } = outcomeOf(result)
  // Status, code, paths and task id are JSON already; only a tool's `data` may not be.
  if (outcome.data === undefined) return outcome
  try {
    return JSON.parse(JSON.stringify(outcome))
  } catch {
    const { data, ...rest } = outcome
    return JSON.parse(JSON.stringify(rest))
  }
}
