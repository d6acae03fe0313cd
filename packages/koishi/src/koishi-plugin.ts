import type { HostPlugin } from '@dogu/core'
import type { Context } from 'koishi'

/**
 * The plugin behind `ctx` (a service method's `this.ctx`, which cordis 3's tracing proxy
 * makes the caller's context), for the host layer. A plain plugin's scope is its runtime's,
 * so a reload (same runtime) redefines its tools in place. cordis 3's effects have no label.
 */
export function koishiPlugin(ctx: Context): HostPlugin {
  const scope = ctx.scope
  return {
    owner: scope,
    label: `plugin "${ctx.name ?? 'anonymous'}"`,
    active: scope.uid !== null,
    effect: (setup) => ctx.effect(setup),
  }
}
