import { describe, expect, it } from 'vitest'
import { MiddlewareStage } from '../../src/pipeline/middleware-stage'
import { stageWorld } from './stage-fixture'

describe('the middleware stage', () => {
  it('leaves a call no middleware matches to the run stage', () => {
    const world = stageWorld()
    expect(new MiddlewareStage(world.shared, world.settle).wrap(world.call('weather'))).toBe(false)
  })

  it('settles a call with an error naming a middleware whose result has no content', async () => {
    const world = stageWorld()
    world.host.use(() => ({ status: 'ok' }) as never, { name: 'broken' })
    const call = world.call('weather')
    expect(new MiddlewareStage(world.shared, world.settle).wrap(call)).toBe(true)
    await expect.poll(() => world.ended.get(call)).toMatchObject({ status: 'error', code: 'middleware_error' })
    expect(world.ended.get(call)!.content).toMatch(/^Error: .*broken.* failed: it returned a result without a content string$/)
  })
})
