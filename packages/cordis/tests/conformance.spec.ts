import { join } from 'node:path'
import { Context, type Fiber } from 'cordis'
import { type ConformanceHost, type HostApp, type PluginContext, runConformance } from '../../../test-support/conformance'
import { guardLogs } from '../../../test-support/log-guard'
import { AuditService, BackgroundService, PermissionService, ToolService } from '../src'

// The contract of ctx.tools, ctx.permissions and ctx.background, as on Koishi
// (packages/koishi/tests/conformance.spec.ts runs the same suite there).

const cordis: ConformanceHost = {
  name: 'Cordis 4',
  async create({ dir, permissions = {}, background = {}, tools = {}, audit = false }): Promise<HostApp> {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    const errors: unknown[] = []
    ctx.on('internal/error', (error) => { errors.push(error) })
    const services: Partial<Record<'permissions' | 'background', Fiber>> = {}
    // First, as the Dogu plugin loads it: it stops after the services whose calls it records.
    if (audit) await ctx.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') })
    const auditLog = audit ? ctx.audit.log : undefined
    // A config the tools service refuses (a bad quota) fails the app, as it fails the owner's.
    try {
      await ctx.plugin(ToolService, tools)
    } catch (error) {
      await ctx.fiber.dispose()
      throw error
    }
    if (permissions) services.permissions = await ctx.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), ...permissions })
    if (background) services.background = await ctx.plugin(BackgroundService, { storePath: join(dir, 'background.json'), ...background })
    return {
      errors,
      guard,
      // Typed against the contract: a service whose names drift fails the type check.
      get tools() { return ctx.tools satisfies PluginContext['tools'] },
      get permissions() { return ctx.permissions satisfies PluginContext['permissions'] },
      get background() { return ctx.background satisfies PluginContext['background'] },
      get audit() { return audit ? ctx.audit : undefined },
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
      async stop() {
        await ctx.fiber.dispose()
        await auditLog?.stop()
      },
    }
  },
}

runConformance(cordis)
