import { Context, type Fiber, Service } from 'cordis'
import { describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'

// The background service stops its tasks the moment something it stands on begins to stop,
// before Cordis disposes any plugin (see `onStopping` in src/background-service.ts). That
// reads Cordis facts no documentation promises; this file fails the day one changes.

/** Cordis' `FiberState.UNLOADING`: a const enum its typings do not let isolated modules read. */
const UNLOADING = 5

class Provider extends Service {
  constructor(ctx: Context) {
    super(ctx, 'provided')
  }
}

declare module 'cordis' {
  interface Context {
    provided: Provider
  }
}

/** An app whose plugins log their cleanups, with a watcher that logs every fiber entering UNLOADING. */
async function app() {
  const root = new Context()
  guardLogs(root)
  const log: string[] = []
  const fibers = new Map<Fiber, string>([[root.fiber, 'root']])
  const named = (name: string, extra: object = {}) => ({
    name,
    ...extra,
    apply(ctx: Context) {
      fibers.set(ctx.fiber, name)
      ctx.effect(() => () => { log.push(`cleanup ${name}`) }, name)
    },
  })
  let watcher!: Fiber
  await root.plugin({
    name: 'watcher',
    apply(ctx: Context) {
      watcher = ctx.fiber
      ctx.on('internal/status', (fiber) => {
        if (fiber.state === UNLOADING) log.push(`unloading ${fibers.get(fiber) ?? fiber.name}`)
      })
    },
  })
  const provider = await root.plugin(Provider)
  fibers.set(provider, 'provider')
  const group = await root.plugin({
    name: 'group',
    async apply(ctx: Context) {
      fibers.set(ctx.fiber, 'group')
      await ctx.plugin(named('inner'))
    },
  })
  const dependent = await root.plugin(named('dependent', { inject: ['provided'] }))
  await root.plugin(named('last'))
  log.length = 0
  return { root, log, watcher, provider, group, dependent }
}

describe('Cordis lifecycle facts the background service relies on', () => {
  it('root.fiber.dispose(): the root enters UNLOADING before any plugin is cleaned up', async () => {
    const { root, log } = await app()
    await root.fiber.dispose()
    expect(log[0]).toBe('unloading root')
    expect(log.filter((line) => line.startsWith('cleanup')).sort()).toEqual(['cleanup dependent', 'cleanup inner', 'cleanup last'])
  })

  it('a plugin\'s dispose or update: it enters UNLOADING before the plugins it loaded are cleaned up', async () => {
    const { log, group } = await app()
    await group.dispose()
    expect(log).toEqual(['unloading group', 'unloading inner', 'cleanup inner'])

    const again = await app()
    again.group.update({})
    await again.group.await()
    expect(again.log).toEqual(['unloading group', 'unloading inner', 'cleanup inner'])
  })

  it('a provider\'s dispose: it enters UNLOADING before the plugins injecting its service are cleaned up; they find it in fiber.store', async () => {
    const { log, provider, dependent } = await app()
    expect(dependent.store?.provided?.fiber).toBe(provider)
    await provider.dispose()
    expect(log).toEqual(['unloading provider', 'unloading dependent', 'cleanup dependent'])
  })

  it('fiber.parent.fiber leads to the root, whose own parent fiber is itself', async () => {
    const { root, group } = await app()
    const inner = [...root.registry.values()].find((runtime) => runtime.name === 'inner')!.fibers
    const [innerFiber] = [...inner]
    expect(innerFiber.parent.fiber).toBe(group)
    expect(group.parent.fiber).toBe(root.fiber)
    expect(root.fiber.parent.fiber).toBe(root.fiber)
  })
})
