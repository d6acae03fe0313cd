import type { ToolResource, ToolResult } from '@dogu/core'
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
  /** The parameters of `code`'s message (`ToolResult.params`), so a Dogu client can tell a person the outcome in their locale. */
  params?: ToolResult['params']
}

type Content = CallToolResult['content'][number]

export interface ToCallToolResultOptions {
  /**
   * Whether `data` goes out wrapped as `{ value }`: what the tool's listed `outputSchema`
   * says (see `outputSchemaOf`). @default wrapped when `data` is not a plain object
   */
  wrapData?: boolean
}

/**
 * A Dogu result as an MCP tool result: the text, then the images, the audio and the
 * resources (embedded with their text or blob, else a `resource_link`); `data` as
 * `structuredContent` (a non-object value wrapped as `{ value }`, since MCP wants an
 * object). Any status but `ok` is an `isError` result whose text starts with the content
 * the model would have read (`Permission denied: …`, `Error: …`, `Rate limited: … try again
 * in 14 min.`); a `rate_limited` result's `retryAfterMs` rides in `_meta` beside its status.
 */
export function toCallToolResult(result: ToolResult, options: ToCallToolResultOptions = {}): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: result.content }]
  for (const image of result.images ?? []) content.push({ type: 'image', data: image.data, mimeType: image.mimeType })
  for (const audio of result.audio ?? []) content.push({ type: 'audio', data: audio.data, mimeType: audio.mimeType })
  for (const resource of result.resources ?? []) content.push(resourceContent(resource))
  const meta: DoguResultMeta = { status: result.status }
  if (result.code) meta.code = result.code
  if (result.taskId) meta.taskId = result.taskId
  if (result.retryAfterMs !== undefined) meta.retryAfterMs = result.retryAfterMs
  if (result.params) meta.params = result.params
  const converted: CallToolResult = { content, _meta: { [DOGU_META]: meta } }
  if (result.data !== undefined) {
    const wrap = options.wrapData ?? !isPlainObject(result.data)
    converted.structuredContent = wrap ? { value: result.data } : result.data as Record<string, unknown>
  }
  if (result.status !== 'ok') converted.isError = true
  return converted
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A resource with its text or blob is embedded; one with neither is a link the client fetches. */
function resourceContent(resource: ToolResource): Content {
  const { uri } = resource
  const mimeType = resource.mimeType ? { mimeType: resource.mimeType } : {}
  if (typeof resource.text === 'string') return { type: 'resource', resource: { uri, ...mimeType, text: resource.text } }
  if (typeof resource.blob === 'string') return { type: 'resource', resource: { uri, ...mimeType, blob: resource.blob } }
  return {
    type: 'resource_link',
    uri,
    name: resource.name || lastSegment(uri),
    ...(resource.title ? { title: resource.title } : {}),
    ...(resource.description ? { description: resource.description } : {}),
    ...mimeType,
  }
}

/** What MCP's required `name` of a link falls back to: the URI's last path segment (`report.pdf`), else the URI. */
function lastSegment(uri: string): string {
  const path = uri.replace(/[?#].*$/s, '').replace(/\/+$/, '')
  const segment = path.slice(path.lastIndexOf('/') + 1)
  if (!segment || /^[a-z][a-z0-9+.-]*:$/i.test(segment)) return uri
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
