import type { ToolArtifact, ToolAudio, ToolImage, ToolOutputObject, ToolResource } from './tool-result'

export interface NormalizedOutput {
  content: string
  images?: ToolImage[]
  audio?: ToolAudio[]
  resources?: ToolResource[]
  data?: unknown
  artifacts?: ToolArtifact[]
}

const OUTPUT_KEYS = new Set(['text', 'images', 'audio', 'resources', 'data', 'artifacts'])

/**
 * Turns what `run` returned into the result's fields, once, at the boundary:
 * a string is the text; `{ text, images?, audio?, resources?, data?, artifacts? }` is taken as is;
 * anything else is JSON for the model and kept as `data` for the host.
 */
export function normalizeOutput(output: unknown): NormalizedOutput {
  if (typeof output === 'string') return { content: output }
  if (output === undefined || output === null) return { content: '' }
  if (isOutputObject(output)) {
    const result: NormalizedOutput = { content: output.text }
    if (output.images?.length) result.images = output.images
    if (output.audio?.length) result.audio = output.audio
    if (output.resources?.length) result.resources = output.resources
    if (output.data !== undefined) result.data = output.data
    if (output.artifacts?.length) result.artifacts = output.artifacts
    return result
  }
  let content: string
  try {
    content = JSON.stringify(output) ?? String(output)
  } catch {
    // Cycles or BigInt: the model still gets something readable.
    content = String(output)
  }
  return { content, data: output }
}

function isOutputObject(value: unknown): value is ToolOutputObject {
  if (typeof value !== 'object' || Array.isArray(value)) return false
  if (typeof (value as ToolOutputObject).text !== 'string') return false
  for (const key in value) if (!OUTPUT_KEYS.has(key)) return false
  return true
}

/** Cuts oversized content and says so, so the model knows it saw part of the output. */
export function truncateContent(content: string, limit: number): string {
  if (content.length <= limit) return content
  const omitted = content.length - limit
  return `${content.slice(0, limit)}\n…[truncated: ${omitted} more characters]`
}
