import { type DecisionEvent, type MiddlewareCall, type ToolResult } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { call, definer, echo, save, session, useApps as useAppsOf } from './fixture'
import type { ConformanceHost, PluginContext } from './host'

/** `ctx.tools.use`: middleware around calls, tied to the plugin that added it. */
export function middlewareConformance(host: ConformanceHost) {
  describe(`${host.name}: ctx.tools.use`, () => {
    const apps = useAppsFor(host)

    it('wraps calls in order, rewrites arguments (validated again), and goes away with its plugin', async () => {
      const { app } = await apps.setup({ permissions: { rules: [{ permission: 'tool:save', decision: 'allow' }] } })
      const trace: string[] = []
      const policy = await app.plugin({
        name: 'policy',
        inject: ['tools'],
        apply(ctx: PluginContext) {
          ctx.tools.use(async (c: MiddlewareCall, next: (args?: unknown) => Promise<ToolResult>) => {
            trace.push(`inner ${JSON.stringify(c.args)}`)
            return next()
          }, { name: 'inner', order: 5 })
          ctx.tools.use(async (c, next) => {
            trace.push('outer')
            const args = c.args as { text: string; times: number }
            const result = await next(c.name === 'echo' ? { ...args, times: Math.min(args.times, 2) } : undefined)
            return { ...result, content: `[${result.content}]` }
          }, { name: 'outer' })
        },
      })
      expect(await call(app, 'echo', { text: 'hi', times: 3 })).toMatchObject({ status: 'ok', content: '[hi hi]' })
      expect(trace).toEqual(['outer', 'inner {"text":"hi","times":2}'])
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'ok', content: '[saved]' })
      await policy.dispose()
      expect(await call(app, 'echo', { text: 'hi', times: 3 })).toMatchObject({ content: 'hi hi hi' })
    })

    it('a middleware\'s denial reaches the model and the decision event; its error is a middleware_error naming it', async () => {
      const { app, decisions } = await apps.setup()
      await app.plugin({
        name: 'guard',
        inject: ['tools'],
        apply(ctx: PluginContext) {
          ctx.tools.use((c, next) => c.session.guildId === 'g-quiet' ? { status: 'denied', reason: 'echo is off in this group' } : next(), { name: 'quiet', tools: 'echo' })
          ctx.tools.use(() => { throw new Error('backend down') }, { name: 'broken', tools: 'ech*', order: 1 })
        },
      })
      const quiet = await call(app, 'echo', { text: 'hi' }, { ...session, guildId: 'g-quiet' })
      expect(quiet).toMatchObject({ status: 'denied', content: 'Permission denied: echo is off in this group' })
      expect(decisions.filter((event) => event.phase === 'middleware').map((event) => [event.decision, event.source, event.request.callId])).toEqual([
        ['deny', { kind: 'middleware', name: 'quiet' }, quiet.id],
      ])
      app.guard.expect(/middleware "broken" \(plugin "guard"\) failed on echo/)
      expect(await call(app, 'echo', { text: 'hi' })).toMatchObject({
        status: 'error',
        code: 'middleware_error',
        content: 'Error: middleware "broken" (plugin "guard") failed: backend down',
      })
    })

    it('refuses a middleware from a plugin that is already disposed', async () => {
      const { app } = await apps.setup()
      let tools!: PluginContext['tools']
      const stale = await app.plugin({ name: 'stale', inject: ['tools'], apply: (ctx: PluginContext) => { tools = ctx.tools } })
      await stale.dispose()
      expect(() => tools.use((_c, next) => next(), { name: 'late' })).toThrow(expect.objectContaining({ code: 'INACTIVE', message: 'plugin "stale" is no longer active; it cannot add a middleware' }))
      expect(app.tools.registry.middleware.size).toBe(0)
    })
  })
}

/** Apps with a plugin defining `echo` (read) and `save` (write), and their decision events. */
function useAppsFor(host: ConformanceHost) {
  const apps = useAppsOf(host)
  return {
    async setup(options = {}) {
      const app = await apps.app(options)
      const decisions: DecisionEvent[] = []
      app.on('permissions/decision', (event: DecisionEvent) => { decisions.push(event) })
      await app.plugin(definer('pack', echo, save).plugin)
      return { app, decisions }
    },
  }
}
