import type { HostPlugin } from '@dogu/core'
import type { Context } from 'cordis'

/**
 * The plugin behind `ctx` (a service method's `this.ctx`, which Cordis' tracker makes the
 * caller's context), for the host layer: its fiber owns what it adds, across reloads.
 */
export function cordisPlugin(ctx: Context): HostPlugin {
  const fiber = ctx.fiber
  return {
    owner: fiber,
    label: `plugin "${fiber.name}"`,
    active: fiber.uid !== null,
    effect: (setup, label) => ctx.effect(setup, label),
  }
}
