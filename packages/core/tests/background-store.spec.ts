import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BackgroundEngine } from '../src/background/background-engine'
import type { BackgroundTask } from '../src/background/background-task'
import { JsonFileTaskStore } from '../src/background/json-file-task-store'
import { flush, memoryLogger, runningCall } from './background-helpers'

let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-background-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const record = (id: string, extra: Partial<BackgroundTask> = {}): BackgroundTask =>
  ({ id, tool: 'slow', callId: `call_${id}`, session: { id: 's1' }, status: 'succeeded', startedAt: 1, settledAt: 2, ...extra })

describe('JsonFileTaskStore', () => {
  it('creates its data directory and round-trips records through a new instance', async () => {
    const path = join(dir, 'nested', 'data', 'tasks.json')
    const store = new JsonFileTaskStore(path)
    expect(await store.load()).toEqual([])
    await store.put(record('a'))
    await store.put(record('b', { status: 'running', settledAt: undefined }))
    await store.delete(['a', 'missing'])
    const again = new JsonFileTaskStore(path)
    expect(await again.load()).toEqual([{ id: 'b', tool: 'slow', callId: 'call_b', session: { id: 's1' }, status: 'running', startedAt: 1 }])
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1, tasks: [{ id: 'b' }] })
    // Atomic writes leave no temporary files behind.
    expect(await readdir(join(dir, 'nested', 'data'))).toEqual(['tasks.json'])
  })

  it('coalesces many unawaited writes, applying them in call order', async () => {
    const path = join(dir, 'tasks.json')
    const store = new JsonFileTaskStore(path)
    await store.load()
    const writes: Promise<void>[] = []
    for (let i = 0; i < 50; i++) writes.push(store.put(record(`t${i}`, { startedAt: i })))
    writes.push(store.delete(['t0']))
    writes.push(store.put(record('t1', { status: 'failed' })))
    await store.flush()
    await Promise.all(writes)
    const loaded = await new JsonFileTaskStore(path).load()
    expect(loaded).toHaveLength(49)
    expect(loaded.find((task) => task.id === 't1')!.status).toBe('failed')
    expect(loaded.some((task) => task.id === 't0')).toBe(false)
  })

  it('refuses writes before load(), which would replace the file with only the new records', async () => {
    const store = new JsonFileTaskStore(join(dir, 'tasks.json'))
    expect(() => store.put(record('a'))).toThrow(expect.objectContaining({ code: 'INACTIVE' }))
    expect(() => new JsonFileTaskStore('')).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
  })

  it('moves a corrupted file aside, reports it, and starts empty', async () => {
    const path = join(dir, 'tasks.json')
    await writeFile(path, '{"version":1,"tasks":[{"id"')
    const { lines, logger } = memoryLogger()
    const store = new JsonFileTaskStore(path, { logger })
    expect(await store.load()).toEqual([])
    const files = await readdir(dir)
    const aside = files.find((file) => file.startsWith('tasks.json.corrupt-'))!
    expect(files).toEqual([aside])
    expect(await readFile(join(dir, aside), 'utf8')).toBe('{"version":1,"tasks":[{"id"')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^warn: background task store .*tasks\.json is not valid JSON \(.+\); moved it aside to .*tasks\.json\.corrupt-\d+ and kept 0 readable task\(s\)$/)
    // The store works on: the next write makes a fresh file.
    await store.put(record('a'))
    expect(await new JsonFileTaskStore(path).load()).toEqual([record('a')])
  })

  it.each([
    ['a wrong shape', '[1,2,3]', 'does not hold a task list', 0],
    ['another format version', '{"version":2,"tasks":[]}', 'has format version 2, expected 1', 0],
    ['invalid records', JSON.stringify({ version: 1, tasks: [record('ok'), { id: 'x' }, record('bad', { status: 'weird' as any }), null] }), 'held 3 invalid record(s)', 1],
  ])('moves aside a file with %s and keeps what is readable', async (_, text, problem, kept) => {
    const path = join(dir, 'tasks.json')
    await writeFile(path, text)
    const { lines, logger } = memoryLogger()
    const loaded = await new JsonFileTaskStore(path, { logger }).load()
    expect(loaded).toHaveLength(kept)
    expect(lines[0]).toContain(`tasks.json ${problem}; moved it aside to`)
    expect(lines[0]).toContain(`kept ${kept} readable task(s)`)
    expect((await readdir(dir)).filter((file) => file.includes('.corrupt-'))).toHaveLength(1)
  })

  it('lets a new engine on the same file find a running task interrupted (restart)', async () => {
    const path = join(dir, 'tasks.json')
    const first = new BackgroundEngine({ store: new JsonFileTaskStore(path) })
    await first.load()
    const done = runningCall({ id: 's1' }, 'fetch')
    const doneTask = first.adopt(done.call)
    const lostTask = first.adopt(runningCall({ id: 's2' }, 'deploy').call)
    done.settle('ok', 'fetched', { data: { bytes: 3 } })
    await flush()
    // Simulate a crash: only what reached the file survives.
    await (first as any).store.flush()
    const second = new BackgroundEngine({ store: new JsonFileTaskStore(path) })
    await second.load()
    expect(second.get(lostTask.id)).toMatchObject({ id: lostTask.id, tool: 'deploy', session: { id: 's2' }, status: 'interrupted' })
    expect(second.get(lostTask.id)!.settledAt).toBeGreaterThanOrEqual(lostTask.startedAt)
    expect(second.get(doneTask.id)).toMatchObject({ status: 'succeeded', result: { status: 'ok', content: 'fetched', data: { bytes: 3 } } })
    await second.dispose()
    const third = await new JsonFileTaskStore(path).load()
    expect(third.find((task) => task.id === lostTask.id)!.status).toBe('interrupted')
  })
})
