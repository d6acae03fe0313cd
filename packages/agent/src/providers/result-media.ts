import type { ToolAudio, ToolResource, ToolResult } from '@dogu/core'

/**
 * What one provider takes as parts of a tool result, beside text. Everything else a result
 * carries (audio, resources) is described in its text, so the model knows it is there.
 */
export interface MediaIntake {
  audio?(audio: ToolAudio): boolean
  resource?(resource: ToolResource): boolean
}

/** Bytes of base64 data, without decoding it. */
export function decodedSize(base64: string): number {
  const length = base64.replace(/\s+/g, '').length
  const padding = base64.trimEnd().endsWith('==') ? 2 : base64.trimEnd().endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor(length * 3 / 4) - padding)
}

/** `512 B`, `12 KB`, `1.5 MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`
  return `${Number((bytes / (1024 * 1024)).toFixed(1))} MB`
}

/** The line naming an audio clip: `[audio audio/wav, 12 KB]`. */
export function audioNote(audio: ToolAudio): string {
  return `[audio ${audio.mimeType}, ${formatSize(decodedSize(audio.data))}]`
}

/** A resource with text (embedded, the model reads it). */
export function isTextResource(resource: ToolResource): resource is ToolResource & { text: string } {
  return typeof resource.text === 'string'
}

/** A resource with binary content (embedded as base64). */
export function isBlobResource(resource: ToolResource): resource is ToolResource & { blob: string } {
  return !isTextResource(resource) && typeof resource.blob === 'string'
}

/** What a person would call the resource: its title, else its name. */
export function resourceLabel(resource: ToolResource): string | undefined {
  return resource.title || resource.name || undefined
}

/**
 * The line naming a resource: `[resource <name>: <uri>]` for a link or a text resource;
 * a binary one adds its type and size, and `attached` when it travels as a part of its own.
 */
export function resourceNote(resource: ToolResource, attached = false): string {
  const label = resourceLabel(resource)
  const details: string[] = []
  if (isBlobResource(resource)) {
    if (resource.mimeType) details.push(resource.mimeType)
    details.push(formatSize(decodedSize(resource.blob)))
  }
  if (attached) details.push('attached')
  return `[resource ${label ? `${label}: ` : ''}${resource.uri}${details.length ? `, ${details.join(', ')}` : ''}]`
}

/**
 * The lines a result's audio and resources add to its text: a note for each clip and each
 * resource the provider does not take, a text resource's text under its note, and a note
 * marked `attached` for a resource that goes as a part.
 */
export function mediaLines(result: ToolResult, intake: MediaIntake = {}): string[] {
  const lines: string[] = []
  for (const audio of result.audio ?? []) {
    if (!intake.audio?.(audio)) lines.push(audioNote(audio))
  }
  for (const resource of result.resources ?? []) {
    const attached = !!intake.resource?.(resource)
    lines.push(resourceNote(resource, attached))
    if (!attached && isTextResource(resource) && resource.text) lines.push(resource.text)
  }
  return lines
}

/** The non-empty parts joined by line breaks. */
export function joinLines(...parts: readonly string[]): string {
  return parts.filter(Boolean).join('\n')
}
