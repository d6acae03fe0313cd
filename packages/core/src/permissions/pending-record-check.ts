import { messageOf } from '../error-message'
import type { PendingRecord, StoredSession } from './pending-record'

const EFFECTS = new Set(['read', 'write', 'exec'])
const SESSION_STRINGS = ['userId', 'channelId', 'guildId', 'platform', 'cwd'] as const

/**
 * Why a stored value is not a pending request, or `undefined` when it is one: a store never
 * trusts what it reads, since a record it hands back can run a call once answered.
 */
export function recordProblem(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'is not an object'
  const record = value as Record<string, unknown>
  for (const field of ['id', 'callId', 'tool', 'summary', 'reason', 'instance'] as const) {
    if (typeof record[field] !== 'string') return `has no "${field}" string`
  }
  if (!record.id || !record.tool || !record.instance) return 'has an empty id, tool or instance'
  const permission = record.permission as Record<string, unknown> | undefined
  if (!permission || typeof permission !== 'object' || typeof permission.name !== 'string' || !permission.name) return 'has no permission name'
  if (permission.target !== undefined && typeof permission.target !== 'string') return 'has a permission target that is not a string'
  if (!EFFECTS.has(record.effect as string)) return `has an unknown effect ${JSON.stringify(record.effect)}`
  if (typeof record.createdAt !== 'number' || typeof record.expiresAt !== 'number' || !Number.isFinite(record.createdAt) || !Number.isFinite(record.expiresAt)) return 'has no createdAt and expiresAt times'
  const session = sessionProblem(record.session)
  if (session) return session
  const approvers = record.approvers as Record<string, unknown> | undefined
  if (!approvers || typeof approvers !== 'object' || Array.isArray(approvers)) return 'has no approvers'
  if (approvers.authority !== undefined && typeof approvers.authority !== 'number') return 'has an approvers authority that is not a number'
  for (const list of ['users', 'permissions'] as const) {
    const names = approvers[list]
    if (names !== undefined && !(Array.isArray(names) && names.every((name) => typeof name === 'string'))) return `has approvers ${list} that are not strings`
  }
  for (const name of ['userId', 'platform'] as const) {
    if (approvers[name] !== undefined && typeof approvers[name] !== 'string') return `has an approvers ${name} that is not a string`
  }
  for (const flag of ['masked', 'inRun'] as const) {
    if (record[flag] !== undefined && record[flag] !== true) return `has a "${flag}" that is not true`
  }
  if (record.confirm !== undefined && record.confirm !== 'always') return 'has an unknown confirm'
  for (const claim of ['claimedBy', 'claimedFor'] as const) {
    if (record[claim] !== undefined && typeof record[claim] !== 'string') return `has a "${claim}" that is not a string`
  }
  return undefined
}

function sessionProblem(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'has no session'
  const session = value as Record<string, unknown>
  if (typeof session.id !== 'string' || !session.id) return 'has no session id'
  for (const field of SESSION_STRINGS) {
    if (session[field] !== undefined && typeof session[field] !== 'string') return `has a session ${field} that is not a string`
  }
  if (session.authority !== undefined && typeof session.authority !== 'number') return 'has a session authority that is not a number'
  if (session.host !== undefined) {
    if (!session.host || typeof session.host !== 'object' || Array.isArray(session.host)) return 'has a session host that is not an object'
    if (!Object.values(session.host).every((item) => ['string', 'number', 'boolean'].includes(typeof item))) return 'has a session host field that is not a string, number or boolean'
  }
  return undefined
}

/** The session a stored value names, when it reads as one: a host closes that channel's question. */
export function sessionOf(value: unknown): StoredSession | undefined {
  const session = (value as { session?: unknown } | undefined)?.session
  return sessionProblem(session) ? undefined : pickSession(session as StoredSession)
}

/** Known fields only, copied: stored data must not smuggle extra properties into a request. */
export function pickRecord(record: PendingRecord): PendingRecord {
  const copy: PendingRecord = {
    id: record.id,
    callId: record.callId,
    tool: record.tool,
    permission: { ...record.permission },
    effect: record.effect,
    summary: record.summary,
    reason: record.reason,
    session: pickSession(record.session),
    approvers: { ...record.approvers },
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    instance: record.instance,
  }
  if (record.args !== undefined) copy.args = record.args
  if (record.masked) copy.masked = true
  if (record.asked !== undefined) copy.asked = record.asked
  if (record.preview !== undefined) copy.preview = record.preview
  if (record.repaired !== undefined) copy.repaired = record.repaired
  if (record.confirm) copy.confirm = record.confirm
  if (record.inRun) copy.inRun = true
  if (record.claimedBy !== undefined) copy.claimedBy = record.claimedBy
  if (record.claimedFor !== undefined) copy.claimedFor = record.claimedFor
  return copy
}

function pickSession(session: StoredSession): StoredSession {
  const copy: StoredSession = { id: session.id }
  for (const field of SESSION_STRINGS) {
    if (session[field] !== undefined) copy[field] = session[field]
  }
  if (session.authority !== undefined) copy.authority = session.authority
  if (session.host !== undefined) copy.host = { ...session.host }
  return copy
}

/**
 * The record as JSON text: what every store writes. Throws for what JSON cannot hold (a
 * bigint, a cycle), which the engine reports as a store failure.
 */
export function recordText(record: PendingRecord): string {
  return JSON.stringify(record)
}

/** A stored text read back, checked: the record, or why it is not one. */
export function parseRecord(text: unknown): PendingRecord | { why: string; value?: unknown } {
  if (typeof text !== 'string') return { why: 'has no record text' }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { why: `is not valid JSON (${messageOf(error)})` }
  }
  const problem = recordProblem(value)
  return problem ? { why: problem, value } : pickRecord(value as PendingRecord)
}
