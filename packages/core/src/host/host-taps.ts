/** One direct consumer of a runtime event: Dogu's own (the audit log), called past the framework's dispatch. */
interface Tap {
  readonly fn: (...args: any[]) => void
}

/**
 * Dogu's own consumers of its events on one app (the audit log's `tools/call-end` and
 * `permissions/decision`), by event name. A host's emitter (`HostEmitter`) calls them
 * directly, before and beside the framework's listeners, so that auditing every call does
 * not make the framework dispatch every event: its dispatch (Cordis' tracing proxy, cordis
 * 3's `internal/event`) costs more than a whole call. The framework then emits an event
 * only when one of its own listeners exists.
 *
 * Lists are replaced, never changed, on a tap or an untap: an emit walks a plain array, and
 * one in progress keeps the taps it started with.
 */
export class HostTaps {
  private taps = new Map<string, readonly Tap[]>()

  /** The taps of `name`, or `undefined` when none. */
  get(name: string): readonly Tap[] | undefined {
    return this.taps.get(name)
  }

  /** True when some tap takes `name`. */
  has(name: string): boolean {
    return this.taps.has(name)
  }

  /** Adds `fn` for `name` and returns its remover; the same function twice is two taps, each remover removes its own. */
  tap(name: string, fn: (...args: any[]) => void): () => void {
    const tap: Tap = { fn }
    this.taps.set(name, [...this.taps.get(name) ?? [], tap])
    return () => {
      const list = this.taps.get(name)
      if (!list?.includes(tap)) return
      const rest = list.filter((other) => other !== tap)
      if (rest.length) this.taps.set(name, rest)
      else this.taps.delete(name)
    }
  }
}

const allTaps = new WeakMap<object, HostTaps>()

/**
 * The taps of one app, keyed by an object the app has once (its events service, behind any
 * proxy): every emitter a host builds on that app, and every tap, finds the same ones.
 */
export function hostTaps(bus: object): HostTaps {
  let taps = allTaps.get(bus)
  if (!taps) allTaps.set(bus, taps = new HostTaps())
  return taps
}
