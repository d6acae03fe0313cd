const UNITS = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
] as const

/**
 * How long until something, in the page's language: `in 14 minutes`, `14分钟后`. In the
 * largest unit that fits, rounded up, as the server's own "try again in 14 min" is: a time
 * shown never comes early.
 */
export function timeLeft(ms: number, locale: string): string {
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'always' })
  const left = Math.max(0, ms)
  for (const [size, unit] of UNITS) {
    if (left >= size * (unit === 'day' ? 2 : 1)) return format.format(Math.ceil(left / size), unit)
  }
  return format.format(Math.max(1, Math.ceil(left / 1000)), 'second')
}

/** A span in the page's language, in its largest whole unit: `1 hour`, `30 minutes`, `1小时`. */
export function spanText(ms: number, locale: string): string {
  for (const [size, unit] of UNITS) {
    if (ms >= size && ms % size === 0) return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(ms / size)
  }
  return new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'long', maximumFractionDigits: 1 }).format(ms / 1000)
}
