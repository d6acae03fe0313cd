import type { Context } from 'cordis'

/** Emits one of the runtime's events on a Cordis app; never throws. */
export interface EmitEvent {
  (name: string, ...args: unknown[]): void
  /** False when nobody listens to `name`, so the event need not even be built. */
  listens(name: string): boolean
}

// Cordis' `symbols.original`: a traced service's own object, behind the context proxy.
const ORIGINAL = Symbol.for('cordis.original')

/**
 * The runtime emits on every call (`tools/call-start`, `permissions/decision`, …), and
 * through the context proxy one emit costs more than a whole call: `ctx.emit` misses the
 * context's own properties, and every miss builds an Error for its message. So the events
 * service is read once, past its proxy, and an event nobody listens to is skipped.
 *
 * Both shortcuts read Cordis internals (`symbols.original` and the listener table
 * `_hooks`); tests/cordis-events.spec.ts fails the day Cordis changes either. Should
 * they vanish, this falls back to Cordis' public `emit` for every event: slower, never
 * wrong.
 */
export function eventEmitter(ctx: Context): EmitEvent {
  const events = unproxiedEvents(ctx)
  const listeners = listenerTable(events)
  const direct = tapsOf(events)
  const listens = (name: string) => direct.has(name) || !listeners || !!listeners[name]?.length
  const emit = (name: string, ...args: unknown[]) => {
    const taps = direct.get(name)
    if (taps) {
      for (const tap of taps) {
        try {
          tap.fn(...args)
        } catch (error) {
          events.emit(ctx, 'internal/error', error)
        }
      }
    }
    if (listeners && !listeners[name]?.length) return
    try {
      events.emit(ctx, name as any, ...args)
    } catch (error) {
      // A throwing listener must not break a call: the pipeline emits from inside it.
      events.emit(ctx, 'internal/error', error)
    }
  }
  return Object.assign(emit, { listens })
}

/** The events service behind `ctx.events`' tracing proxy, or the proxy if Cordis has no original. */
export function unproxiedEvents(ctx: Context): Context['events'] {
  return (ctx.events as any)[ORIGINAL] ?? ctx.events
}

/** Cordis' listener lists by event name, or `undefined` if the events service keeps none we can read. */
export function listenerTable(events: Context['events']): Record<string, readonly unknown[] | undefined> | undefined {
  const table = (events as any)._hooks
  return typeof table === 'object' && table !== null ? table : undefined
}

type Tap = { fn: (...args: any[]) => void }
const allTaps = new WeakMap<object, Map<string, Set<Tap>>>()

function tapsOf(events: Context['events']): Map<string, Set<Tap>> {
  let taps = allTaps.get(events)
  if (!taps) allTaps.set(events, taps = new Map())
  return taps
}

/**
 * Hands Dogu's own events (`tools/call-end`, `permissions/decision`) straight to `fn`, past
 * Cordis' dispatch, which costs a listener more than a whole call: the audit trail listens
 * to every call this way. Only emitters built by `eventEmitter` on the same app call taps;
 * `ctx.emit` does not. Returns the remover; put it in a `ctx.effect` so the tap goes with
 * its plugin.
 */
export function tapEvent(ctx: Context, name: string, fn: (...args: any[]) => void): () => void {
  const taps = tapsOf(unproxiedEvents(ctx))
  let set = taps.get(name)
  if (!set) taps.set(name, set = new Set())
  // The same function twice is two taps: each remover removes its own.
  const tap: Tap = { fn }
  set.add(tap)
  return () => {
    if (!set.delete(tap) || set.size) return
    if (taps.get(name) === set) taps.delete(name)
  }
}
