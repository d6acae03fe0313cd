import { DoguError } from '../errors'
import { messageOf } from '../error-message'
import { type Logger, silentLogger } from '../logger'
import { compileNameGlobs } from '../name-matcher'
import { enUS } from '../messages/en-us'
import type { ResultParamsByCode } from '../result-params'
import type { Session } from '../session'
import { parseDuration } from './duration'
import { MemoryQuotaStore } from './memory-quota-store'
import { QUOTA_SCOPES, type QuotaRule, type QuotaScope, type QuotaStatus } from './quota-rule'
import type { QuotaSlot, QuotaStore } from './quota-store'

/** One configured quota, checked and compiled. */
interface Quota {
  /** Its place in the configured list. */
  readonly index: number
  readonly name: string
  readonly tools: readonly string[]
  readonly per: QuotaScope
  readonly max: number
  readonly window: number
  readonly matches: (tool: string) => boolean
}

/** Units taken for one call: given back if the call never runs. */
export interface QuotaReservation {
  readonly store: QuotaStore
  readonly slots: readonly QuotaSlot[]
}

/** A call a quota refused: what the model reads, when it may try again, and the refusal's parameters. */
export interface QuotaRefusal {
  readonly refused: true
  readonly name: string
  readonly retryAfterMs: number
  readonly message: string
  readonly params: Extract<ResultParamsByCode['rate_limited'], { source: 'quota' }>
}

export type QuotaOutcome = QuotaReservation | QuotaRefusal | undefined

const NONE: readonly Quota[] = Object.freeze([])

/**
 * The registry's quotas (`ToolRegistryOptions.quotas`) and where their counts live. A call
 * takes one unit of every quota that matches its tool and its session as it passes
 * authorization; if any is used up, the units it took are given back and the call is
 * refused (`rate_limited`). A call that then never runs (denied by a person, cancelled
 * before it started) gives its units back.
 *
 * The store can be switched while calls run (`useStore`: a database arriving late); a unit
 * is always given back to the store it was taken from.
 */
export class QuotaBook {
  /** True when any quota is configured: without one, a call pays this one check. */
  readonly active: boolean
  private readonly quotas: readonly Quota[]
  private byTool = new Map<string, readonly Quota[]>()
  /**
   * Each session's current slot per quota (by the quota's index; `null` where the session
   * lacks the subject). A toolset's session is frozen, so its slots change only with the
   * window: a call under a quota then builds no key and hashes no new string.
   */
  private slotsOf = new WeakMap<Session, (QuotaSlot | null | undefined)[]>()
  private current: QuotaStore
  private logger: Logger

  constructor(rules: readonly QuotaRule[] | undefined, options: { store?: QuotaStore; logger?: Logger } = {}) {
    if (rules !== undefined && !Array.isArray(rules)) throw new DoguError('INVALID_OPTIONS', 'quotas must be a list of { tools?, per, max, window, name? }')
    this.quotas = Object.freeze((rules ?? []).map(compileQuota))
    const names = new Set<string>()
    for (const quota of this.quotas) {
      if (names.has(quota.name)) throw new DoguError('INVALID_OPTIONS', `quotas: two quotas are named "${quota.name}"; give each its own name`)
      names.add(quota.name)
    }
    this.active = this.quotas.length > 0
    this.current = options.store ?? new MemoryQuotaStore()
    this.logger = options.logger ?? silentLogger
  }

  /** The store counts go to now. */
  get store(): QuotaStore {
    return this.current
  }

  /**
   * Takes a unit of every quota on `tool` for `session`: `undefined` when none applies, the
   * reservation, or the refusal of the first quota used up (nothing stays taken then).
   * Synchronous while the store is (memory); a database store answers with a promise.
   */
  reserve(tool: string, session: Session): QuotaOutcome | Promise<QuotaOutcome> {
    const quotas = this.quotasOf(tool)
    if (!quotas.length) return undefined
    const now = Date.now()
    const store = this.current
    const slots: QuotaSlot[] = []
    for (let i = 0; i < quotas.length; i++) {
      const slot = this.slotIn(quotas[i], session, now)
      if (!slot) continue
      let taken: boolean | Promise<boolean>
      try {
        taken = store.take(slot)
      } catch (error) {
        this.giveBack(store, slots)
        throw error
      }
      if (typeof taken !== 'boolean') return this.reserveSlowly(taken, store, quotas, i, slot, slots, session, now)
      if (!taken) {
        this.giveBack(store, slots)
        return refusal(quotas[i], slot, now)
      }
      slots.push(slot)
    }
    return slots.length ? { store, slots } : undefined
  }

