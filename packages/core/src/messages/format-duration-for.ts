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

const UNITS = [['days', 86_400_000], ['hours', 3_600_000], ['minutes', 60_000], ['seconds', 1000]] as const

type Unit = typeof UNITS[number][0]

const WORDS: Record<MessageLocale, Record<Unit, (count: number) => string>> = {
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
  const index = UNITS.findIndex(([, size]) => total >= size)
  if (index < 0) return words.seconds(up && total > 0 ? 1 : 0)
  const [unit, size] = UNITS[index]!
  const next = UNITS[index + 1]
  if (options.parts !== 2 || !next) return words[unit](up ? Math.ceil(total / size) : Math.floor(total / size))
  // Two units: the first whole, the second rounded (up for a wait); a carry goes into the first.
  let first = Math.floor(total / size)
  let second = (up ? Math.ceil : Math.floor)((total - first * size) / next[1])
  if (second * next[1] >= size) { first++; second = 0 }
  return second ? `${words[unit](first)} ${words[next[0]](second)}` : words[unit](first)
}
