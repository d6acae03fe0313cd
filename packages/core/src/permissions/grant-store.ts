import type { Grant } from './grant'

/** What a store found when it loaded. */
export interface GrantStoreLoad {
  grants: Grant[]
  /**
   * Set when the stored data could not be trusted: it was moved aside (`movedTo`) and no
   * stored grant applies. Never a reason to allow anything.
   */
  problem?: { message: string; movedTo?: string }
}

/** Where `always` grants live across restarts. Session grants never reach a store. */
export interface GrantStore {
  load(): Promise<GrantStoreLoad>
  /**
   * Replaces the stored grants with this snapshot. The engine may call again before an
   * earlier call settled: apply them in call order (the last snapshot wins).
   */
  save(grants: readonly Grant[]): Promise<void>
  /**
   * Optional, for stores shared by several instances: stores one new grant. When a store
   * has `add` and `remove`, the engine calls them instead of `save`, so an instance never
   * writes a snapshot over grants it has not seen yet.
   */
  add?(grant: Grant): Promise<void>
  /** Optional, with `add`: removes one grant. */
  remove?(grant: Grant): Promise<void>
  /**
   * Optional: why the store can no longer be used (its database stopped), once it cannot.
   * A read that fails after it went is not a problem of the grants, and is not reported as one.
   */
  readonly gone?: string
}

/** A store that forgets on restart; the default when no file is configured. */
export class MemoryGrantStore implements GrantStore {
  private grants: Grant[] = []

  async load(): Promise<GrantStoreLoad> {
    return { grants: this.grants.map((grant) => ({ ...grant })) }
  }

  async save(grants: readonly Grant[]): Promise<void> {
    this.grants = grants.map((grant) => ({ ...grant }))
  }
}

const SCOPES = new Set(['session', 'always'])

/** True for a well-formed stored grant: a store never trusts what it reads. */
export function isGrant(value: unknown): value is Grant {
  if (!value || typeof value !== 'object') return false
  const grant = value as Record<string, unknown>
  const subject = grant.subject as Record<string, unknown> | undefined
  const optionalString = (item: unknown) => item === undefined || typeof item === 'string'
  return typeof grant.id === 'string' && !!grant.id
    && SCOPES.has(grant.scope as string)
    && typeof grant.permission === 'string' && !!grant.permission
    && optionalString(grant.target)
    && typeof grant.tool === 'string'
    && typeof grant.by === 'string'
    && typeof grant.createdAt === 'number'
    && !!subject && typeof subject === 'object'
    && optionalString(subject.sessionId) && optionalString(subject.userId) && optionalString(subject.platform)
    && (subject.sessionId !== undefined || subject.userId !== undefined)
}

/** Known fields only: stored data must not smuggle extra properties into grants. */
export function pickGrant(grant: Grant): Grant {
  const subject: Grant['subject'] = {}
  for (const key of ['sessionId', 'userId', 'platform'] as const) {
    if (grant.subject[key] !== undefined) subject[key] = grant.subject[key]
  }
  const copy: Grant = { id: grant.id, scope: grant.scope, subject, permission: grant.permission, tool: grant.tool, by: grant.by, createdAt: grant.createdAt }
  if (grant.target !== undefined) copy.target = grant.target
  return copy
}
