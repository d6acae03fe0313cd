import type { ToolResult } from '@dogu/core'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

/** Where a Dogu server puts the result's status and code for a Dogu client that trusts it. */
export const DOGU_META = 'dogu.dev/result'

/** What `_meta[DOGU_META]` holds. */
export interface DoguResultMeta {
  status: ToolResult['status']
  code?: ToolResult['code']
  taskId?: string
  /** On `rate_limited`: milliseconds until the quota that refused the call has room again. */
  retryAfterMs?: number
}

/**
 * A Dogu result as an MCP tool result: the text, then the images; `data` as
 * `structuredContent` (a non-object value wrapped as `{ value }`, since MCP wants an
 * object). Any status but `ok` is an `isError` result whose text starts with the content
 * the model would have read (`Permission denied: …`, `Error: …`, `Rate limited: … try again
 * in 14 min.`); a `rate_limited` result's `retryAfterMs` rides in `_meta` beside its status.
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: result.content }]
  for (const image of result.images ?? []) content.push({ type: 'image', data: image.data, mimeType: image.mimeType })
  const meta: DoguResultMeta = { status: result.status }
  if (result.code) meta.code = result.code
  if (result.taskId) meta.taskId = result.taskId
  if (result.retryAfterMs !== undefined) meta.retryAfterMs = result.retryAfterMs
  const converted: CallToolResult = { content, _meta: { [DOGU_META]: meta } }
  if (result.data !== undefined) {
    converted.structuredContent = isPlainObject(result.data) ? result.data : { value: result.data }
  }
  if (result.status !== 'ok') converted.isError = true
  return converted
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
