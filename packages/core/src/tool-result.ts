import type { RepairRecord } from './repair/repair-step'
import type { ResultParams } from './result-params'

/** How a call ended. */
export type ToolStatus = 'ok' | 'error' | 'denied' | 'timed_out' | 'cancelled' | 'background' | 'rate_limited'

/** Every `ToolStatus`, for a filter or a form that offers them. */
export const TOOL_STATUSES: readonly ToolStatus[] = Object.freeze(['ok', 'error', 'denied', 'timed_out', 'cancelled', 'background', 'rate_limited'])

export interface ToolImage {
  /** MIME type, e.g. `image/png`. */
  mimeType: string
  /** Base64 data. */
  data: string
}

/** Audio a tool returns: MCP `audio` content. Providers that take audio get it; others read a line naming it. */
export interface ToolAudio {
  /** MIME type, e.g. `audio/wav`. */
  mimeType: string
  /** Base64 data. */
  data: string
}

/**
 * A resource a tool returns: with `text` or `blob` (base64) it is embedded (MCP `resource`),
 * without either it is a link to be fetched (MCP `resource_link`). The model reads a text
 * resource's text, and a line naming any other.
 */
export interface ToolResource {
  uri: string
  name?: string
  title?: string
  description?: string
  mimeType?: string
  text?: string
  blob?: string
}

/** Host-only output of a call (file changes, diffs): never part of the model's text. */
export interface ToolArtifact {
  kind: string
  [key: string]: unknown
}

/** The structured form a tool may return. `text`, `images`, `audio` and `resources` reach the model; `data` is checked against `output`. */
export interface ToolOutputObject {
  text: string
  images?: ToolImage[]
  audio?: ToolAudio[]
  resources?: ToolResource[]
  data?: unknown
  artifacts?: ToolArtifact[]
}

/** What `run` may return: a string, a JSON-able value, or `{ text, images?, audio?, resources?, data?, artifacts? }`. */
export type ToolOutput = string | ToolOutputObject | unknown

/** One result per call, in the calls' order. */
export interface ToolResult {
  id: string
  name: string
  status: ToolStatus
  /** The text the model reads. */
  content: string
  images?: ToolImage[]
  audio?: ToolAudio[]
  resources?: ToolResource[]
  /** The structured result; valid against the tool's `output` schema when it declares one. */
  data?: unknown
  artifacts?: ToolArtifact[]
  /** Set when the call was handed to the background service. */
  taskId?: string
  /** A machine-readable reason for `error`, `denied`, `timed_out`, `cancelled` and `rate_limited`. */
  code?: ToolResultCode
  /**
   * The parameters of `code`'s message (`ResultParamsByCode`): who declined, the timeout,
   * the invalid paths with their problems, the quota. A host renders what a person reads
   * from `status`, `code` and these in the person's locale (`describeResult`); `content`
   * stays the English the model reads, which is the en-US rendering. Absent on `ok` and on a
   * result a middleware made itself.
   */
  params?: ResultParams
  /**
   * The tool's own time in milliseconds: from its handler's start to its result, without
   * the time it waited for a person (that is `waitMs`) or for a concurrency slot. A call
   * that never ran counts the pipeline's time alone.
   */
  durationMs: number
  /** Set when the model's arguments were malformed and repaired before the call (see `repairArguments`). */
  repaired?: RepairRecord
  /** Set on `rate_limited`: milliseconds until the quota that refused the call has room again. */
  retryAfterMs?: number
  /**
   * Set when a person edited the arguments before approving the call: what changed, one
   * line per path (`jsonChanges`: `$.limit: 5 → 2`, or `SECRET_CHANGED` alone). Unless
   * the result is `denied`, `content` starts with a note saying so (`describeResult` renders it).
   */
  edits?: readonly string[]
  /** Milliseconds the call waited for a person's answer (an approval, or `call.ask` inside it); absent when nobody was asked. */
  waitMs?: number
}

export type ToolResultCode =
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'tool_error'
  | 'permission_denied'
  | 'no_permission_service'
  | 'timed_out'
  | 'cancelled'
  | 'background'
  /** A middleware (`use()`) threw, returned no result, or rewrote the arguments into invalid ones. */
  | 'middleware_error'
  /** A quota (`quotas`) is used up for this window: see `retryAfterMs`. */
  | 'rate_limited'
  /** A quota's count could not be read or written (its database failed): the call did not run. */
  | 'quota_unavailable'
  /** The tool's `data` does not match its `output` schema (MCP servers report it as `OUTPUT_INVALID`). */
  | 'output_invalid'
