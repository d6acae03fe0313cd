import type { ToolImage, ToolResult, ToolStatus } from '@dogu/core'

/** Statuses that each provider receives in its error form (`is_error`, `response.error`, an `Error:` line). */
export const ERROR_STATUSES: ReadonlySet<ToolStatus> = new Set<ToolStatus>(['error', 'denied', 'timed_out', 'cancelled'])

const LABELS: Readonly<Record<ToolStatus, string>> = Object.freeze({
  ok: '',
  background: '',
  error: 'Error',
  denied: 'Denied',
  timed_out: 'Timed out',
  cancelled: 'Cancelled',
})

/** True when the provider should see this result as a failed call. */
export function isErrorResult(result: ToolResult): boolean {
  return ERROR_STATUSES.has(result.status)
}

/**
 * The text a model reads for a result. A background result always names its task id; with
 * `labelErrors` (providers without an error flag) a failed call starts with its status,
 * `Denied: Permission denied: …`, so the model cannot take it for output.
 */
export function resultText(result: ToolResult, labelErrors: boolean): string {
  let text = result.content
  if (result.status === 'background' && result.taskId && !text.includes(result.taskId)) {
    text = `${text}${text ? ' ' : ''}(background task ${result.taskId})`
  }
  if (labelErrors && isErrorResult(result)) text = `${LABELS[result.status]}: ${text}`
  return text
}

/** The line a provider that takes no images in tool results reads instead of them. */
export function imageNote(images: readonly ToolImage[]): string {
  const types = [...new Set(images.map((image) => image.mimeType))].join(', ')
  const count = images.length === 1 ? '1 image' : `${images.length} images`
  return `[${count} (${types}) not shown: this provider takes no images in tool results]`
}

/** `text`, then the image note on its own line when there are images left out. */
export function withImageNote(text: string, images: readonly ToolImage[] | undefined): string {
  if (!images?.length) return text
  return text ? `${text}\n${imageNote(images)}` : imageNote(images)
}

/** `"{}"` for arguments a model left empty; the text itself otherwise. */
export function argumentsText(text: string | undefined | null): string {
  return text && text.trim() ? text : '{}'
}
