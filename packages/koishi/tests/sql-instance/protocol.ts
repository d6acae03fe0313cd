// The JSON-lines protocol between two-instances.sql.spec.ts and ./instance.ts (described in
// instance.ts' header).
import type { QuotaRule } from '@dogu/core'
import type { MariaDBDatabase } from '../../../../test-support/mariadb'

/** The child's argument. */
export interface InstanceConfig {
  /** `background.instanceId`: distinct per instance, the same across its restarts. */
  instanceId: string
  /** The instance's own folder (its JSON store paths, unused on a database). */
  dir: string
  mysql: MariaDBDatabase
  /** `permissions.syncInterval`. */
  grantSyncMs: number
  /** `background.syncInterval`. */
  taskSyncMs: number
  /** `background.leaseMs`. */
  leaseMs: number
  /** The `slow` tool's `timeout` trait: after it the call moves to the background. */
  slowTimeoutMs: number
  /** How long the instance waits for the driver and Dogu's stores before it gives up. */
  readyTimeoutMs: number
  /** `tools.quotas`; with them, `ready` also waits for the quota table. */
  quotas?: QuotaRule[]
  /** `permissions.durable`: questions kept in `dogu_pending`, answerable on any instance. @default true (Dogu's default) */
  durable?: boolean
}

export type Command = { id: number } & (
  | { cmd: 'call'; tool: string; user: string; args?: Record<string, unknown> }
  /** `refreshWhileRead`: the pending table is read again (as the poll does) while the message is read, before its author is looked up. */
  | { cmd: 'say'; user: string; text: string; refreshWhileRead?: boolean }
  | { cmd: 'refresh' }
  | { cmd: 'grants' }
  | { cmd: 'revoke'; grant: string }
  | { cmd: 'tasks' }
  | { cmd: 'finish'; callId: string; text: string }
  | { cmd: 'probes' }
  | { cmd: 'saves' }
  | { cmd: 'pending' }
  | { cmd: 'quota'; user: string }
  | { cmd: 'stop' }
)

/** An open request as the `pending` command reports it (`ctx.permissions.pending()`, its data only). */
export interface PendingRequest {
  id: string
  tool: string
  summary: string
  /** Asked before a restart, or on another instance (`PermissionRequest.restored`). */
  restored?: { instance: string; originalId: string; at: number }
}

/** A command without its id, as the test writes it. */
export type CommandBody = Command extends infer C ? (C extends unknown ? Omit<C, 'id'> : never) : never

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }

export type InstanceEvent =
  | { event: 'ready'; instanceId: string; pid: number; patchedDriver: boolean }
  | { event: 'sent'; channelId: string; text: string }
  | { event: 'log'; level: string; name: string; text: string }

export type Message = Reply | InstanceEvent
