import { format } from 'node:util'
import { describe, expect, it } from 'vitest'
import { type Grant, type GrantStore, PermissionEngine } from '../src/permissions'

/** A store whose read fails; `goneFirst`: its database stops during the read, as an app stopping with the driver first does. */
function failingStore(goneFirst: boolean): GrantStore & { gone?: string } {
  const store: GrantStore & { gone?: string } = {
    load: async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      if (goneFirst) store.gone = 'the database stopped'
      throw new TypeError('Cannot read properties of undefined (reading \'model\')')
    },
    save: async (_grants: readonly Grant[]) => {},
  }
  return store
}

describe('a grant store that goes while the engine reads it', () => {
  it('is not reported as a problem of the grants when it went during the read', async () => {
    const warnings: string[] = []
    const engine = new PermissionEngine({ logger: { debug() {}, warn: (text, ...args) => warnings.push(format(text, ...args)) } })
    await engine.useStore(failingStore(true))
    expect(warnings).toEqual([])
    await engine.stop()
  })

  it('is reported when it failed while still in use', async () => {
    const warnings: string[] = []
    const engine = new PermissionEngine({ logger: { debug() {}, warn: (text, ...args) => warnings.push(format(text, ...args)) } })
    await engine.useStore(failingStore(false))
    expect(warnings).toEqual(['could not load grants from the new store: Cannot read properties of undefined (reading \'model\')'])
    await engine.stop()
  })
})
