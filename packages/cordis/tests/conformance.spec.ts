import { join } from 'node:path'
import { Context, type Fiber } from 'cordis'
import { type ConformanceHost, type HostApp, type PluginContext, runConformance } from '../../../test-support/conformance'
import { guardLogs } from '../../../test-support/log-guard'
import { BackgroundService, PermissionService, ToolService } from '../src'

// The contract of ctx.tools, ctx.permissions and ctx.background, as on Koishi
// (packages/koishi/tests/conformance.spec.ts runs the same suite there).

const cordis: ConformanceHost = {
  name: 'Cordis 4',
  async create({ dir, permissions = {}, background = {} }): Promise<HostApp> {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    const errors: unknown[] = []
    ctx.on('internal/error', (error) => { errors.push(error) })
    const services: Partial<Record<'permissions' | 'background', Fiber>> = {}
    await ctx.plugin(ToolService)
    if (permissions) services.permissions = await ctx.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), ...permissions })
    if (background) services.background = await ctx.plugin(BackgroundService, { storePath: join(dir, 'background.json'), ...background })
    return {
      errors,
      guard,
      // Typed against the contract: a service whose names drift fails the type check.
      get tools() { return ctx.tools satisfies PluginContext['tools'] },
      get permissions() { return ctx.permissions satisfies PluginContext['permissions'] },
      get background() { return ctx.background satisfies PluginContext['background'] },
      async plugin(plugin, config) {
        const fiber = await ctx.plugin(plugin as any, config)
        return {
          dispose: () => fiber.dispose(),
          async reload(next) {
            if (next === undefined) return fiber.restart()
            fiber.update(next)
            await fiber.await()
          },
        }
      },
      on: (name, listener) => void ctx.on(name as any, listener),
      unload: async (service) => services[service]?.dispose(),
      stop: () => ctx.fiber.dispose(),
    }
  },
}

runConformance(cordis)
