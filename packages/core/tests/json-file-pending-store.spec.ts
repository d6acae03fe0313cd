// The JSON-file pending store under a burst (a bot asked many questions at once, answers
// arriving meanwhile): changes asked while a write is on disk are applied together, in the
// order asked, and each settles with the write that carries it. The store's contract alone
// is durable-permissions-stores.spec.ts. The atomic write is wrapped to count the writes and
// to make one fail (the suite runs as root, whom no folder mode refuses).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it, vi } from 'vitest'
import { JsonFilePendingStore, type PendingRecord } from '../src/permissions'

const disk = vi.hoisted(() => ({ writes: 0, failing: undefined as Error | undefined }))
vi.mock('../src/write-file-atomically', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/write-file-atomically')>()
  return {
    writeFileAtomically: async (...args: Parameters<typeof original.writeFileAtomically>) => {
      disk.writes++
      if (disk.failing) throw disk.failing
      return original.writeFileAtomically(...args)
    },
  }
})

let dir: string | undefined
afterEach(async () => {
  disk.failing = undefined
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

function record(id: string): PendingRecord {
  return {
    id,
    callId: `call-${id}`,
    tool: 'save',
    args: { note: id },
    permission: { name: 'tool:save' },
    effect: 'write',
    summary: `save(note=${id})`,
    reason: 'write tools need approval by default',
    session: { id: 'mock:room', userId: 'alice', channelId: 'room', platform: 'mock' },
    approvers: { userId: 'alice', platform: 'mock' },
    createdAt: Number(id.slice(1)),
    expiresAt: Date.now() + 600_000,
    instance: 'a',
  }
}

it('a burst of puts, removes and racing claims, all asked at once, ends as if applied one by one in the order asked', async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-pending-burst-'))
  const path = join(dir, 'pending.json')
  const store = new JsonFilePendingStore(path)
  disk.writes = 0
  const ids = Array.from({ length: 300 }, (_, i) => `r${i}`)
  const puts = ids.map((id) => store.put(record(id)))
  // Asked after the puts, before any of them is on disk: each sees the puts before it.
  const removes = ids.filter((_, i) => i % 3 === 0).map((id) => store.remove(id))
  const claims = ids.slice(0, 20).flatMap((id) => [store.claim(id, 'a', 'mock:alice'), store.claim(id, 'b', 'mock:bob')])
  await Promise.all([...puts, ...removes])
  const won = await Promise.all(claims)
  // 440 changes asked in one tick: one read, one write (the old store wrote 440 times).
  expect(disk.writes).toBe(1)

  // Each claim pair: the first asked wins, unless its request was removed (every third).
  ids.slice(0, 20).forEach((id, i) => {
    expect([won[2 * i], won[2 * i + 1]]).toEqual(i % 3 === 0 ? [false, false] : [true, false])
  })
  const open = ids.filter((_, i) => i % 3 !== 0 && i >= 20)
  const { records, bad } = await new JsonFilePendingStore(path).load()
  expect(bad).toEqual([])
  expect(records.map((entry) => entry.id)).toEqual(open)
  const claimed = await store.get('r1')
  expect(claimed).toMatchObject({ claimedBy: 'a', claimedFor: 'mock:alice' })
  const onDisk = JSON.parse(await readFile(path, 'utf8')) as { requests: PendingRecord[] }
  expect(onDisk.requests).toHaveLength(300 - 100)
})

it('a write that fails fails every change it carried (a change that changed nothing keeps its answer), and a change asked after it is written', async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-pending-fail-'))
  const path = join(dir, 'pending.json')
  const store = new JsonFilePendingStore(path)
  await store.put(record('r0'))
  disk.failing = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  const results = await Promise.allSettled([store.put(record('r1')), store.put(record('r2')), store.remove('r0'), store.remove('r9'), store.claim('r9', 'a', 'mock:alice')])
  expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled'])
  expect(String((results[0] as PromiseRejectedResult).reason)).toContain('ENOSPC')
  expect((results[4] as PromiseFulfilledResult<boolean>).value).toBe(false)
  disk.failing = undefined
  expect((await store.load()).records.map((entry) => entry.id)).toEqual(['r0'])
  await store.put(record('r3'))
  expect((await store.load()).records.map((entry) => entry.id)).toEqual(['r0', 'r3'])
})
