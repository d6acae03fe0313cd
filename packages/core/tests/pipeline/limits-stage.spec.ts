import { describe, expect, it } from 'vitest'
import { LimitsStage } from '../../src/pipeline/limits-stage'
import { stageWorld } from './stage-fixture'

describe('the limits stage', () => {
  it('passes every call on at once when no quota or cap is configured', () => {
    const world = stageWorld()
    const stage = new LimitsStage(world.shared)
    expect(stage.enter(world.call('weather'))).toBeUndefined()
    expect(stage.enter(world.call('weather'))).toBeUndefined()
  })

  it('ends a call over its quota rate_limited, with when to retry', () => {
    const world = stageWorld(undefined, { quotas: [{ tools: 'weather', per: 'user', max: 1, window: '1h' }] })
    const stage = new LimitsStage(world.shared)
    expect(stage.enter(world.call('weather'))).toBeUndefined()
    const refused = stage.enter(world.call('weather'))
    expect(refused).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
    expect((refused as { retryAfterMs?: number }).retryAfterMs).toBeGreaterThan(0)
  })

  it('makes a call beyond maxRunning wait until a place is given back', async () => {
    const world = stageWorld(undefined, { maxRunning: { session: 1 } })
    const stage = new LimitsStage(world.shared)
    const first = world.call('weather', undefined, 'c1')
    expect(stage.enter(first)).toBeUndefined()
    const waiting = stage.enter(world.call('weather', undefined, 'c2'))
    expect(waiting).toBeInstanceOf(Promise)
    first.releaseSlot()
    await expect(waiting).resolves.toBeUndefined()
  })
})
