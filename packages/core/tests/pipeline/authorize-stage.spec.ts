import { describe, expect, it } from 'vitest'
import { defineTool } from '../../src'
import { AuthorizeStage } from '../../src/pipeline/authorize-stage'
import { LimitsStage } from '../../src/pipeline/limits-stage'
import { PermissionEngine } from '../../src/permissions'
import { stageWorld, weather, weatherOptions } from './stage-fixture'

const deploy = defineTool({ ...weatherOptions, name: 'deploy', traits: { effect: 'exec' } })

function authorize(world: ReturnType<typeof stageWorld>) {
  return new AuthorizeStage(world.shared, new LimitsStage(world.shared))
}

describe('the authorize stage', () => {
  it('passes a read-only call on at once, without a promise, when no permission service is loaded', () => {
    const world = stageWorld([weather, deploy])
    expect(authorize(world).enter(world.call('weather'))).toBeUndefined()
  })

  it('ends any other call when no permission service is loaded', () => {
    const world = stageWorld([weather, deploy])
    expect(authorize(world).enter(world.call('deploy'))).toMatchObject({
      status: 'denied',
      code: 'no_permission_service',
      content: 'Permission denied: no permission service is loaded, so only read-only tools may run ("deploy" has effect "exec").',
    })
  })

  it('passes a call a rule allows on at once, and ends one a rule denies', async () => {
    const world = stageWorld([weather, deploy])
    world.host.permissions = new PermissionEngine({ rules: [{ permission: 'tool:weather', decision: 'allow' }, { permission: 'tool:deploy', decision: 'deny' }] })
    const stage = authorize(world)
    expect(stage.enter(world.call('weather'))).toBeUndefined()
    await expect(stage.enter(world.call('deploy'))).resolves.toMatchObject({ status: 'denied', code: 'permission_denied', content: expect.stringMatching(/^Permission denied: /) })
  })

  it('ends the call when the permission check throws', () => {
    const world = stageWorld([weather, deploy])
    world.host.permissions = { authorize: () => { throw new Error('store gone') }, approve: async () => ({ decision: 'deny' }) } as never
    expect(authorize(world).enter(world.call('deploy'))).toMatchObject({ status: 'denied', content: 'Permission denied: the permission check failed: store gone' })
  })
})
