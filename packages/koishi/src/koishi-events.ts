import { type HostEmitter, hostTaps } from '@dogu/core'
import type { Context } from 'koishi'

// cordis 3's `symbols.original`: a traced object behind the context proxy.
const ORIGINAL = Symbol.for('cordis.original')

/**
 * The runtime emits on every call (`tools/call-start`, `permissions/decision`, …). Koishi's
 * `ctx.emit` first announces each event as `internal/event`, through the context proxy,
 * which costs many times a whole call; so Dogu's own consumers (the audit log) are taps
 * called directly (`tapEvent`), and the lifecycle emits only an event one of its listeners
 * waits for: the lifecycle service is read once, past its proxy, and its listener table
 * tells who listens.
 *
 * Both read cordis 3 internals (`symbols.original`, the listener table `_hooks`);
 * tests/koishi-internals.spec.ts fails the day either changes. Should they vanish, this
 * falls back to `emit` for every event: slower, never wrong.
 */
export function eventEmitter(ctx: Context): HostEmitter {
  const lifecycle = unproxiedLifecycle(ctx)
  const listeners = listenerTable(lifecycle)
  const direct = hostTaps(lifecycle)
  const listened = (name: string) => !listeners || !!listeners[name]?.length
  const listens = (name: string) => direct.has(name) || listened(name)
  const emit = (name: string, ...args: unknown[]) => {
    const taps = direct.get(name)
    if (taps) {
      for (let i = 0; i < taps.length; i++) {
        try {
          taps[i].fn(...args)
        } catch (error) {
          lifecycle.emit(ctx, 'internal/error', error)
        }
      }
    }
    if (!listened(name)) return
    try {
      // No `this` for the listeners (cordis 3 then filters nothing, as for a context, and
      // builds no tracing proxy of the context per emit): Dogu's events are about a call,
      // not a context, and its payloads carry all there is.
      ;(lifecycle.emit as (...args: unknown[]) => void)(name, ...args)
    } catch (error) {
      // A throwing listener must not break a call: the pipeline emits from inside it.
      lifecycle.emit(ctx, 'internal/error', error)
    }
  }
  return Object.assign(emit, { listens })
}

/**
 * Hands Dogu's own events (`tools/call-end`, `permissions/decision`) straight to `fn`, past
 * cordis 3's dispatch: the audit log takes every call this way. Only emitters built by
 * `eventEmitter` on the same app call taps; `ctx.emit` does not. Returns the remover; put
 * it in a `ctx.effect` so the tap goes with its plugin.
 */
export function tapEvent(ctx: Context, name: string, fn: (...args: any[]) => void): () => void {
  return hostTaps(unproxiedLifecycle(ctx)).tap(name, fn)
}

/** The lifecycle (events) service behind its tracing proxy, or the proxy if there is no original. */
export function unproxiedLifecycle(ctx: Context): Context['lifecycle'] {
  return (ctx.lifecycle as any)[ORIGINAL] ?? ctx.lifecycle
}

/** cordis 3's listener lists by event name, or `undefined` if none can be read. */
export function listenerTable(lifecycle: Context['lifecycle']): Record<string, readonly unknown[] | undefined> | undefined {
  const table = (lifecycle as any)._hooks
  return typeof table === 'object' && table !== null ? table : undefined
}
