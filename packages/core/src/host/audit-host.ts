import type { AuditFilter, AuditLog, AuditLogOptions, AuditRecord, AuditStore } from '../audit'
import type { HostBaseClass } from './host-plugin'

/**
 * `ctx.audit` for any host: the reading and flushing methods over an `AuditLog`, each a
 * no-op answer while auditing is off. The host's class builds the log (or leaves it
 * `undefined` when `enabled` is false), picks its stores and feeds it the runtime's events.
 *
 * @example
 * export class AuditService extends auditHost(Service) {
 *   readonly log: AuditLog | undefined
 *   constructor(ctx: Context, config: { enabled?: boolean } = {}) {
 *     super(ctx, 'audit')
 *     if (config.enabled !== false) this.log = new AuditLog({ store: new MemoryAuditStore() })
 *   }
 * }
 */
export function auditHost<B extends HostBaseClass>(Base: B) {
  abstract class AuditHost extends Base {
    /** The host-free engine; `undefined` when `enabled` is false. */
    abstract readonly log: AuditLog | undefined

    /** True while records are being kept. */
    get enabled(): boolean {
      return !!this.log
    }

    /** Records matching `filter`, newest first. Empty when auditing is off. */
    query(filter?: AuditFilter): Promise<AuditRecord[]> {
      return this.log ? this.log.query(filter) : Promise.resolve([])
    }

    /** Every retained record matching `filter`, oldest first. */
    export(filter?: Omit<AuditFilter, 'limit'>): Promise<AuditRecord[]> {
      return this.log ? this.log.export(filter) : Promise.resolve([])
    }

    /** Writes queued records now. */
    flush(): Promise<void> {
      return this.log ? this.log.flush() : Promise.resolve()
    }

    /** Switches where records go (a database appearing); see `AuditLog.useStore`. */
    useStore(store: AuditStore): Promise<void> {
      return this.log ? this.log.useStore(store) : Promise.resolve()
    }
  }
  return AuditHost
}

/** The config every host's audit service takes, beside where records are stored. */
export interface AuditHostConfig {
  /** @default true */
  enabled?: boolean
  /** @default false */
  hashArguments?: boolean | string[]
  /** @default 10_000 */
  maxRecords?: number
  /** @default 30 days */
  maxAgeMs?: number
}

/** The log's options an audit service's config sets, the same on every host. */
export function auditLogOptions(config: AuditHostConfig): Pick<AuditLogOptions, 'hashArguments' | 'maxRecords' | 'maxAgeMs'> {
  return { hashArguments: config.hashArguments, maxRecords: config.maxRecords, maxAgeMs: config.maxAgeMs }
}
