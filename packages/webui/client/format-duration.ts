import { useI18n } from 'vue-i18n'

/**
 * Durations in the console's words, which are the chat's (koishi-plugin-dogu's
 * format-duration.ts and its locales): `20 秒`, `5 分钟`, `每 1 小时`, `15 分钟后`;
 * `20 s`, `5 min`, `in 15 min`. The unit words are the locale's `duration.*` messages.
 */

const UNITS = [
  ['days', 86_400_000],
  ['hours', 3_600_000],
  ['minutes', 60_000],
  ['seconds', 1000],
] as const

export type DurationUnit = typeof UNITS[number][0]

/** What the words come from: vue-i18n's `t`, or anything that fills `{n}` and `{duration}` the same way. */
export type Translate = (key: string, params: Record<string, unknown>) => string

/** A duration in its largest whole unit, as the chat counts it: `90_000` is 1 minute; under a second is 0 seconds. */
export function durationIn(ms: number): { unit: DurationUnit; count: number } {
  for (const [unit, size] of UNITS) if (ms >= size) return { unit, count: Math.floor(ms / size) }
  return { unit: 'seconds', count: 0 }
}

/** `durationIn`, rounded up, for a time to wait, which must never come early: `840_001` is 15 minutes. */
export function durationUpIn(ms: number): { unit: DurationUnit; count: number } {
  for (const [unit, size] of UNITS) if (ms >= size) return { unit, count: Math.ceil(ms / size) }
  return { unit: 'seconds', count: ms > 0 ? 1 : 0 }
}

/** A span such as a quota's window: `1 小时`, `30 分钟`, `1 h`. */
export function spanText(ms: number, t: Translate): string {
  const { unit, count } = durationIn(ms)
  return t(`duration.${unit}`, { n: count })
}

/** How long until something, rounded up: `15 分钟后`, `in 15 min`; `1 秒后` for what is due now. */
export function timeLeftText(ms: number, t: Translate): string {
  const { unit, count } = durationUpIn(Math.max(0, ms))
  return t('duration.in', { duration: t(`duration.${unit}`, { n: Math.max(1, count) }) })
}

/**
 * How long a call ran or waited: milliseconds under a second (`5 毫秒`), seconds with one
 * decimal under a minute (`1.2 秒`, `20 秒` for 20 003 ms), else the largest whole unit.
 */
export function elapsedText(ms: number, t: Translate, locale: string): string {
  if (Math.round(ms) < 1000) return t('duration.ms', { n: Math.round(Math.max(0, ms)) })
  if (ms < 60_000) return t('duration.seconds', { n: new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(ms / 100) / 10) })
  return spanText(ms, t)
}

/** The three formats in the page's locale, for a component's template. */
export function useDurations() {
  const { t, locale } = useI18n()
  const translate: Translate = (key, params) => t(key, params)
  return {
    elapsed: (ms: number) => elapsedText(ms, translate, locale.value),
    span: (ms: number) => spanText(ms, translate),
    timeLeft: (ms: number) => timeLeftText(ms, translate),
  }
}
