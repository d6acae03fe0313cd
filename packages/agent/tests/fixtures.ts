import { readFileSync } from 'node:fs'
import type { ToolResult } from '@dogu/core'
import { readSse } from '../src/sse'

/** One result of every status, plus images: what each adapter must turn into its provider's shape. */
export const PNG = { mimeType: 'image/png', data: 'iVBORw0KGgo=' }
export const TIFF = { mimeType: 'image/tiff', data: 'SUkqAA==' }

/** What core writes for a call over its quota: the call never ran. */
export const RATE_LIMITED = "Rate limited: quota 'search per user' used: 20 per 1 h; try again in 14 min."

export const results: ToolResult[] = [
  { id: 'c1', name: 'lookup', status: 'ok', content: 'France: capital Paris', durationMs: 1 },
  { id: 'c2', name: 'notes', status: 'denied', code: 'permission_denied', content: 'Permission denied: the user said no', durationMs: 1 },
  { id: 'c3', name: 'lokup', status: 'error', code: 'unknown_tool', content: 'Unknown tool "lokup". Did you mean "lookup"?', durationMs: 0 },
  { id: 'c4', name: 'build', status: 'background', code: 'background', taskId: 'task_7', content: 'The call is still running and continues in the background as task task_7.', durationMs: 5 },
  { id: 'c5', name: 'fetch', status: 'timed_out', code: 'timed_out', content: 'Timed out after 1000 ms.', durationMs: 1000 },
  { id: 'c6', name: 'shot', status: 'ok', content: 'screenshot taken', images: [PNG, TIFF], durationMs: 2 },
  { id: 'c7', name: 'slow', status: 'cancelled', code: 'cancelled', content: 'Cancelled: the batch was cancelled.', durationMs: 3 },
  { id: 'c8', name: 'search', status: 'rate_limited', code: 'rate_limited', retryAfterMs: 840_000, content: RATE_LIMITED, durationMs: 0 },
]

/** Splits `text` into pieces at every given offset. */
export function splitAt(text: string, ...offsets: number[]): string[] {
  const cuts = [0, ...offsets, text.length]
  return cuts.slice(1).map((end, i) => text.slice(cuts[i], end))
}

/** The text of a file under `tests/recorded-streams/` (sources in its README). */
export function recordedText(name: string): string {
  return readFileSync(new URL(`recorded-streams/${name}`, import.meta.url), 'utf8')
}

/**
 * The events of a recorded stream, parsed: an `.sse` body goes through `readSse` in pieces
 * of `chunk` bytes (split inside lines and characters, as a network delivers it), skipping
 * `[DONE]`; a `.jsonl` file has one event per line.
 */
export async function recordedEvents<T>(name: string, chunk = 7): Promise<T[]> {
  const text = recordedText(name)
  if (name.endsWith('.jsonl')) return text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as T)
  const bytes = new TextEncoder().encode(text)
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(at, at += chunk))
    },
  })
  const events: T[] = []
  for await (const data of readSse(body)) if (data.trim() !== '[DONE]') events.push(JSON.parse(data) as T)
  return events
}
