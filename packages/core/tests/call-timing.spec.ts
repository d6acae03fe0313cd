import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defineTool, ToolRegistry } from '../src'
import { PermissionEngine } from '../src/permissions'

// The clock is frozen (only Date is faked) and moved by hand, so the figures are exact: a
// person takes 5 s to answer, the tool 7 ms to run.
const ANSWER_MS = 5000
const RUN_MS = 7

function setup() {
  const engine = new PermissionEngine()
  engine.addAsker(async () => {
    vi.setSystemTime(Date.now() + ANSWER_MS)
    return { decision: 'allow', by: 'u1' }
  })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const tick = () => vi.setSystemTime(Date.now() + RUN_MS)
  registry.define(defineTool({ name: 'write', description: 'Write', traits: { effect: 'write' }, run: () => { tick(); return 'ok' } }))
  registry.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => { tick(); return 'ok' } }))
  registry.define(defineTool({
    name: 'careful',
    description: 'Asks from inside its run',
    traits: { effect: 'read' },
    run: async (_, call) => {
      tick()
      await call.ask('it wants to be sure')
      tick()
      return 'ok'
    },
  }))
  return registry.toolset({ session: { id: 's1', userId: 'u1' } })
}

describe('durationMs is the tool\'s own time; waitMs the time a person took', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-12-01T12:00:00Z'))
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('an approved call: durationMs leaves out the approval, waitMs holds it', async () => {
    const [result] = await setup().execute([{ id: 'c1', name: 'write', arguments: {} }])
    expect(result).toMatchObject({ status: 'ok', durationMs: RUN_MS, waitMs: ANSWER_MS })
  })

  it('a call nobody was asked about has no waitMs', async () => {
    const [result] = await setup().execute([{ id: 'c1', name: 'read', arguments: {} }])
    expect(result.durationMs).toBe(RUN_MS)
    expect(result).not.toHaveProperty('waitMs')
  })

  it('a call.ask inside the run is waiting too, not running', async () => {
    const [result] = await setup().execute([{ id: 'c1', name: 'careful', arguments: {} }])
    expect(result).toMatchObject({ status: 'ok', durationMs: 2 * RUN_MS, waitMs: ANSWER_MS })
  })
})
