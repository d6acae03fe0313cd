const UNITS = [
  ['days', 86_400_000],
  ['hours', 3_600_000],
  ['minutes', 60_000],
  ['seconds', 1000],
] as const

export type DurationUnit = typeof UNITS[number][0]

/**
 * A duration in its largest whole unit, for a message such as "5 分钟": `90_000` is one
 * minute, `300_000` five. Shorter than a second counts as 0 seconds.
 */
export function durationIn(ms: number): { unit: DurationUnit; count: number } {
  for (const [unit, size] of UNITS) if (ms >= size) return { unit, count: Math.floor(ms / size) }
  return { unit: 'seconds', count: 0 }
}

/**
 * `durationIn`, rounded up in that unit, for a time to wait ("try again in 15 分钟"), which
 * must never come early: `840_001` is 15 minutes, `5_400_000` two hours.
 */
export function durationUpIn(ms: number): { unit: DurationUnit; count: number } {
  for (const [unit, size] of UNITS) if (ms >= size) return { unit, count: Math.ceil(ms / size) }
  return { unit: 'seconds', count: ms > 0 ? 1 : 0 }
}
