import { repairArguments, type ToolImage, type ToolResult, type ToolStatus } from '@dogu/core'

/**
 * How each status reaches a provider: `undefined` for a call that produced output (or was
 * handed to the background), the label of its error form otherwise. A `Record` over
 * `ToolStatus`, so a new status does not compile until it says which it is.
 */
const LABELS: Readonly<Record<ToolStatus, string | undefined>> = Object.freeze({
  ok: undefined,
  background: undefined,
  error: 'Error',
  denied: 'Denied',
  timed_out: 'Timed out',
  cancelled: 'Cancelled',
  rate_limited: 'Rate limited',
})

/** Statuses that each provider receives in its error form (`is_error`, `response.error`, an `Error:` line). */
export const ERROR_STATUSES: ReadonlySet<ToolStatus> = new Set(
  (Object.keys(LABELS) as ToolStatus[]).filter((status) => LABELS[status] !== undefined),
)

/** True when the provider should see this result as a failed call: any status but `ok` and `background`. */
export function isErrorResult(result: ToolResult): boolean {
  return labelOf(result.status) !== undefined
}

/** The error label of `status`; a status this table does not know is an `Error`, never output. */
function labelOf(status: string): string | undefined {
  return Object.hasOwn(LABELS, status) ? LABELS[status as ToolStatus] : 'Error'
}

/**
 * The text a model reads for a result. A background result always names its task id; with
 * `labelErrors` (providers without an error flag) a failed call starts with its status,
 * `Denied: Permission denied: …`, so the model cannot take it for output. A status the
 * table does not know (a newer core) is sent as an error, never as output.
 */
export function resultText(result: ToolResult, labelErrors: boolean): string {
  let text = result.content
  if (result.status === 'background' && result.taskId && !text.includes(result.taskId)) {
    text = `${text}${text ? ' ' : ''}(background task ${result.taskId})`
  }
  const label = labelErrors ? labelOf(result.status) : undefined
  // A text that already opens with its label (`Rate limited: quota …`) is not labelled twice.
  if (label && !text.startsWith(`${label}:`)) text = `${label}: ${text}`
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

/**
 * Arguments text as the JSON object a provider's history takes: the text's object when it is
 * one; else the pipeline's repair of it (the call ran on that), else `{}` (the call's error
 * result already told the model what it sent wrong).
 */
export function jsonObjectOf(text: string): Record<string, unknown> {
  const whole = argumentsText(text)
  try {
    const parsed: unknown = JSON.parse(whole)
    if (isJsonObject(parsed)) return parsed
  } catch {}
  // Malformed, or an object encoded twice.
  const repair = repairArguments(whole)
  return 'value' in repair && isJsonObject(repair.value) ? repair.value : {}
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}
