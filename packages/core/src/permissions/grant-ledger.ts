import { messageOf } from '../error-message'
import type { Logger } from '../logger'
import type { AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import type { Session } from '../session'
import { type Grant, type GrantPath, grantPath, grantSubject } from './grant'
import type { GrantStore } from './grant-store'
import { GrantTable } from './grant-table'
import { settledWithin } from '../settled-within'
import type { DecisionSource } from './permission-decision'
import { enUS } from '../messages/en-us'
import type { RuleCause } from '../types/denial'

/** How long a store switch waits for the old store's saves before reading the new one. */
const STORE_SWITCH_WAIT = 10_000

interface GrantEntry {
  grant: Readonly<Grant>
  path: GrantPath
  /** What `authorize` returns when this grant decides, built once. */
  result: Readonly<AuthorizeResult>
}

/**
 * The remembered approvals: `session` grants in memory, `always` grants in memory and in a
 * store. A lookup allocates nothing; saves run in order, and none before the stored grants
 * are loaded.
 */
export class GrantLedger {
  /** Resolves once stored grants are loaded; saves wait for it. */
  readonly ready: Promise<void>
  /** Set when the store could not be trusted at load. */
  problem?: { message: string; movedTo?: string }
  private sessionGrants = new GrantTable<GrantEntry>()
  private alwaysGrants = new GrantTable<GrantEntry>()
  private byId = new Map<string, GrantEntry>()
  private saving: Promise<void>
  private loaded = false
  /** Counts local changes to `always` grants and store switches: a refresh that raced one is not applied. */
  private generation = 0
  /** `always` grants whose save failed: a switch to another store saves them there. */
  private unsaved = new Set<string>()

  constructor(private store: GrantStore, private readonly logger: Logger) {
    this.ready = this.load()
    this.saving = this.ready
  }

  /**
   * Moves to another store: saves already started finish on the old one, then the new
   * one is read and its `always` grants are the ones in force; `session` grants stay.
   * A grant answered while it switches is saved to the new store, once it is read.
   * Resolves once the new store is read (a failed read is reported, like at load).
   */
  /** While a store switch (not the first load) reads its new store: settles once it has. */
  switching?: Promise<void>

  useStore(store: GrantStore): Promise<void> {
    this.generation++
    const previous = this.saving
    this.store = store
    this.loaded = false
    const switched = settledWithin(previous, STORE_SWITCH_WAIT).then((finished) => {
      if (!finished) this.logger.warn('switching the grant store: earlier saves had not finished after %d ms; reading the new store anyway', STORE_SWITCH_WAIT)
      return this.switchTo(store)
    })
    this.saving = switched
    this.switching = switched
    void switched.then(() => {
      if (this.switching === switched) this.switching = undefined
    })
    return switched
  }

  /** The result of the grant covering this permission and target for the session, if one does. */
  find(session: Session, name: string, target: string | undefined): Readonly<AuthorizeResult> | undefined {
    const { id, userId, platform } = session
    if (this.sessionGrants.size) {
      const entry = this.sessionGrants.get('s', id, userId, name, target)
      if (entry) return entry.result
    }
    if (this.alwaysGrants.size) {
      const entry = userId === undefined
        ? this.alwaysGrants.get('s', id, undefined, name, target)
        : this.alwaysGrants.get('u', platform, userId, name, target)
      if (entry) return entry.result
    }
  }

  /** Remembers an approval; an `always` grant is saved too. */
  remember(scope: Grant['scope'], request: AuthorizeRequest, by: string): Readonly<Grant> {
    const grant: Grant = {
      id: `grant_${globalThis.crypto.randomUUID()}`,
      scope,
      subject: grantSubject(scope, request.session),
      permission: request.permission.name,
      tool: request.tool,
      by,
      createdAt: Date.now(),
    }
    if (request.permission.target !== undefined) grant.target = request.permission.target
    const { entry, replaced } = this.track(grant)
    if (scope === 'always') {
      if (replaced) this.persist({ remove: replaced.grant })
      this.persist({ add: entry.grant })
    }
    return entry.grant
  }

  /** Forgets the `session` grants of a session. */
  endSession(sessionId: string): void {
    for (const entry of this.sessionGrants.values()) {
      if (entry.grant.subject.sessionId === sessionId) this.drop(entry)
    }
  }

  /** Every grant, oldest first. */
  list(): Readonly<Grant>[] {
    return [...this.byId.values()].map((entry) => entry.grant).sort((a, b) => a.createdAt - b.createdAt)
  }

  /** Removes a grant, from the store too when it is `always`. True when it existed. */
  revoke(id: string): boolean {
    const entry = this.byId.get(id)
    if (!entry) return false
    this.drop(entry)
    if (entry.grant.scope === 'always') this.persist({ remove: entry.grant })
    return true
  }

  /**
   * Reads the store again and makes its `always` grants the ones in force: grants other
   * instances added appear, grants they revoked go. Waits for this ledger's own saves
   * first; a read that raced a local change is not applied (the next refresh is). A failed
   * read is reported and changes nothing. `wanted` is asked right before the read and after a
   * failure: a host that is stopping says no, and its store (a database driver stopping
   * first) is then neither read nor blamed.
   */
  async refresh(wanted?: () => boolean): Promise<void> {
    await this.ready
    await this.saving
    if (wanted && !wanted()) return
    const generation = this.generation
    let loaded: Awaited<ReturnType<GrantStore['load']>>
    try {
      loaded = await this.store.load()
    } catch (error) {
      if (!wanted || wanted()) this.logger.warn('could not refresh grants: %s', messageOf(error))
      return
    }
    if (loaded.problem) {
      this.problem = loaded.problem
      this.logger.warn('%s', loaded.problem.message)
    }
    if (generation !== this.generation) return
    const stored = new Set(loaded.grants.map((grant) => grant.id))
    for (const entry of this.alwaysGrants.values()) {
      if (!stored.has(entry.grant.id)) this.drop(entry)
    }
    for (const grant of loaded.grants) {
      if (grant.scope === 'always' && !this.byId.has(grant.id) && !this.alwaysGrants.get(...grantPath(grant.subject, grant.permission, grant.target))) this.track(grant)
    }
  }

  /** Settles once every save started so far has. */
  saved(): Promise<void> {
    return this.saving
  }

  private track(grant: Grant): { entry: GrantEntry; replaced?: GrantEntry } {
    const frozen = Object.freeze({ ...grant, subject: Object.freeze({ ...grant.subject }) })
    const path = grantPath(frozen.subject, frozen.permission, frozen.target)
    const source: DecisionSource = Object.freeze({ kind: 'grant', grant: frozen })
    const entry: GrantEntry = {
      grant: frozen,
      path,
      result: grantResult(frozen, source),
    }
    const table = frozen.scope === 'session' ? this.sessionGrants : this.alwaysGrants
    const replaced = table.get(...path)
    if (replaced) this.byId.delete(replaced.grant.id)
    table.set(path, entry)
    this.byId.set(frozen.id, entry)
    return { entry, replaced }
  }

  private drop(entry: GrantEntry) {
    const table = entry.grant.scope === 'session' ? this.sessionGrants : this.alwaysGrants
    if (table.get(...entry.path) === entry) table.delete(entry.path)
    this.byId.delete(entry.grant.id)
  }

  private async switchTo(store: GrantStore): Promise<void> {
    // The grants in force now, all from the old store or answered before the switch.
    const before = [...this.alwaysGrants.values()]
    const { grants } = await this.read(store, 'could not load grants from the new store')
    // Switched again meanwhile: that switch reads its own store.
    if (this.store !== store) return
    const stored = new Set(grants.map((grant) => grant.id))
    const carried: Readonly<Grant>[] = []
    for (const entry of before) {
      if (this.unsaved.delete(entry.grant.id)) carried.push(entry.grant)
      else if (!stored.has(entry.grant.id)) this.drop(entry)
    }
    for (const grant of grants) {
      if (grant.scope === 'always' && !this.byId.has(grant.id) && !this.alwaysGrants.get(...grantPath(grant.subject, grant.permission, grant.target))) this.track(grant)
    }
    this.loaded = true
    for (const grant of carried) this.persist({ add: grant })
  }

  /** The store's grants, with a problem reported; a failed read is one too, and gives none. */
  private async read(store: GrantStore, failure: string): Promise<{ grants: Grant[] }> {
    try {
      const { grants, problem } = await store.load()
      if (problem) {
        this.problem = problem
        this.logger.warn('%s', problem.message)
      }
      return { grants }
    } catch (error) {
      // Its database stopped while we read (an app stopping with the driver first): there
      // is nothing to load any more, and nothing wrong with the grants.
      if (store.gone !== undefined) {
        this.logger.debug('%s as it went (%s): %s', failure, store.gone, messageOf(error))
        return { grants: [] }
      }
      this.problem = { message: `${failure}: ${messageOf(error)}` }
      this.logger.warn('%s', this.problem.message)
      return { grants: [] }
    }
  }

  private async load(): Promise<void> {
    const { store } = this
    const { grants } = await this.read(store, 'could not load grants')
    // Switched while loading: the switch reads its own store.
    if (this.store !== store) return
    for (const grant of grants) {
      // A grant made while loading is newer than the stored one for the same key.
      if (grant.scope === 'always' && !this.alwaysGrants.get(...grantPath(grant.subject, grant.permission, grant.target))) this.track(grant)
    }
    this.loaded = true
  }

  private persist(change: { add?: Grant; remove?: Grant }) {
    this.generation++
    const { store } = this
    // A shared store takes single changes: a snapshot would overwrite other instances' grants.
    const incremental = typeof store.add === 'function' && typeof store.remove === 'function'
    const save = async () => {
      try {
        if (!incremental) await store.save(this.alwaysGrants.values().map((entry) => entry.grant))
        else if (change.add) await store.add!(change.add)
        else if (change.remove) await store.remove!(change.remove)
      } catch (error) {
        // A database stopping loses the write: the store switched to next is given the grant.
        if (change.add) this.unsaved.add(change.add.id)
        if (store === this.store) this.logger.warn('could not save permission grants: %s', error)
        else this.logger.debug('saving grant %s failed as its store went; the next store is given it: %s', change.add?.id, error)
      }
    }
    // Once loaded, save now rather than a tick later: the store queues writes per file,
    // and an engine started right after (a reload) must find this one in that queue.
    this.saving = this.loaded ? Promise.all([this.saving, save()]).then(() => {}) : this.saving.then(save)
  }
}

/** What a grant decides: an allow, its reason in the model's English and its structured form. */
function grantResult(grant: Readonly<Grant>, source: DecisionSource): Readonly<AuthorizeResult> {
  const cause: RuleCause = Object.freeze({ kind: 'grant', scope: grant.scope, by: grant.by, id: grant.id })
  return Object.freeze({ decision: 'allow', reason: enUS.decided(cause), cause, rule: source })
}
