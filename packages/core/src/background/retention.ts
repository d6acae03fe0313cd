import { truncateContent } from '../normalize-output'
import type { ToolResult } from '../tool-result'
import type { BackgroundTask } from './background-task'

/** How much the background keeps. Running tasks are never evicted, whatever the limits. */
export interface RetentionLimits {
  /** Most tasks kept; beyond it the oldest settled ones go. @default 200 */
  maxTasks: number
  /** Settled tasks older than this (milliseconds since they settled) go. @default 7 days */
  maxAgeMs: number
  /**
   * Longest stored result: content is cut with a marker; `data`, `images` and `artifacts`
   * larger than this (as JSON) are dropped with a note. @default 50_000
   */
  maxResultLength: number
}

export const DEFAULT_RETENTION: Readonly<RetentionLimits> = Object.freeze({
  maxTasks: 200,
  maxAgeMs: 7 * 24 * 3600_000,
  maxResultLength: 50_000,
})

/**
 * The ids of settled tasks to evict: those older than `maxAgeMs`, then the oldest until at
 * most `maxTasks` remain. `settled` must be ordered oldest-settled first; `total` counts
 * running tasks too (they count against `maxTasks` but are never chosen).
 */
export function selectEvictions(settled: Iterable<BackgroundTask>, total: number, limits: RetentionLimits, now: number): string[] {
  const evicted: string[] = []
  for (const task of settled) {
    const expired = now - (task.settledAt ?? task.startedAt) > limits.maxAgeMs
    if (!expired && total - evicted.length <= limits.maxTasks) break
    evicted.push(task.id)
  }
  return evicted
}

const HEAVY_FIELDS = ['data', 'images', 'artifacts'] as const

/**
 * The result as it is kept: the same object when it fits, otherwise a copy with content cut
 * and oversized or unserializable fields dropped, each with a note the model can read.
 * A stored result must survive JSON, so a value that cannot be serialized is dropped too.
 */
export function capResult(result: ToolResult, maxLength: number): ToolResult {
  let copy: ToolResult | undefined
  const notes: string[] = []
  for (const field of HEAVY_FIELDS) {
    if (result[field] === undefined) continue
    let size: number
    try {
      size = JSON.stringify(result[field])?.length ?? 0
    } catch {
      size = Infinity
    }
    if (size <= maxLength) continue
    copy ??= { ...result }
    delete copy[field]
    notes.push(Number.isFinite(size)
      ? `[${field} omitted: ${size} characters is over the background store's limit of ${maxLength}]`
      : `[${field} omitted: it cannot be stored as JSON]`)
  }
  if (result.content.length > maxLength) {
    copy ??= { ...result }
    copy.content = truncateContent(result.content, maxLength)
  }
  if (!copy) return result
  if (notes.length) copy.content += `\n${notes.join('\n')}`
  return copy
}
