import { describe, expect, it } from 'vitest'
import { DatabaseTaskStore } from '../src/background'
import type { MinatoDatabase } from '../src/database/minato-database'
import { DoguError } from '../src/errors'
import type { AuthorizeRequest } from '../src/permission-gate'
import { type Grant, type GrantStore, type GrantStoreLoad, PermissionEngine } from '../src/permissions'

// The database stores run against a real minato driver in packages/koishi/tests/database-stores.spec.ts;
// here, what the engines do with a store several instances share.

const request: AuthorizeRequest = {
  session: { id: 's1', userId: 'u1', platform: 'discord' },
  permission: { name: 'deploy:run', target: 'prod' },
  effect: 'exec',
  tool: 'deploy',
  args: { env: 'prod' },
}

/** A shared grant table: `add`/`remove` per grant, as `DatabaseGrantStore` has. Records every call. */
class SharedStore implements GrantStore {
  calls: string[] = []
  constructor(readonly rows: Map<string, Grant> = new Map()) {}
  async load(): Promise<GrantStoreLoad> {
    this.calls.push('load')
    return { grants: [...this.rows.values()] }
  }
  async save(): Promise<void> {
    this.calls.push('save')
  }
  async add(grant: Grant): Promise<void> {
    this.calls.push(`add ${grant.id}`)
    this.rows.set(grant.id, grant)
  }
  async remove(grant: Grant): Promise<void> {
    this.calls.push(`remove ${grant.id}`)
    this.rows.delete(grant.id)
  }
}

async function engineOn(store: GrantStore) {
  const engine = new PermissionEngine({ store })
  await engine.ready
  engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: { id: 'u1', platform: 'discord' } }))
  return engine
}

describe('a grant store shared by instances', () => {
  it('gets single adds and removes, never a snapshot over rows it has not seen', async () => {
    const rows = new Map<string, Grant>()
    const a = new SharedStore(rows)
    const b = new SharedStore(rows)
    const one = await engineOn(a)
    const two = await engineOn(b)
    await one.approve({ ...request, callId: 'c1' })
    const [grant] = one.grants()
    await one.refreshGrants()
    expect(a.calls).toEqual(['load', `add ${grant.id}`, 'load'])
    expect(two.authorize(request).decision).toBe('ask')
    await two.refreshGrants()
    expect(two.authorize(request)).toMatchObject({ decision: 'allow', reason: `a remembered "always" approval by discord:u1 allows it (${grant.id})` })
    expect(two.revoke(grant.id)).toBe(true)
    await two.refreshGrants()
    expect(b.calls).toEqual(['load', 'load', `remove ${grant.id}`, 'load'])
    expect(one.authorize(request).decision).toBe('allow')
    await one.refreshGrants()
    expect(one.authorize(request).decision).toBe('ask')
    expect(one.grants()).toEqual([])
  })

  it('does not apply a read that raced a local grant (the next refresh does)', async () => {
    const rows = new Map<string, Grant>()
    let release: (() => void) | undefined
    const store = new SharedStore(rows)
    const engine = await engineOn(store)
    const load = store.load.bind(store)
    store.load = async () => {
      const result = await load()
      await new Promise<void>((resolve) => { release = resolve })
      return result
    }
    const refreshing = engine.refreshGrants()
    // The read has happened (without the grant below) and waits to be released.
    for (let i = 0; !release; i++) {
      if (i > 100) throw new Error('the refresh never read the store')
      await Promise.resolve()
    }
    await engine.approve({ ...request, callId: 'c1' })
    release!()
    await refreshing
    expect(engine.authorize(request).decision).toBe('allow')
  })

  it('keeps the grants it has when the store cannot be read, and says so', async () => {
    const warnings: string[] = []
    const store = new SharedStore()
    const engine = new PermissionEngine({ store, logger: { debug() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' ')) } })
    await engine.ready
    engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: 'u1' }))
    await engine.approve({ ...request, callId: 'c1' })
    store.load = async () => { throw new Error('connection refused') }
    await engine.refreshGrants()
    expect(engine.authorize(request).decision).toBe('allow')
    expect(warnings).toEqual(['could not refresh grants: %s connection refused'])
  })

  it('a host that is stopping skips the read, and a read that fails as it stops is not blamed', async () => {
    const warnings: string[] = []
    const store = new SharedStore()
    const engine = new PermissionEngine({ store, logger: { debug() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' ')) } })
    await engine.ready
    let reads = 0
    store.load = async () => {
      reads++
      active = false
      throw new Error('Pool is closed.')
    }
    let active = false
    await engine.refreshGrants(() => active)
    expect(reads).toBe(0)
    // Active when the read starts; the app stops (its driver closes the pool) during it.
    active = true
    await engine.refreshGrants(() => active)
    expect(reads).toBe(1)
    expect(warnings).toEqual([])
  })
})

describe('DatabaseTaskStore options', () => {
  const database = {} as MinatoDatabase

  it('needs an instance id of at most 255 characters and a lease of 1 ms or more', () => {
    expect(() => new DatabaseTaskStore({ database, instanceId: '' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'DatabaseTaskStore needs an instanceId' }))
    expect(() => new DatabaseTaskStore({ database, instanceId: 'a', leaseMs: 0 })).toThrow(DoguError)
    expect(() => new DatabaseTaskStore({ database, instanceId: 'a', leaseMs: Infinity })).toThrow('leaseMs must be a finite number of milliseconds, 1 or more (got null)')
    expect(() => new DatabaseTaskStore({ database, instanceId: 'x'.repeat(256) })).toThrow('instanceId is 256 characters long; at most 255 fit the owner column')
    expect(new DatabaseTaskStore({ database, instanceId: 'x'.repeat(255) }).leaseMs).toBe(30_000)
  })
})
