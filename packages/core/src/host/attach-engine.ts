import type { BackgroundPort } from '../background-port'
import type { PermissionGate } from '../permission-gate'

/** The registry's slots a host service fills while it is loaded. */
export interface EngineSlots {
  permissions: PermissionGate | undefined
  background: BackgroundPort | undefined
}

/**
 * Makes `engine` the registry's gate or background service and returns the detach. The
 * detach empties the slot only while it still holds `engine`: a reloaded service that
 * attached its new engine first is left in place. Calling it twice is harmless.
 *
 * @example
 * ctx.effect(() => attachEngine(ctx.tools.registry, 'permissions', engine))
 */
export function attachEngine<K extends keyof EngineSlots>(registry: EngineSlots, slot: K, engine: NonNullable<EngineSlots[K]>): () => void {
  registry[slot] = engine
  return () => {
    if (registry[slot] === engine) registry[slot] = undefined
  }
}
