import { join } from 'node:path'
import { App, type ForkScope } from 'koishi'
import { type ConformanceHost, type HostApp, type PluginContext, runConformance } from '../../../test-support/conformance'
import { guardLogs } from '../../../test-support/log-guard'
import { AuditService, BackgroundService, PermissionService, ToolService } from '../src'

// The contract of ctx.tools, ctx.permissions and ctx.background, as on Cordis 4
// (packages/cordis/tests/conformance.spec.ts runs the same suite there).

const koishi: ConformanceHost = {
  name: 'Koishi 4',
  async create({ dir, permissions = {}, background = {}, tools = {}, audit = false }): Promise<HostApp> {
    const app = new App()
    const guard = guardLogs(app)
    const errors: unknown[] = []
    app.on('internal/error', (error) => { errors.push(error) })
    await app.start()
    // cordis 3 applies plugins asynchronously; this resolves once every one is done.
    const settle = () => app.lifecycle.flush()
    const services: Partial<Record<'permissions' | 'background', ForkScope>> = {}
    if (permissions) services.permissions = app.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), ...permissions })
    const toolsFork = app.plugin(ToolService, tools)
    if (background) services.background = app.plugin(BackgroundService, { storePath: join(dir, 'background.json'), ...background })
    // Last, as the Dogu plugin loads it: it stops after the services whose calls it records.
    if (audit) app.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') })
    await settle()
    // A config the tools service refuses (a bad quota) fails the app, as it fails the owner's.
    if (toolsFork.runtime.error) {
      // The permissions store is written before the test's folder goes.
      const engine = permissions ? app.permissions.engine : undefined
      await app.stop()
      await engine?.stop()
      throw toolsFork.runtime.error
    }
    const auditLog = audit ? app.audit.log : undefined
    // What the stores are written by, to wait for them after an unload or a stop.
    const flush = async () => {
      await Promise.all([
        services.permissions && (await permissionsEngine)?.stop(),
        services.background && (await backgroundEngine)?.dispose(),
        auditLog?.stop(),
      ])
    }
    const permissionsEngine = Promise.resolve(permissions ? app.permissions.engine : undefined)
    const backgroundEngine = Promise.resolve(background ? app.background.engine : undefined)
    return {
      errors,
      guard,
      // Typed against the contract: a service whose names drift fails the type check.
      get tools() { return app.tools satisfies PluginContext['tools'] },
      get permissions() { return app.permissions satisfies PluginContext['permissions'] },
      get background() { return app.background satisfies PluginContext['background'] },
      get audit() { return audit ? app.audit : undefined },
      async plugin(plugin, config) {
        const fork = app.plugin(plugin as any, config)
        await settle()
        if (fork.runtime.error) throw fork.runtime.error
        return {
          async dispose() {
            fork.dispose()
            await settle()
          },
          async reload(next) {
            fork.update(next ?? fork.config, true)
            await settle()
          },
        }
      },
      on: (name, listener) => void app.on(name as any, listener),
      async unload(service) {
        const engine = service === 'permissions' ? await permissionsEngine : await backgroundEngine
        services[service]?.dispose()
        await settle()
        await (engine && ('stop' in engine ? engine.stop() : engine.dispose()))
      },
      async stop() {
        await app.stop()
        await flush()
      },
    }
  },
}

runConformance(koishi)
