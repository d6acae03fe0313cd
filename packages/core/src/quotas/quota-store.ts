/** One quota's count for one subject in one window. */
export interface QuotaSlot {
  /** Unique per quota, subject and window: the quota's name, the subject and the window's start. */
  readonly key: string
  readonly quota: string
  /** Whose calls: `user:<platform>:<id>`, `channel:…`, `guild:…`, `session:<id>` or `global`. */
  readonly subject: string
  /** Epoch milliseconds the window starts and ends. */
  readonly start: number
  readonly end: number
  readonly max: number
}

/**
 * Where quota counts live: memory for one process, a database table for every instance on
 * it. `take` must be atomic: two instances taking the last unit at once get one each `true`
 * and `false`, never two `true`s.
 */
export interface QuotaStore {
  /** Takes one unit of the slot's window; `false` when all `max` are used. */
  take(slot: QuotaSlot): boolean | Promise<boolean>
  /** Gives one unit back: the call it was taken for never ran. */
  give(slot: QuotaSlot): void | Promise<void>
  /** The units used in each slot's window (0 for a window nobody used). */
  used(slots: readonly QuotaSlot[]): number[] | Promise<number[]>
  /** Adds `count` units at once, even past `max`: counts carried over from the store before. */
  add(slot: QuotaSlot, count: number): void | Promise<void>
  /** Counts of windows not yet ended, for carrying them to the next store. */
  live?(now: number): Iterable<readonly [QuotaSlot, number]>
  /** Stops timers and writes; the store is not used again. */
  close?(): void
}
