import { describe, expect, it } from 'vitest'
import { defineTool } from '../../src'
import { MiddlewareStage } from '../../src/pipeline/middleware-stage'
import { RunStage } from '../../src/pipeline/run-stage'
import { stageWorld, weather, weatherOptions } from './stage-fixture'

function run(world: ReturnType<typeof stageWorld>) {
  return new RunStage(world.shared, new MiddlewareStage(world.shared, world.settle), world.settle)
}

describe('the run stage', () => {
  it("keeps the call and settles it with the handler's result", () => {
    const world = stageWorld()
    const call = world.call('weather')
    expect(run(world).enter(call)).toBeUndefined()
    expect(world.ended.get(call)).toMatchObject({ status: 'ok', content: 'Paris: sunny' })
  })

  it('ends a call of a tool unloaded before it ran cancelled', () => {
    const world = stageWorld()
    const call = world.call('weather')
    world.entries.get('weather')!.disposed = true
    expect(run(world).enter(call)).toMatchObject({ status: 'cancelled', content: 'Cancelled: tool "weather" was unloaded.' })
  })

  it('aborts a call past its deadline timed_out, naming the timeout', () => {
    const slow = defineTool({ ...weatherOptions, name: 'slow', traits: { effect: 'read', timeout: 5_000 }, run: () => new Promise(() => {}) })
    const world = stageWorld([slow])
    const call = world.call('slow')
    const stage = run(world)
    stage.enter(call)
    // What the running calls' timer calls when the deadline passes.
    stage.expired(call)
    expect(call.signal.aborted).toBe(true)
    expect([call.abortKind, call.abortMessage]).toEqual(['timed_out', 'timed out after 5s'])
  })
})
