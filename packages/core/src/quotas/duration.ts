const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000, 秒: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000, 分: 60_000, 分钟: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000, 时: 3_600_000, 小时: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000, 天: 86_400_000, 日: 86_400_000,
  w: 604_800_000, week: 604_800_000, weeks: 604_800_000, 周: 604_800_000,
}

const PART = /(\d+(?:\.\d+)?)\s*([a-z]+|秒|分钟|分|小时|时|天|日|周)?\s*/gy

/**
 * Milliseconds of a duration: a number (milliseconds) or a text of number-unit pairs, as
 * owners write them in `koishi.yml`: `'90s'`, `'30 min'`, `'1h30m'`, `'1 小时'`. A bare
 * number in a text is milliseconds. `undefined` for anything else, and for zero.
 *
 * Written here rather than taken from `ms`: that one reads neither Chinese units nor `1h30m`.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined
  if (typeof value !== 'string') return undefined
  const text = value.trim().toLowerCase()
  if (!text) return undefined
  PART.lastIndex = 0
  let total = 0
  let end = 0
  for (let match = PART.exec(text); match; match = PART.exec(text)) {
    const unit = match[2] === undefined ? 1 : UNIT_MS[match[2]]
    if (unit === undefined) return undefined
    total += Number(match[1]) * unit
    end = PART.lastIndex
    if (end === text.length) break
  }
  return end === text.length && total > 0 && Number.isFinite(total) ? Math.round(total) : undefined
}

const SPANS = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']] as const

/**
 * A duration for a message, in its largest unit that fits, rounded up so "try again in"
 * never comes early: `3_600_000` is `1 h`, `840_000` is `14 min`, `1500` is `2 s`, `200` is `200 ms`.
 */
export function formatDuration(ms: number): string {
  for (const [size, unit] of SPANS) {
    if (ms >= size) {
      // Exact multiples read as such (`1 h`); anything else rounds up in the next unit down.
      if (ms % size === 0) return `${ms / size} ${unit}`
      const smaller = SPANS[SPANS.findIndex(([s]) => s === size) + 1]
      if (!smaller || ms >= size * 10) return `${Math.ceil(ms / size)} ${unit}`
      return `${Math.ceil(ms / smaller[0])} ${smaller[1]}`
    }
  }
  return `${Math.max(1, Math.ceil(ms))} ms`
}
