import type { Tool } from 'ai'
import type { ToolAudio, ToolImage, ToolResult } from '@dogu/core'
import { type ModelOutcome, outcomeOf } from '../common/model-outcome'

/**
 * What a Dogu tool's `execute` returns to the AI SDK (the `output` of its tool-result parts,
 * what `result.toolResults` and UI messages hold): Dogu's outcome (status, the English text
 * the model reads, code, invalid paths, task id, data) and the media the model sees.
 */
export interface AiSdkToolOutput extends ModelOutcome {
  images?: ToolImage[]
  audio?: ToolAudio[]
}

/** What the AI SDK sends the model for a tool result (`toModelOutput`'s return). */
export type AiSdkModelOutput = Awaited<ReturnType<NonNullable<Tool<unknown, AiSdkToolOutput>['toModelOutput']>>>

type ContentPart = Extract<AiSdkModelOutput, { type: 'content' }>['value'][number]

/** A Dogu result as the tool's output. */
export function toolOutputOf(result: ToolResult): AiSdkToolOutput {
  const output: AiSdkToolOutput = outcomeOf(result)
  if (result.images?.length) output.images = result.images.map(({ mimeType, data }) => ({ mimeType, data }))
  if (result.audio?.length) output.audio = result.audio.map(({ mimeType, data }) => ({ mimeType, data }))
  return output
}

/**
 * The tool's output as the model reads it, Dogu's text in every case: a result as text (with
 * its images and audio as content parts), a denial as the SDK's own `execution-denied` (so a
 * rule's denial reads like a user's rejection), a call that goes on in the background as
 * text (it was not refused), and every other failure (invalid arguments with their paths, an
 * error, a timeout, a quota) as `error-text`.
 */
export function modelOutputOf(output: AiSdkToolOutput): AiSdkModelOutput {
  // An output that is not Dogu's (a UI message from elsewhere): the SDK's own default.
  if (!output || typeof output !== 'object' || typeof output.content !== 'string') return { type: 'json', value: (output ?? null) as never }
  switch (output.status) {
    case 'ok': return output.images?.length || output.audio?.length ? { type: 'content', value: mediaParts(output) } : { type: 'text', value: output.content }
    case 'background': return { type: 'text', value: output.content }
    case 'denied': return { type: 'execution-denied', reason: output.content }
    default: return { type: 'error-text', value: output.content }
  }
}

function mediaParts(output: AiSdkToolOutput): ContentPart[] {
  const parts: ContentPart[] = output.content ? [{ type: 'text', text: output.content }] : []
  for (const image of output.images ?? []) parts.push({ type: 'image-data', data: image.data, mediaType: image.mimeType })
  for (const audio of output.audio ?? []) parts.push({ type: 'file-data', data: audio.data, mediaType: audio.mimeType })
  return parts
}
