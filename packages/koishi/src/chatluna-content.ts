import { formatDuration, type ToolResult } from '@dogu/core'

/** A LangChain message part: text, or an image as a (data) URL. */
export type ChatLunaContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }

/**
 * What a bridged tool hands back to ChatLuna for one Dogu result: its text, led by a line
 * that names the status whenever it is not `ok` (`status: denied`, `status: background
 * (task task_…)`, `status: rate_limited (retry after 15 min)`), so a model never mistakes a
 * refusal or a timeout for an answer.
 *
 * Images become `image_url` parts (data URLs) when `images` is on: ChatLuna's tool-calling
 * agents pass such parts on to the model. Off, they are named in the text instead, since
 * some providers (OpenAI Chat Completions) refuse images in tool messages.
 */
export function chatlunaContent(result: ToolResult, images: boolean): string | ChatLunaContentPart[] {
  let text = result.status === 'ok' ? result.content : `${statusLine(result)}\n${result.content}`
  const attached = result.images ?? []
  if (!attached.length) return text
  if (!images) {
    const note = `(${attached.length} image${attached.length === 1 ? '' : 's'} not shown: ${attached.map((image) => image.mimeType).join(', ')})`
    return text ? `${text}\n${note}` : note
  }
  if (!text) text = `(${attached.length} image${attached.length === 1 ? '' : 's'})`
  return [
    { type: 'text', text },
    ...attached.map((image): ChatLunaContentPart => ({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } })),
  ]
}

function statusLine(result: ToolResult): string {
  if (result.status === 'background' && result.taskId) return `status: background (task ${result.taskId})`
  if (result.status === 'rate_limited' && result.retryAfterMs !== undefined) return `status: rate_limited (retry after ${formatDuration(result.retryAfterMs)})`
  return `status: ${result.status}`
}
