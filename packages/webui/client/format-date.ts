import { useI18n } from 'vue-i18n'

/**
 * Dates and times in the page's locale (`Intl.DateTimeFormat`), never the browser's:
 * `2026/12/7 18:20:31` in zh-CN, `12/7/26, 6:20:31 PM` in en-US.
 */

const formats = new Map<string, Intl.DateTimeFormat>()

function format(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale} ${JSON.stringify(options)}`
  let found = formats.get(key)
  if (!found) formats.set(key, found = new Intl.DateTimeFormat(locale, options))
  return found
}

/** A date and a time to the second. */
export function dateTimeText(at: number, locale: string): string {
  return format(locale, { dateStyle: 'short', timeStyle: 'medium' }).format(at)
}

/** A time of day to the second, for what happened since the page opened (live log, tasks). */
export function timeText(at: number, locale: string): string {
  return format(locale, { timeStyle: 'medium' }).format(at)
}

/** Both formats in the page's locale, for a component's template. */
export function useDates() {
  const { locale } = useI18n()
  return {
    dateTime: (at: number) => dateTimeText(at, locale.value),
    time: (at: number) => timeText(at, locale.value),
  }
}
