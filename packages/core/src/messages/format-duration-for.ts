import type { MessageLocale } from './message-locale'

/** How `formatDurationFor` words a duration. */
export interface DurationOptions {
  /**
   * `down` (the default) for a time that passed or a window (`90_000` is 1 minute); `up` for a
   * time to wait, which must never come early (`840_001` is 15 minutes).
   * @default 'down'
   */
  round?: 'down' | 'up'
  /** Units to show: 1 (`9 分钟`), or 2 for the next one down as well (`9 分钟 32 秒`). @default 1 */
  parts?: 1 | 2
}

/** The units a duration is told in, largest first, with their length in milliseconds. */
export const DURATION_UNITS = [['days', 86_400_000], ['hours', 3_600_000], ['minutes', 60_000], ['seconds', 1000]] as const

/** A unit of `DURATION_UNITS`. */
export type DurationUnit = typeof DURATION_UNITS[number][0]

/**
 * A duration as a count of its largest whole unit, what `formatDurationFor` words with one
 * part: `90_000` is 1 minute; rounded `up`, `840_001` is 15 minutes. Less than a second is 0
 * seconds, or 1 rounded up (when more than 0). For a host that words the count itself.
 */
export function durationUnitOf(ms: number, round: 'down' | 'up' = 'down'): { unit: DurationUnit; count: number } {
  const total = Number.isFinite(ms) && ms > 0 ? ms : 0
  for (const [unit, size] of DURATION_UNITS) if (total >= size) return { unit, count: round === 'up' ? Math.ceil(total / size) : Math.floor(total / size) }
  return { unit: 'seconds', count: round === 'up' && total > 0 ? 1 : 0 }
}

const WORDS: Record<MessageLocale, Record<DurationUnit, (count: number) => string>> = {
  'en-US': { days: (n) => `${n} d`, hours: (n) => `${n} h`, minutes: (n) => `${n} min`, seconds: (n) => `${n} s` },
  'zh-CN': { days: (n) => `${n} 天`, hours: (n) => `${n} 小时`, minutes: (n) => `${n} 分钟`, seconds: (n) => `${n} 秒` },
}

/**
 * A duration for a person, in the largest whole unit (days, hours, minutes, seconds) as Koishi's
 * chat words them: `20 秒`, `5 分钟`, `2 小时` in zh-CN, `20 s`, `5 min` in en-US. Less than a
 * second is `0` seconds rounded down, `1` rounded up (when more than 0).
 *
 * @example
 * formatDurationFor(572_000, 'zh-CN', { round: 'up' }) // '10 分钟'
 * formatDurationFor(572_000, 'zh-CN', { parts: 2 }) // '9 分钟 32 秒'
 */
export function formatDurationFor(ms: number, locale: MessageLocale, options: DurationOptions = {}): string {
  const words = WORDS[locale] ?? WORDS['en-US']
  const up = options.round === 'up'
  const total = Number.isFinite(ms) && ms > 0 ? ms : 0
  const index = DURATION_UNITS.findIndex(([, size]) => total >= size)
  const next = DURATION_UNITS[index + 1]
  if (options.parts !== 2 || index < 0 || !next) {
    const { unit, count } = durationUnitOf(total, options.round)
    return words[unit](count)
  }
  const [unit, size] = DURATION_UNITS[index]!
  // Two units: the first whole, the second rounded (up for a wait); a carry goes into the first.
  let first = Math.floor(total / size)
  let second = (up ? Math.ceil : Math.floor)((total - first * size) / next[1])
  if (second * next[1] >= size) { first++; second = 0 }
  return second ? `${words[unit](first)} ${words[next[0]](second)}` : words[unit](first)
}
