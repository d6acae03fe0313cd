export { AuditLog, type AuditLogOptions } from './audit-log'
export {
  type AuditAsk,
  type AuditAskEnd,
  type AuditCaller,
  type AuditDecider,
  type AuditFilter,
  type AuditRecord,
  type AuditResumes,
  type AuditRetention,
  DEFAULT_AUDIT_RETENTION,
} from './audit-record'
export { type AuditStore, MemoryAuditStore } from './audit-store'
export { canonicalJson } from './canonical-json'
export { AUDIT_TABLE, DatabaseAuditStore, type DatabaseAuditStoreOptions } from './database-audit-store'
export { JsonlAuditStore, type JsonlAuditStoreOptions } from './jsonl-audit-store'
