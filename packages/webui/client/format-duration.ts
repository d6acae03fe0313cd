import { useI18n } from 'vue-i18n'
import { formatDurationFor } from '../../core/src/messages'

/**
 * Durations in the console's words, which are the chat's: the core's `formatDurationFor`
 * (`20 秒`, `5 分钟`, `每 1 小时`; `20 s`, `5 min`) and the locale's `duration.in` for a time
 * to wait (`15 分钟后`, `in 15 min`). A call's run and wait times keep their precision under a
 * minute (`5 毫秒`, `1.2 秒`), from the locale's `duration.ms` and `duration.seconds`.
 */

/** What the words come from: vue-i18n's `t`, or anything that fills `{n}` and `{duration}` the same way. */
export type Translate = (key: string, params: Record<string, unknown>) => string

/** A span such as a quota's window, in its largest whole unit: `1 小时`, `30 分钟`, `1 h`. */
export function spanText(ms: number, locale: string): string {
  return formatDurationFor(ms, locale === 'zh-CN' ? 'zh-CN' : 'en-US')
}

/** How long until something, rounded up so it never comes early: `15 分钟后`, `in 15 min`; `1 秒后` for what is due now. */
export function timeLeftText(ms: number, t: Translate, locale: string): string {
  return t('duration.in', { duration: formatDurationFor(Math.max(1, ms), locale === 'zh-CN' ? 'zh-CN' : 'en-US', { round: 'up' }) })
}

/**
 * How long a call ran or waited: milliseconds under a second (`5 毫秒`), seconds with one
 * decimal under a minute (`1.2 秒`, `20 秒` for 20 003 ms), else the largest whole unit.
 */
export function elapsedText(ms: number, t: Translate, locale: string): string {
  if (Math.round(ms) < 1000) return t('duration.ms', { n: Math.round(Math.max(0, ms)) })
  if (ms < 60_000) return t('duration.seconds', { n: new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(ms / 100) / 10) })
  return spanText(ms, locale)
}

/** The three formats in the page's locale, for a component's template. */
export function useDurations() {
  const { t, locale } = useI18n()
  const translate: Translate = (key, params) => t(key, params)
  return {
    elapsed: (ms: number) => elapsedText(ms, translate, locale.value),
    span: (ms: number) => spanText(ms, locale.value),
    timeLeft: (ms: number) => timeLeftText(ms, translate, locale.value),
  }
}
