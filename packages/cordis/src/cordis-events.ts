import { type HostEmitter, hostTaps } from '@dogu/core'
import type { Context } from 'cordis'

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
export function eventEmitter(ctx: Context): HostEmitter {
  const events = unproxiedEvents(ctx)
  const listeners = listenerTable(events)
  const direct = hostTaps(events)
  const listens = (name: string) => direct.has(name) || !listeners || !!listeners[name]?.length
  // Named parameters and `arguments.length`, not a rest parameter and spreads: every call
  // emits two or three events, and the common ones (one or two arguments) then allocate
  // no array. A tap or a listener still gets exactly the arguments given.
  function emit(name: string, a?: unknown, b?: unknown): void {
    const count = arguments.length
    const taps = direct.get(name)
    if (taps) {
      for (let i = 0; i < taps.length; i++) {
        const fn = taps[i].fn
        try {
          if (count === 3) fn(a, b)
          else if (count === 2) fn(a)
          else if (count < 2) fn()
          else fn(...Array.prototype.slice.call(arguments, 1))
        } catch (error) {
          events.emit(ctx, 'internal/error', error)
        }
      }
    }
    if (listeners && !listeners[name]?.length) return
    try {
      if (count === 3) events.emit(ctx, name as any, a, b)
      else if (count === 2) events.emit(ctx, name as any, a)
      else events.emit(ctx, name as any, ...Array.prototype.slice.call(arguments, 1))
    } catch (error) {
      // A throwing listener must not break a call: the pipeline emits from inside it.
      events.emit(ctx, 'internal/error', error)
    }
  }
  return Object.assign(emit as (name: string, ...args: unknown[]) => void, { listens })
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

/**
 * Hands Dogu's own events (`tools/call-end`, `permissions/decision`) straight to `fn`, past
 * Cordis' dispatch, which costs a listener more than a whole call: the audit trail listens
 * to every call this way. Only emitters built by `eventEmitter` on the same app call taps;
 * `ctx.emit` does not. Returns the remover; put it in a `ctx.effect` so the tap goes with
 * its plugin.
 */
export function tapEvent(ctx: Context, name: string, fn: (...args: any[]) => void): () => void {
  return hostTaps(unproxiedEvents(ctx)).tap(name, fn)
}
