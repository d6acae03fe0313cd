import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { eventEmitter, listenerTable, unproxiedEvents } from '../src/cordis-events'

// `eventEmitter` reads two Cordis internals for speed: `symbols.original` (the events
// service behind its tracing proxy) and `_hooks` (its listener lists). These tests fail
// the day Cordis changes either, instead of the runtime silently getting slower or, worse,
// skipping events somebody listens to.

async function app() {
  const root = new Context()
  guardLogs(root)
  await root.plugin(() => {})
  return root
}

describe('eventEmitter: the Cordis internals it reads', () => {
  it('finds the events service behind the context proxy, and its listener table', async () => {
    const root = await app()
    const events = unproxiedEvents(root)
    expect(events).not.toBe(root.events)
    expect(typeof events.emit).toBe('function')
    expect(listenerTable(events)).toBeTypeOf('object')
  })

  it('sees a listener in the table from ctx.on until its disposal', async () => {
    const root = await app()
    const table = listenerTable(unproxiedEvents(root))!
    const before = table['tools/call-end']?.length ?? 0
    const off = root.on('tools/call-end', () => {})
    expect(table['tools/call-end']).toHaveLength(before + 1)
    off()
    expect(table['tools/call-end']).toHaveLength(before)
  })

  it('sees a listener of a child plugin, and loses it when that plugin is disposed', async () => {
    const root = await app()
    const table = listenerTable(unproxiedEvents(root))!
    const fiber = root.plugin((ctx: Context) => {
      ctx.on('permissions/decision', () => {})
    })
    await fiber
    expect(table['permissions/decision']).toHaveLength(1)
    await fiber.dispose()
    expect(table['permissions/decision'] ?? []).toHaveLength(0)
  })
})

describe('eventEmitter', () => {
  it('delivers to every listener, with the arguments, including listeners added after it was made', async () => {
    const root = await app()
    const emit = eventEmitter(root)
    const seen: unknown[][] = []
    root.on('tools/call-end', (...args: unknown[]) => { seen.push(['a', ...args]) })
    await root.plugin((ctx: Context) => {
      ctx.on('tools/call-end', (...args: unknown[]) => { seen.push(['b', ...args]) })
    })
    emit('tools/call-end', { id: 'c1' }, 2)
    expect(seen).toEqual([['a', { id: 'c1' }, 2], ['b', { id: 'c1' }, 2]])
  })

  it('skips an event nobody listens to without dispatching it through Cordis', async () => {
    const root = await app()
    const emit = eventEmitter(root)
    const dispatched: string[] = []
    root.on('internal/dispatch', (_type: string, name: string) => { dispatched.push(name) })
    expect(emit.listens('tools/call-start')).toBe(false)
    emit('tools/call-start', {})
    expect(dispatched).toEqual([])
    const off = root.on('tools/call-start', () => {})
    expect(emit.listens('tools/call-start')).toBe(true)
    emit('tools/call-start', {})
    expect(dispatched).toEqual(['tools/call-start'])
    off()
    expect(emit.listens('tools/call-start')).toBe(false)
  })

  it('never throws: a throwing listener becomes an internal/error event', async () => {
    const root = await app()
    const emit = eventEmitter(root)
    const errors: unknown[] = []
    const boom = new Error('listener broke')
    guardLogs(root).expect('[app] Error: listener broke')
    root.on('internal/error', (error: unknown) => { errors.push(error) })
    root.on('tools/call-end', () => { throw boom })
    expect(() => emit('tools/call-end', {})).not.toThrow()
    expect(errors).toEqual([boom])
  })
})
