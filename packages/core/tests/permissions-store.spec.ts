import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuthorizeRequest } from '../src/permission-gate'
import { type GrantStore, JsonFileGrantStore, MemoryGrantStore, PermissionEngine } from '../src/permissions'

const request: AuthorizeRequest = {
  session: { id: 's1', userId: 'u1', platform: 'discord' },
  permission: { name: 'deploy:run', target: 'prod' },
  effect: 'exec',
  tool: 'deploy',
  args: { env: 'prod' },
}

let dir: string
let file: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-grants-'))
  file = join(dir, 'data', 'permissions.json')
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

function start(store: GrantStore = new JsonFileGrantStore(file)) {
  const warnings: string[] = []
  const engine = new PermissionEngine({ store, logger: { debug() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' ')) } })
  return { engine, warnings }
}

describe('grants that persist', () => {
  it('keeps an always grant across a restart, for the same user in any session, until revoked', async () => {
    const first = start()
    await first.engine.ready
    first.engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: { id: 'u1', platform: 'discord' } }))
    expect(await first.engine.approve({ ...request, callId: 'c1' })).toEqual({ decision: 'allow', reason: 'approved by discord:u1 (always)', rule: expect.objectContaining({ kind: 'answer', scope: 'always' }) })
    await first.engine.stop()
    const stored = JSON.parse(await readFile(file, 'utf8'))
    expect(stored).toMatchObject({ version: 1, grants: [{ scope: 'always', subject: { userId: 'u1', platform: 'discord' }, permission: 'deploy:run', target: 'prod', by: 'discord:u1' }] })

    const second = start()
    await second.engine.ready
    expect(second.warnings).toEqual([])
    const otherSession = { ...request, session: { ...request.session, id: 's9' } }
    expect(second.engine.authorize(otherSession)).toMatchObject({ decision: 'allow', rule: { kind: 'grant', grant: { id: stored.grants[0].id } } })
    expect(second.engine.authorize({ ...request, session: { ...request.session, userId: 'u2' } }).decision).toBe('ask')
    expect(second.engine.authorize({ ...request, session: { ...request.session, platform: 'qq' } }).decision).toBe('ask')
    expect(second.engine.revoke(stored.grants[0].id)).toBe(true)
    await second.engine.stop()
    expect(JSON.parse(await readFile(file, 'utf8')).grants).toEqual([])
    // Atomic writes leave no temporary files behind.
    expect(await readdir(join(dir, 'data'))).toEqual(['permissions.json'])

    const third = start()
    await third.engine.ready
    expect(third.engine.authorize(request).decision).toBe('ask')
  })

  it('never persists session grants', async () => {
    const { engine } = start()
    engine.addAsker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
    await engine.approve({ ...request, callId: 'c1' })
    expect(engine.grants()).toHaveLength(1)
    await engine.stop()
    const next = start()
    await next.engine.ready
    expect(next.engine.grants()).toEqual([])
  })

  it.each([
    ['not JSON', '{"version": 1, "grants": [', 'it is not valid JSON'],
    ['an empty file', '', 'it is not valid JSON'],
    ['another shape', '{"allow": "everything"}', 'it is not a version 1 grant store'],
    ['a malformed grant', JSON.stringify({ version: 1, grants: [{ id: 'g1', scope: 'always', subject: {}, permission: '*', tool: 'x', by: 'u', createdAt: 1 }] }), 'grants[0] is malformed'],
  ])('moves a corrupt store (%s) aside, reports it and applies none of it', async (_, content, why) => {
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(dir, 'data'))
    await writeFile(file, content)
    const { engine, warnings } = start()
    await engine.ready
    expect(engine.storeProblem?.message).toContain(why)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`the grant store ${file} is corrupt: ${why}`)
    expect(warnings[0]).toContain(`it was moved to ${file}.corrupt-`)
    const files = await readdir(join(dir, 'data'))
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^permissions\.json\.corrupt-\d+$/)
    expect(await readFile(join(dir, 'data', files[0]), 'utf8')).toBe(content)
    expect(engine.grants()).toEqual([])
    expect(engine.authorize(request).decision).toBe('ask')
    // The engine keeps working and writes a fresh store.
    engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: 'u1' }))
    await engine.approve({ ...request, callId: 'c1' })
    await engine.stop()
    expect(JSON.parse(await readFile(file, 'utf8')).grants).toHaveLength(1)
  })

  it('keeps only known fields of stored grants', async () => {
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(dir, 'data'))
    const grant = { id: 'g1', scope: 'always', subject: { userId: 'u1', platform: 'discord', admin: true }, permission: 'deploy:run', target: 'prod', tool: 'deploy', by: 'u1', createdAt: 1, extra: 'x' }
    await writeFile(file, JSON.stringify({ version: 1, grants: [grant] }))
    const { engine } = start()
    await engine.ready
    expect(engine.grants()).toEqual([{ id: 'g1', scope: 'always', subject: { userId: 'u1', platform: 'discord' }, permission: 'deploy:run', target: 'prod', tool: 'deploy', by: 'u1', createdAt: 1 }])
  })

  it('reads after writes still in flight from an engine that is stopping (a reload)', async () => {
    const first = start()
    await first.engine.ready
    first.engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: 'u1' }))
    await first.engine.approve({ ...request, callId: 'c1' })
    // Not awaited: the write is still in flight when the next engine loads.
    void first.engine.stop()
    const second = start()
    await second.engine.ready
    expect(second.engine.authorize(request).decision).toBe('allow')
  })

  it('forgets always grants on restart with the memory store (the default)', async () => {
    const store = new MemoryGrantStore()
    const { engine } = start(store)
    engine.addAsker(async () => ({ decision: 'allow', scope: 'always', by: 'u1' }))
    await engine.approve({ ...request, callId: 'c1' })
    await engine.stop()
    expect((await store.load()).grants).toHaveLength(1)
    expect(new PermissionEngine().grants()).toEqual([])
  })
})
