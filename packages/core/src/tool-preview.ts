import { messageOf } from './error-message'
import type { ToolCall } from './tool-call'
import type { ToolPreview } from './types/tool-preview'

// Declared on the floor (types/), where calls and askers read it too.
export type { ToolPreview } from './types/tool-preview'

/**
 * `defineTool({ preview })`: runs after validation and authorization, before the question; never acts.
 * `call` is the very object the call's `run` receives later, so a tool may keep what its
 * preview saw (in a `WeakMap` keyed by the call) and refuse in `run` when that no longer
 * holds: `@dogu/fs` refuses a `write` or `edit` whose file changed since its preview (`STALE`).
 */
export type PreviewFunction<A = any> = (args: A, call: ToolCall) => ToolPreview | undefined | Promise<ToolPreview | undefined>

/** The most characters one preview field keeps; what is past it is cut with a note saying how much. */
export const PREVIEW_FIELD_LIMIT = 64 * 1024

/** How long a preview may take before the question is asked without it. */
export const PREVIEW_TIMEOUT = 5_000

const FIELDS = ['text', 'diff', 'url', 'command'] as const

/**
 * A tool's preview as askers get it: only string fields, each bounded, frozen; `undefined`
 * when nothing is left. What is not a preview becomes a line saying so, so a tool's bug
 * shows in the question rather than hiding it.
 */
export function normalizePreview(value: unknown): Readonly<ToolPreview> | undefined {
  try {
    return boundedPreview(value)
  } catch (error) {
    // A field whose getter throws, or whose text cannot be made: say so in the question.
    return Object.freeze({ text: `(no preview: ${messageOf(error)})` })
  }
}

function boundedPreview(value: unknown): Readonly<ToolPreview> | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) return Object.freeze({ text: `(the tool's preview returned ${Array.isArray(value) ? 'an array' : typeof value}, not { text, diff, url, command })` })
  const preview: ToolPreview = {}
  for (const field of FIELDS) {
    const text = (value as Record<string, unknown>)[field]
    if (text === undefined || text === null || text === '') continue
    const string = typeof text === 'string' ? text : String(text)
    preview[field] = string.length > PREVIEW_FIELD_LIMIT
      ? `${string.slice(0, PREVIEW_FIELD_LIMIT)}\n… ${string.length - PREVIEW_FIELD_LIMIT} more characters not shown`
      : string
  }
  return Object.keys(preview).length ? Object.freeze(preview) : undefined
}
