import type { AuditFilter, AuditRecord, AuditRetention } from './audit-record'
import { keepNewest } from './retention-order'

/**
 * Where audit records persist. The `AuditLog` engine batches records and hands them over
 * with `append`; a store applies retention in `prune`. Implementations: `MemoryAuditStore`,
 * `JsonlAuditStore` (one file, one instance); a database store (`dogu_audit`) plugs in the same way.
 */
export interface AuditStore {
  /** Reads what the store needs before the first append or query (optional). */
  open?(): Promise<void>
  /** Adds records, oldest first. A rejection keeps them queued for the next flush. */
  append(records: readonly AuditRecord[]): Promise<void>
  /** Records matching `filter`, newest first. */
  query(filter: AuditFilter): Promise<AuditRecord[]>
  /**
   * Removes records older than `maxAgeMs`, and those beyond `maxRecords`: the oldest `early`
   * records first (calls nobody authorized), others only once no `early` one is left.
   * Resolves with how many went.
   */
  prune(retention: AuditRetention, now?: number): Promise<number>
  /** Releases what the store holds (file handles); the engine calls it when it stops or switches away. */
  close?(): Promise<void>
}

/** True when `record` matches `filter` (its `limit` aside). */
export function matchesFilter(record: AuditRecord, filter: AuditFilter): boolean {
  if (filter.tool !== undefined && record.tool !== filter.tool) return false
  if (filter.sessionId !== undefined && record.caller.sessionId !== filter.sessionId) return false
  if (filter.since !== undefined && record.at < filter.since) return false
  if (filter.until !== undefined && record.at >= filter.until) return false
  if (filter.outcome !== undefined) {
    if (typeof filter.outcome === 'string' ? record.outcome !== filter.outcome : !filter.outcome.includes(record.outcome)) return false
  }
  if (filter.user !== undefined) {
    const { userId, platform } = record.caller
    if (userId === undefined) return false
    if (filter.user !== userId && filter.user !== `${platform}:${userId}`) return false
  }
  return true
}

/** Filters records kept oldest first, returning them newest first. */
export function selectRecords(records: readonly AuditRecord[], filter: AuditFilter): AuditRecord[] {
  const limit = filter.limit ?? Infinity
  const out: AuditRecord[] = []
  for (let i = records.length - 1; i >= 0 && out.length < limit; i--) {
    if (matchesFilter(records[i], filter)) out.push(records[i])
  }
  return out
}

/** The records `retention` keeps, oldest first: the young ones, `early` records going first beyond `maxRecords`. */
export function retained(records: readonly AuditRecord[], retention: AuditRetention, now = Date.now()): AuditRecord[] {
  const cutoff = now - retention.maxAgeMs
  const young = records.filter((record) => record.at >= cutoff)
  return young.length > retention.maxRecords ? keepNewest(young, retention.maxRecords, isEarly) : young
}

/** A record of a call that nobody authorized: the first to go. */
export function isEarly(record: { early?: unknown }): boolean {
  return record.early === true
}

/** Keeps records in memory: forgotten on restart. The default store of a bare `AuditLog`. */
export class MemoryAuditStore implements AuditStore {
  private records: AuditRecord[] = []

  async append(records: readonly AuditRecord[]): Promise<void> {
    for (const record of records) this.records.push(record)
  }

  async query(filter: AuditFilter): Promise<AuditRecord[]> {
    return selectRecords(this.records, filter)
  }

  async prune(retention: AuditRetention, now = Date.now()): Promise<number> {
    const before = this.records.length
    this.records = retained(this.records, retention, now)
    return before - this.records.length
  }
}
