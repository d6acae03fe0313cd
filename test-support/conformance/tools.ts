import { type CallInfo, defineTool, DoguError, type ToolResult } from '@dogu/core'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { call, definer, echo, session, useApps } from './fixture'
import type { ConformanceHost, PluginContext, ToolsApi } from './host'

/** `ctx.tools`: definitions tied to their plugin, toolsets, execution and events. */
export function toolsConformance(host: ConformanceHost) {
  describe(`${host.name}: ctx.tools`, () => {
    const apps = useApps(host)
    const changes = async (options = {}) => {
      const app = await apps.app(options)
      const counts: number[] = []
      app.on('tools/changed', () => { counts.push(app.tools.list().length) })
      return { app, counts }
    }

    it('lists, gets, filters and advertises a tool a plugin defined', async () => {
      const { app, counts } = await changes({ permissions: false, background: false })
      const { plugin, counts: applied } = definer('alpha')
      await app.plugin(plugin)
      expect(applied.apply).toBe(1)
      expect(counts).toEqual([1])
      expect(app.tools.get('echo')).toBe(echo)
      expect(app.tools.get('nope')).toBeUndefined()
      expect(app.tools.list()).toEqual([echo])
      expect(app.tools.filter({ include: ['ec*'] })).toEqual([echo])
      expect(app.tools.filter({ exclude: ['ec*'] })).toEqual([])
      expect(app.tools.registry.ownerOf('echo')).toBe('plugin "alpha"')
      expect(app.tools.toolset({ session }).names).toEqual(['echo'])
      expect(app.tools.toolset({ session, exclude: ['echo'] }).names).toEqual([])
      expect(app.tools.toolset({ session }).definitions('openai')).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'echo' }) })])
    })

    it('executes calls through a toolset and through the shortcut, one result per call', async () => {
      const app = await apps.app({ permissions: false, background: false })
      await app.plugin(definer('alpha').plugin)
      const results = await app.tools.toolset({ session }).execute([
        { id: 'c1', name: 'echo', arguments: '{"text":"hi","times":2}' },
        { id: 'c2', name: 'echo', arguments: { text: 'yo' } },
        { id: 'c3', name: 'ecko', arguments: '{}' },
        { id: 'c4', name: 'echo', arguments: '{"times":9}' },
      ])
      expect(results.map(({ durationMs, ...rest }) => rest)).toEqual([
        { id: 'c1', name: 'echo', status: 'ok', content: 'hi hi' },
        { id: 'c2', name: 'echo', status: 'ok', content: 'yo' },
        { id: 'c3', name: 'ecko', status: 'error', code: 'unknown_tool', content: 'Unknown tool "ecko". Did you mean "echo"? Available tools: echo.', params: { name: 'ecko', suggestions: ['echo'], available: ['echo'], more: false } },
        expect.objectContaining({ id: 'c4', status: 'error', code: 'invalid_arguments' }),
      ])
      expect(await call(app, 'echo', { text: 'x' })).toMatchObject({ id: 'c-echo', status: 'ok', content: 'x' })
    })

    it('removes the tool when its plugin is disposed; a toolset made before cancels the call', async () => {
      const { app, counts } = await changes({ permissions: false, background: false })
      const alpha = await app.plugin(definer('alpha').plugin)
      const toolset = app.tools.toolset({ session })
      await alpha.dispose()
      expect(app.tools.list()).toEqual([])
      expect(counts).toEqual([1, 0])
      const [result] = await toolset.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"x"}' }])
      expect(result).toMatchObject({ status: 'cancelled', code: 'cancelled', content: 'Cancelled: tool "echo" was unloaded.' })
      await alpha.dispose()
      expect(counts).toEqual([1, 0])
    })

    it('redefines the tool exactly once when its plugin reloads, from the new config', async () => {
      const { app, counts } = await changes({ permissions: false, background: false })
      let applied = 0
      const greeter = {
        name: 'greeter',
        inject: ['tools'],
        Config: Schema.object({ greeting: Schema.string().default('hello') }),
        apply(ctx: PluginContext, config: { greeting: string }) {
          applied++
          ctx.tools.define(defineTool({ name: 'greet', description: 'Greet', traits: { effect: 'read' }, run: () => config.greeting }))
        },
      }
      const loaded = await app.plugin(greeter, { greeting: 'hello' })
      expect((await call(app, 'greet')).content).toBe('hello')
      await loaded.reload({ greeting: 'bonjour' })
      expect(applied).toBe(2)
      expect((await call(app, 'greet')).content).toBe('bonjour')
      expect(counts).toEqual([1, 0, 1])
      expect(app.tools.registry.ownerOf('greet')).toBe('plugin "greeter"')
    })

    it('refuses a name another live plugin holds, naming both plugins; the name is free once its owner is gone', async () => {
      const { app, counts } = await changes({ permissions: false, background: false })
      const alpha = await app.plugin(definer('alpha').plugin)
      const beta = definer('beta')
      app.guard.expect('DoguError: tool "echo" is already defined by plugin "alpha"; plugin "beta" cannot define it too')
      const error = await app.plugin(beta.plugin).then(() => undefined, (reason: unknown) => reason)
      expect(DoguError.is(error, 'NAME_CONFLICT')).toBe(true)
      expect((error as Error).message).toBe('tool "echo" is already defined by plugin "alpha"; plugin "beta" cannot define it too')
      expect(app.tools.registry.ownerOf('echo')).toBe('plugin "alpha"')
      expect(counts).toEqual([1])
      await alpha.dispose()
      await app.plugin(definer('gamma').plugin)
      expect(app.tools.registry.ownerOf('echo')).toBe('plugin "gamma"')
      expect(counts).toEqual([1, 0, 1])
    })

    it('replaces a tool the same plugin redefines; a disposer called twice is harmless', async () => {
      const { app, counts } = await changes({ permissions: false, background: false })
      const louder = defineTool({ name: 'echo', description: 'Louder', traits: { effect: 'read' }, run: () => 'HI' })
      let dispose!: () => void
      await app.plugin({
        name: 'alpha',
        inject: ['tools'],
        apply(ctx: PluginContext) {
          ctx.tools.define(echo)
          dispose = ctx.tools.define(louder)
        },
      })
      expect(app.tools.get('echo')).toBe(louder)
      expect(counts).toEqual([1, 1])
      dispose()
      dispose()
      expect(app.tools.list()).toEqual([])
      expect(counts).toEqual([1, 1, 0])
    })

    it('refuses a definition from a plugin that is already disposed', async () => {
      const app = await apps.app({ permissions: false, background: false })
      let tools!: ToolsApi
      const stale = await app.plugin({ name: 'stale', inject: ['tools'], apply: (ctx: PluginContext) => { tools = ctx.tools } })
      await stale.dispose()
      expect(() => tools.define(echo)).toThrow(expect.objectContaining({ code: 'INACTIVE', message: 'plugin "stale" is no longer active; it cannot define tool "echo"' }))
      expect(app.tools.list()).toEqual([])
    })

    it('emits call-start, call-progress and call-end; a throwing listener breaks no call', async () => {
      const app = await apps.app({ permissions: false, background: false })
      const log: string[] = []
      app.on('tools/call-start', (info: CallInfo) => { log.push(`start ${info.id} ${info.name} ${info.session.id}`) })
      app.on('tools/call-progress', (info: CallInfo, message: string) => { log.push(`progress ${info.id} ${message}`) })
      app.on('tools/call-end', (info: CallInfo, result: ToolResult) => { log.push(`end ${info.id} ${result.status} ${result.content}`) })
      await app.plugin({
        name: 'steps',
        inject: ['tools'],
        apply(ctx: PluginContext) {
          ctx.tools.define(defineTool({
            name: 'steps',
            description: 'Counts to two',
            traits: { effect: 'read' },
            run: (_, call) => {
              call.progress('one')
              call.progress('two')
              return 'done'
            },
          }))
        },
      })
      await app.tools.execute([{ id: 'c1', name: 'steps', arguments: '{}' }, { id: 'c2', name: 'nope' }], { session })
      expect(log).toEqual([
        'start c1 steps s1',
        'progress c1 one',
        'progress c1 two',
        'end c1 ok done',
        'start c2 nope s1',
        'end c2 error Unknown tool "nope". Available tools: steps.',
      ])
      const boom = new Error('listener broke')
      app.guard.expect('Error: listener broke')
      app.on('tools/call-end', () => { throw boom })
      expect(await call(app, 'steps')).toMatchObject({ status: 'ok', content: 'done' })
      expect(app.errors).toContain(boom)
    })
  })
}