  private async reserveSlowly(
    pending: Promise<boolean>, store: QuotaStore, quotas: readonly Quota[], index: number,
    slot: QuotaSlot, slots: QuotaSlot[], session: Session, now: number,
  ): Promise<QuotaOutcome> {
    try {
      for (let i = index; ; ) {
        if (!await pending) {
          this.giveBack(store, slots)
          return refusal(quotas[i], slot, now)
        }
        slots.push(slot)
        let next: QuotaSlot | undefined
        while (++i < quotas.length && !(next = this.slotIn(quotas[i], session, now)));
        if (i >= quotas.length || !next) break
        slot = next
        pending = Promise.resolve(store.take(slot))
      }
    } catch (error) {
      this.giveBack(store, slots)
      throw error
    }
    return slots.length ? { store, slots } : undefined
  }

  /** Gives back the units of a call that never ran. */
  release(reservation: QuotaReservation): void {
    this.giveBack(reservation.store, reservation.slots)
  }

  /**
   * Where each quota that applies to `session` stands (to `tool` only, when given): what
   * `dogu.quota` shows the sender. Quotas whose subject the session lacks (`guild` in a
   * private chat) are left out.
   */
  async status(session: Session, tool?: string): Promise<QuotaStatus[]> {
    const now = Date.now()
    const applying: [Quota, QuotaSlot][] = []
    for (const quota of tool === undefined ? this.quotas : this.quotasOf(tool)) {
      const slot = slotOf(quota, session, now)
      if (slot) applying.push([quota, slot])
    }
    if (!applying.length) return []
    const used = await this.current.used(applying.map(([, slot]) => slot))
    return applying.map(([quota, slot], i) => {
      const counted = used[i] ?? 0
      return {
        name: quota.name,
        tools: quota.tools,
        per: quota.per,
        max: quota.max,
        windowMs: quota.window,
        used: Math.min(counted, quota.max),
        remaining: Math.max(0, quota.max - counted),
        resetsAt: slot.end,
      }
    })
  }

  /**
   * Counts go to `store` from now on. What the windows still open counted in the old store is
   * added to the new one first (a database arriving after the bot already took calls), so a
   * switch hands out nothing twice. Units taken before the switch are given back to the old one.
   */
  async useStore(store: QuotaStore): Promise<void> {
    const previous = this.current
    if (store === previous) return
    this.current = store
    const carried = previous.live ? [...previous.live(Date.now())] : []
    previous.close?.()
    for (const [slot, count] of carried) {
      try {
        await store.add(slot, count)
      } catch (error) {
        this.logger.warn('carrying quota "%s" (%s: %d used) to the new store failed: %s', slot.quota, slot.subject, count, messageOf(error))
      }
    }
  }

  /** The slot of `quota` for a call of `session` now, reused while its window lasts. */
  private slotIn(quota: Quota, session: Session, now: number): QuotaSlot | undefined {
    const frozen = Object.isFrozen(session)
    let slots = frozen ? this.slotsOf.get(session) : undefined
    const cached = slots?.[quota.index]
    if (cached === null) return undefined
    if (cached && now >= cached.start && now < cached.end) return cached
    const slot = slotOf(quota, session, now)
    if (frozen) {
      if (!slots) this.slotsOf.set(session, slots = [])
      slots[quota.index] = slot ?? null
    }
    return slot
  }

  private quotasOf(tool: string): readonly Quota[] {
    let quotas = this.byTool.get(tool)
    if (!quotas) {
      quotas = this.quotas.filter((quota) => quota.matches(tool))
      if (!quotas.length) quotas = NONE
      if (this.byTool.size > 4096) this.byTool.clear()
      this.byTool.set(tool, quotas)
    }
    return quotas
  }

