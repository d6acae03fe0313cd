import { describe, expect, it } from 'vitest'
import { stageWorld } from './stage-fixture'

describe('the settle stage', () => {
  it('redacts, then cuts, the result, reports it, and replies once', () => {
    const world = stageWorld(undefined, { redact: { patterns: ['sk-[a-z0-9]+'] } })
    const call = world.call('weather')
    world.settle.end(call, { id: call.id, name: call.name, status: 'ok', content: `key sk-abc123 ${'x'.repeat(400)}`, durationMs: 0 })
    const result = world.ended.get(call)!
    expect(result.content.startsWith('key [redacted] xxx')).toBe(true)
    expect(result.content.length).toBeLessThan(300)
    expect(call.settled).toBe(true)
    expect(world.events.map(([name]) => name)).toEqual(['tools/call-start', 'tools/call-end'])
  })

  it('gives back the quota unit of a call that ends before it ran', () => {
    const world = stageWorld(undefined, { quotas: [{ tools: 'weather', per: 'user', max: 1, window: '1h' }] })
    const first = world.call('weather')
    first.reservation = world.host.quotas.reserve('weather', first.session) as never
    expect(world.host.quotas.reserve('weather', first.session)).toHaveProperty('refused')
    world.settle.end(first, { id: first.id, name: first.name, status: 'denied', content: 'Permission denied: no', durationMs: 0 })
    expect(world.host.quotas.reserve('weather', first.session)).not.toHaveProperty('refused')
  })
})
