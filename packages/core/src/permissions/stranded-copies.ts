/** Ids remembered at most in each set; the oldest are forgotten first. */
const MAX_IDS = 10_000

/**
 * Records left open in a pending store that could not be written: a request moved to the
 * store that replaced one that went (its database stopped) leaves its copy there, and a
 * request that ended here leaves its record when closing it failed. When a store holding
 * such a record is read again (the database back), the record is the same request: one this
 * process still holds lives on in it, and one that ended here meanwhile (answered, run,
 * expired, denied) is stale, and is closed there rather than asked again and run twice. Kept
 * in memory: a restart before the store is back forgets them (docs/permissions.md).
 */
export class StrandedCopies {
  /** Requests held here with a copy left in a store that went. */
  private left = new Set<string>()
  /** Requests that ended here while their copy was left: that copy is stale. */
  private stale = new Set<string>()

  /** A copy of request `id` stays, open, in a store that went. */
  leftBehind(id: string): void {
    remember(this.left, id)
  }

  /** Request `id` ended here: a copy of it left behind is stale from now on. */
  endedHere(id: string): void {
    if (!this.left.delete(id)) return
    remember(this.stale, id)
  }

  /** Request `id` ended here and its record could not be closed in its store: that record is stale. */
  markStale(id: string): void {
    remember(this.stale, id)
  }

  /** A store read again holds request `id`, which this process still has: no other copy is left. */
  found(id: string): void {
    this.left.delete(id)
  }

  /** Whether the open record `id` a store holds is a copy of a request that ended here. */
  isStale(id: string): boolean {
    return this.stale.has(id)
  }

  /** The stale copy of `id` was closed in its store. */
  closed(id: string): void {
    this.stale.delete(id)
  }
}

function remember(ids: Set<string>, id: string) {
  ids.delete(id)
  ids.add(id)
  if (ids.size > MAX_IDS) ids.delete(ids.values().next().value!)
}
