import { App, type Context, Service } from 'koishi'
import { describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { eventEmitter, listenerTable, unproxiedLifecycle } from '../src/koishi-events'

// The Koishi host leans on cordis 3 facts no documentation promises: the listener table,
// the traced `this.ctx`, and the order in which disposers run. This file fails the day one
// changes.

class Provider extends Service {
  constructor(ctx: Context) {
    super(ctx, 'provided', true)
  }

  protected override start() {
    this.ctx.effect(() => () => { log.push('provider: disposer added in start()') })
  }

  whoCalls(this: Provider) {
    return this.ctx.name
  }
}

declare module 'koishi' {
  interface Context {
    provided: Provider
  }
}

let log: string[] = []

const dependent = (name: string) => ({
  name,
  inject: ['provided'],
  apply(ctx: Context) {
    ctx.on('dispose', () => { log.push(`${name}: disposed`) })
  },
})

async function app() {
  log = []
  const root = new App()
  guardLogs(root)
  await root.start()
  return root
}

describe('cordis 3 internals the Koishi host reads', () => {
  it('the lifecycle behind its proxy keeps listeners by event name', async () => {
    const root = await app()
    const lifecycle = unproxiedLifecycle(root)
    expect(lifecycle).not.toBe(root.lifecycle)
    const table = listenerTable(lifecycle)!
    expect(table['dogu/test']).toBeUndefined()
    const emit = eventEmitter(root)
    expect(emit.listens('dogu/test')).toBe(false)
    const seen: unknown[] = []
    const dispose = root.on('dogu/test' as any, (value: unknown) => { seen.push(value) })
    expect(table['dogu/test']).toHaveLength(1)
    expect(emit.listens('dogu/test')).toBe(true)
    emit('dogu/test', 1)
    dispose()
    expect(emit.listens('dogu/test')).toBe(false)
    emit('dogu/test', 2)
    expect(seen).toEqual([1])
  })

  it('a service method sees the calling plugin as this.ctx, and so does a method added to Koishi\'s permissions', async () => {
    const root = await app()
    root.plugin(Provider)
    const raw = (root.permissions as any)[Symbol.for('cordis.original')]
    raw.whoCalls = function (this: { ctx: Context }) { return this.ctx.name }
    const names: string[] = []
    root.plugin({ name: 'caller', inject: ['provided'], apply: (ctx: Context) => { names.push(ctx.provided.whoCalls(), (ctx.permissions as any).whoCalls()) } })
    await root.lifecycle.flush()
    expect(names).toEqual(['caller', 'caller'])
    delete raw.whoCalls
  })

  it('withdrawing a service: a prepended internal/before-service listener first, then its dependents, then its start() disposers', async () => {
    const root = await app()
    const provider = root.plugin(Provider)
    root.plugin(dependent('first'))
    root.plugin({
      name: 'watcher',
      apply(ctx: Context) {
        ctx.on('internal/before-service', (name, value) => {
          if (name === 'provided' && value == null) log.push('watcher: before-service')
        }, true)
      },
    })
    root.plugin(dependent('second'))
    await root.lifecycle.flush()
    provider.dispose()
    expect(log).toEqual(['watcher: before-service', 'first: disposed', 'second: disposed', 'provider: disposer added in start()'])
  })

  it('an app stop: a dispose listener prepended on the root runs before any plugin is disposed', async () => {
    const root = await app()
    root.plugin(Provider)
    root.plugin(dependent('first'))
    root.plugin({
      name: 'watcher',
      apply(ctx: Context) {
        ctx.effect(() => ctx.root.on('dispose', () => { log.push('watcher: app stops') }, true))
      },
    })
    await root.lifecycle.flush()
    await root.stop()
    expect(log[0]).toBe('watcher: app stops')
    expect(log).toContain('first: disposed')
  })
})
