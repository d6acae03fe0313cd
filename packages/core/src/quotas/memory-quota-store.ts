import type { QuotaSlot, QuotaStore } from './quota-store'

interface Count {
  slot: QuotaSlot
  used: number
}

/** Most ended windows left in memory before a sweep forgets them. */
const SWEEP_AT = 4096

/**
 * Quota counts in this process's memory: what a bot without a database uses, and what a
 * database store falls back to while none is loaded. Synchronous, so a call under a quota
 * pays a map lookup. Counts of ended windows are forgotten as new ones arrive.
 */
export class MemoryQuotaStore implements QuotaStore {
  private counts = new Map<string, Count>()

  take(slot: QuotaSlot): boolean {
    const count = this.countOf(slot)
    if (count.used >= slot.max) return false
    count.used++
    return true
  }

  give(slot: QuotaSlot): void {
    const count = this.counts.get(slot.key)
    if (count && count.used > 0) count.used--
  }

  used(slots: readonly QuotaSlot[]): number[] {
    return slots.map((slot) => this.counts.get(slot.key)?.used ?? 0)
  }

  add(slot: QuotaSlot, count: number): void {
    this.countOf(slot).used += count
  }

  *live(now: number): Iterable<readonly [QuotaSlot, number]> {
    for (const { slot, used } of this.counts.values()) if (slot.end > now && used > 0) yield [slot, used]
  }

  private countOf(slot: QuotaSlot): Count {
    let count = this.counts.get(slot.key)
    if (!count) {
      if (this.counts.size >= SWEEP_AT) this.sweep(slot.start)
      this.counts.set(slot.key, count = { slot, used: 0 })
    }
    return count
  }

  private sweep(now: number) {
    for (const [key, { slot }] of this.counts) if (slot.end <= now) this.counts.delete(key)
  }
}