  private giveBack(store: QuotaStore, slots: readonly QuotaSlot[]) {
    for (const slot of slots) {
      try {
        const given = store.give(slot)
        if (given) given.catch((error) => this.gaveBackFailed(slot, error))
      } catch (error) {
        this.gaveBackFailed(slot, error)
      }
    }
  }

  private gaveBackFailed(slot: QuotaSlot, error: unknown) {
    this.logger.warn('giving back a unit of quota "%s" (%s) failed: %s', slot.quota, slot.subject, messageOf(error))
  }
}

/** The refusal of `quota`: a message the model can act on, and when to try again. */
function refusal(quota: Quota, slot: QuotaSlot, now: number): QuotaRefusal {
  const retryAfterMs = Math.max(1, slot.end - now)
  const params = { source: 'quota', quota: quota.name, max: quota.max, windowMs: quota.window, retryAfterMs } as const
  return { refused: true, name: quota.name, retryAfterMs, message: enUS.results.rate_limited(params), params }
}

/** The slot of `quota` for `session` in the window `now` falls in; `undefined` when the session lacks the subject. */
function slotOf(quota: Quota, session: Session, now: number): QuotaSlot | undefined {
  const subject = subjectOf(quota.per, session)
  if (subject === undefined) return undefined
  const start = now - (now % quota.window)
  return { key: `${quota.name}\u0000${subject}\u0000${start}`, quota: quota.name, subject, start, end: start + quota.window, max: quota.max }
}

/** Whose count a call of `session` goes to; ids are per platform, as chat ids are. */
function subjectOf(per: QuotaScope, session: Session): string | undefined {
  switch (per) {
    case 'global': return 'global'
    case 'session': return `session:${session.id}`
    case 'user': return session.userId ? `user:${session.platform ?? ''}:${session.userId}` : undefined
    case 'channel': return session.channelId ? `channel:${session.platform ?? ''}:${session.channelId}` : undefined
    case 'guild': return session.guildId ? `guild:${session.platform ?? ''}:${session.guildId}` : undefined
  }
}

function compileQuota(rule: QuotaRule, index: number): Quota {
  const where = `quotas[${index}]`
  if (!rule || typeof rule !== 'object') throw new DoguError('INVALID_OPTIONS', `${where} must be an object { tools?, per, max, window, name? }`)
  const { per, max, name } = rule
  if (!QUOTA_SCOPES.includes(per)) throw new DoguError('INVALID_OPTIONS', `${where}.per must be one of ${QUOTA_SCOPES.join(', ')} (got ${JSON.stringify(per)})`)
  if (!Number.isSafeInteger(max) || max < 1) throw new DoguError('INVALID_OPTIONS', `${where}.max must be a positive integer (got ${JSON.stringify(max)})`)
  const window = parseDuration(rule.window)
  if (window === undefined) throw new DoguError('INVALID_OPTIONS', `${where}.window must be a duration: milliseconds, or a text such as '90s', '30 min', '1h', '1d' (got ${JSON.stringify(rule.window)})`)
  const tools = rule.tools === undefined ? [] : Array.isArray(rule.tools) ? rule.tools : [rule.tools]
  if (tools.some((glob) => typeof glob !== 'string' || !glob)) throw new DoguError('INVALID_OPTIONS', `${where}.tools must be a name glob or a list of them (got ${JSON.stringify(rule.tools)})`)
  if (name !== undefined && (typeof name !== 'string' || !name.trim() || name.length > 100)) throw new DoguError('INVALID_OPTIONS', `${where}.name must be a non-empty text of at most 100 characters (got ${JSON.stringify(name)})`)
  const matchAll = !tools.length || tools.includes('*') || tools.includes('**')
  return Object.freeze({
    index,
    name: name?.trim() ?? `${tools.length ? tools.join(', ') : '*'} per ${per}`,
    tools: Object.freeze([...tools]),
    per,
    max,
    window,
    matches: matchAll ? () => true : compileNameGlobs(tools),
  })
}
