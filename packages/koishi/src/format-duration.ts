import { DURATION_UNITS, type DurationUnit, durationUnitOf } from '@dogu/core'

export type { DurationUnit }

/**
 * A duration in its largest whole unit, for a message such as "5 分钟": `90_000` is one
 * minute, `300_000` five. Shorter than a second counts as 0 seconds. (The core's
 * `durationUnitOf`, which `formatDurationFor` words.)
 */
export function durationIn(ms: number): { unit: DurationUnit; count: number } {
  return durationUnitOf(ms)
}

/**
 * `durationIn`, rounded up in that unit, for a time to wait ("try again in 15 分钟"), which
 * must never come early: `840_001` is 15 minutes, `5_400_000` two hours.
 */
export function durationUpIn(ms: number): { unit: DurationUnit; count: number } {
  return durationUnitOf(ms, 'up')
}

/**
 * A time left before a deadline ("5 分钟内无人回复即拒绝", dogu.pending's "5 分钟后超时"):
 * `durationIn`, except just short of a whole count of that unit or the next larger one
 * (within a tenth of the time left), which reads as that count. A 5-minute request asked 3 s
 * ago has 5 minutes left, not 4; 59 min 40 s is one hour; 4 min 30 s stays 4 minutes (a
 * deadline is not put later than a tenth). Anything left under a second is 1 second.
 */
export function durationLeftIn(ms: number): { unit: DurationUnit; count: number } {
  const shown = durationIn(ms)
  if (!shown.count) return { unit: 'seconds', count: ms > 0 ? 1 : 0 }
  for (const [unit, size] of DURATION_UNITS) {
    const count = Math.ceil(ms / size)
    if (count * size - ms <= ms / 10) return { unit, count }
    if (unit === shown.unit) break
  }
  return shown
}
