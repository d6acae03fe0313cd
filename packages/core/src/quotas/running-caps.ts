import { DoguError } from '../errors'
import type { Session } from '../session'
import type { MaxRunning } from './quota-rule'

/** The counters one call holds while it runs. */
export type HeldPlaces = readonly Counter[]

interface Counter {
  readonly cap: number
  /** `maxRunning.session` and such, for the waiting call's message. */
  readonly label: string
  running: number
  /** Cleared when an idle counter is swept: a list that holds it is made again. */
  live: boolean
}

interface Waiter {
  counters: HeldPlaces
  grant(): void
}

const CAP_NAMES = ['session', 'user', 'global'] as const
/** Counters kept per session or user before idle ones are swept. */
const SWEEP_AT = 1024

/**
 * `maxRunning`: caps on calls running at once, per session, per chat user and for the
 * process. A call takes a place under each cap that applies before its handler starts and
 * gives them back when the handler settles (a call adopted by the background service still
 * runs, so it still holds them). Calls beyond a cap wait in arrival order; a waiting call
 * that could run while an earlier one cannot (other session, other user) is not held back.
 */
export class RunningCaps {
  readonly active: boolean
  /** The caps as configured: what a console shows. */
  readonly config: Readonly<MaxRunning>
  private global: Counter | undefined
  private bySession = new Map<string, Counter>()
  private byUser = new Map<string, Counter>()
  /** A toolset's session is frozen: its counters are looked up once, not per call. */
  private countersFor = new WeakMap<Session, Counter[]>()
  private waiting: Waiter[] = []

  constructor(caps: MaxRunning | undefined) {
    if (caps !== undefined && (caps === null || typeof caps !== 'object')) throw new DoguError('INVALID_OPTIONS', 'maxRunning must be an object { session?, user?, global? }')
    for (const name of Object.keys(caps ?? {})) {
      const value = (caps as Record<string, unknown>)[name]
      if (!CAP_NAMES.includes(name as typeof CAP_NAMES[number])) throw new DoguError('INVALID_OPTIONS', `maxRunning.${name} is not a cap: use session, user or global`)
      if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < 1)) throw new DoguError('INVALID_OPTIONS', `maxRunning.${name} must be a positive integer (got ${JSON.stringify(value)})`)
    }
    this.config = Object.freeze({ ...caps })
    this.active = CAP_NAMES.some((name) => this.config[name] !== undefined)
    if (this.config.global !== undefined) this.global = { cap: this.config.global, label: 'maxRunning.global', running: 0, live: true }
  }

  /**
   * Takes a place under every cap on `session` if each has room: the counters held (empty
   * when no cap applies), or `undefined` when the call must `wait`. Room under every cap
   * means nobody waiting could use it: waiting calls are let in as places free up.
   */
  tryAcquire(session: Session): HeldPlaces | undefined {
    const counters = this.countersOf(session)
    return counters.every(free) ? take(counters) : undefined
  }

  /**
   * Waits in line for a place under every cap on `session`. The wait ends early when
   * `signal` aborts: the promise rejects with its reason.
   */
  wait(session: Session, signal: AbortSignal): Promise<HeldPlaces> {
    const counters = this.countersOf(session)
    if (counters.every(free)) return Promise.resolve(take(counters))
    if (signal.aborted) return Promise.reject(signal.reason)
    return new Promise<HeldPlaces>((resolve, reject) => {
      const waiter: Waiter = {
        counters,
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          resolve(take(counters))
        },
      }
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter)
        if (index >= 0) this.waiting.splice(index, 1)
        this.drain()
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(waiter)
    })
  }

  /** Gives back what `tryAcquire` or `wait` took, and lets waiting calls in. */
  release(held: HeldPlaces): void {
    for (const counter of held) counter.running--
    if (this.waiting.length) this.drain()
  }

  /** The caps a call of `session` waits behind now, for its message: `maxRunning.session: 1`. */
  describe(session: Session): string {
    return this.countersOf(session).filter((counter) => !free(counter)).map((counter) => `${counter.label}: ${counter.cap}`).join(', ') || 'maxRunning'
  }

  private drain() {
    // In arrival order; a waiter that still cannot run does not hold back the ones after it.
    for (let i = 0; i < this.waiting.length; i++) {
      const waiter = this.waiting[i]
      if (!waiter.counters.every(free)) continue
      this.waiting.splice(i--, 1)
      waiter.grant()
    }
  }

  private countersOf(session: Session): Counter[] {
    const frozen = Object.isFrozen(session)
    const cached = frozen ? this.countersFor.get(session) : undefined
    if (cached && cached.every(isLive)) return cached
    const counters: Counter[] = []
    if (this.config.session !== undefined) counters.push(this.counterIn(this.bySession, session.id, this.config.session, 'maxRunning.session'))
    if (this.config.user !== undefined && session.userId) counters.push(this.counterIn(this.byUser, `${session.platform ?? ''}:${session.userId}`, this.config.user, 'maxRunning.user'))
    if (this.global) counters.push(this.global)
    if (frozen) this.countersFor.set(session, counters)
    return counters
  }

  private counterIn(map: Map<string, Counter>, key: string, cap: number, label: string): Counter {
    let counter = map.get(key)
    if (!counter) {
      if (map.size >= SWEEP_AT) this.sweep(map)
      map.set(key, counter = { cap, label, running: 0, live: true })
    }
    return counter
  }

  /** Forgets idle counters, so sessions that ended leave nothing behind. */
  private sweep(map: Map<string, Counter>) {
    const waited = new Set(this.waiting.flatMap((waiter) => waiter.counters))
    for (const [key, counter] of map) {
      if (counter.running > 0 || waited.has(counter)) continue
      counter.live = false
      map.delete(key)
    }
  }
}

const free = (counter: Counter) => counter.running < counter.cap
const isLive = (counter: Counter) => counter.live

function take(counters: Counter[]): HeldPlaces {
  for (const counter of counters) counter.running++
  return counters
}
