/** Whose calls one quota counts together. */
export type QuotaScope = 'user' | 'channel' | 'guild' | 'session' | 'global'

/** Every `QuotaScope`, for a config form or a check. */
export const QUOTA_SCOPES: readonly QuotaScope[] = Object.freeze(['user', 'channel', 'guild', 'session', 'global'])

/**
 * One quota: at most `max` calls of the matching tools start running per `window`, counted
 * per `per` (each chat user, channel, guild or session, or everyone together). Windows are
 * fixed: they start at multiples of `window` since the epoch, so every instance on one
 * database agrees on them.
 *
 * @example { tools: 'search*', per: 'user', max: 20, window: '1h' }
 */
export interface QuotaRule {
  /** Tool name globs the quota counts (minimatch). @default every tool */
  tools?: string | string[]
  per: QuotaScope
  /** Calls allowed per window: a positive integer. */
  max: number
  /** Milliseconds, or a duration text: `'90s'`, `'30 min'`, `'1h'`, `'1d'`, `'1 小时'`. */
  window: number | string
  /** Shown in refusals and `dogu.quota`, and the key its counts are stored under. @default `<tools> per <per>` */
  name?: string
}

/** Caps on calls running at once; calls beyond a cap wait in order. */
export interface MaxRunning {
  /** Calls of one session. */
  session?: number
  /** Calls of one chat user (platform and user id), over all their sessions. */
  user?: number
  /** Calls of this process. */
  global?: number
}

/** Where one quota stands for one session: what `dogu.quota` and the consoles show. */
export interface QuotaStatus {
  name: string
  /** The tool globs it counts; empty for every tool. */
  tools: readonly string[]
  per: QuotaScope
  max: number
  windowMs: number
  /** Calls counted in the current window. */
  used: number
  /** `max - used`, never below 0. */
  remaining: number
  /** Epoch milliseconds when the current window ends and the count starts again. */
  resetsAt: number
}
