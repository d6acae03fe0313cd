import type { Context } from 'cordis'
import Schema from 'schemastery'
import { AuditService } from './audit-service'
import { BackgroundService } from './background-service'
import { PermissionService } from './permissions-service'
import { ToolService } from './tools-service'

// Every Dogu service, keyed by its config section and in load order. Adding a service is
// one line here. `audit` injects nothing and comes first, so it stops last: it still records
// the calls the others cancel as the app stops.
const services = {
  audit: AuditService,
  tools: ToolService,
  permissions: PermissionService,
  background: BackgroundService,
}

type Services = typeof services

/**
 * The plugin that provides all of Dogu's services (`ctx.tools`, …) at once. Each service
 * is also a named export, for apps that load them one by one.
 *
 * @example
 * import Dogu from '@dogu/cordis'
 * await ctx.plugin(Dogu, { tools: { maxContentLength: 20_000 } })
 */
export const DoguPlugin = {
  name: 'dogu',
  Config: Schema.object(Object.fromEntries(
    Object.entries(services).map(([key, service]) => [key, service.Config]),
  )) as unknown as Schema<DoguPlugin.Config>,
  // One after another, in table order: a service that injects an earlier one (permissions
  // needs tools) then loads at once, and the plugin is active only when all of them are.
  async apply(ctx: Context, config: DoguPlugin.Config = {}) {
    for (const [key, service] of Object.entries(services)) {
      await ctx.plugin(service, config[key as keyof Services])
    }
  },
}

export namespace DoguPlugin {
  /** One section per service, named as in `ctx`: `{ tools: { … } }`. */
  export type Config = { [K in keyof Services]?: ConstructorParameters<Services[K]>[1] }
}
