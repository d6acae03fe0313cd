import type { HostEmitter } from '@dogu/core'
import type { Context } from 'koishi'

// cordis 3's `symbols.original`: a traced object behind the context proxy.
const ORIGINAL = Symbol.for('cordis.original')

/**
 * The runtime emits on every call (`tools/call-start`, `permissions/decision`, …). Koishi's
 * `ctx.emit` first announces each event as `internal/event`, through the context proxy,
 * so an event nobody listens to is skipped: the lifecycle service is read once, past its
 * proxy, and its listener table tells who listens.
 *
 * Both read cordis 3 internals (`symbols.original`, the listener table `_hooks`);
 * tests/koishi-internals.spec.ts fails the day either changes. Should they vanish, this
 * falls back to `emit` for every event: slower, never wrong.
 */
export function eventEmitter(ctx: Context): HostEmitter {
  const lifecycle = unproxiedLifecycle(ctx)
  const listeners = listenerTable(lifecycle)
  const listens = (name: string) => !listeners || !!listeners[name]?.length
  const emit = (name: string, ...args: unknown[]) => {
    if (!listens(name)) return
    try {
      lifecycle.emit(ctx, name as any, ...args as any)
    } catch (error) {
      // A throwing listener must not break a call: the pipeline emits from inside it.
      lifecycle.emit(ctx, 'internal/error', error)
    }
  }
  return Object.assign(emit, { listens })
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
