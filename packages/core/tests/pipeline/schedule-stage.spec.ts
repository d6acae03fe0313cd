import { describe, expect, it } from 'vitest'
import { defineTool } from '../../src'
import { ScheduleStage } from '../../src/pipeline/schedule-stage'
import { stageWorld, weather, weatherOptions } from './stage-fixture'

const single = defineTool({ ...weatherOptions, name: 'single', traits: { effect: 'read', concurrency: 1 } })

describe('the schedule stage', () => {
  it("makes a call beyond the tool's concurrency wait for the slot", async () => {
    const world = stageWorld([single])
    const stage = new ScheduleStage()
    const first = world.call('single', undefined, 'c1')
    expect(stage.enter(first)).toBeUndefined()
    const waiting = stage.enter(world.call('single', undefined, 'c2'))
    expect(waiting).toBeInstanceOf(Promise)
    first.releaseSlot()
    await expect(waiting).resolves.toBeUndefined()
  })

  it('ends a waiting call cancelled when it is cancelled', async () => {
    const world = stageWorld([single])
    const stage = new ScheduleStage()
    stage.enter(world.call('single', undefined, 'c1'))
    const second = world.call('single', undefined, 'c2')
    const waiting = stage.enter(second)
    second.abort('cancelled', 'the batch was cancelled')
    await expect(waiting).resolves.toMatchObject({ status: 'cancelled', content: 'Cancelled: the batch was cancelled.' })
  })
})
