import type { Logger } from '../logger'
import type { AuditStore } from './audit-store'

export interface AuditLogOptions {
  /** Where records persist. @default a MemoryAuditStore (forgotten on restart) */
  store?: AuditStore
  /**
   * Record a sha256 of the arguments' canonical JSON instead of the arguments: `true` for
   * every tool, or the names of the tools whose arguments are hashed. @default false
   */
  hashArguments?: boolean | readonly string[]
  /** @default 10_000 */
  maxRecords?: number
  /** @default 30 days */
  maxAgeMs?: number
  /** Arguments whose JSON is longer than this many characters are hashed instead. @default 16_384 */
  maxArgumentsLength?: number
  /** Milliseconds records wait in the queue before they are written. @default 200 */
  flushInterval?: number
  /** Records queued that trigger a write at once. @default 100 */
  batchSize?: number
  logger?: Logger
}

/** A positive number option, or a clear error naming it. */
export function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && value > 0)) throw new TypeError(`${name} must be a positive number, got ${JSON.stringify(value)}`)
  return value
}

/** A store with what the log calls, or a clear error. */
export function checkStore(store: AuditStore): AuditStore {
  if (!store || typeof store.append !== 'function' || typeof store.query !== 'function' || typeof store.prune !== 'function') {
    throw new TypeError('an audit store needs append(records), query(filter) and prune(retention)')
  }
  return store
}
