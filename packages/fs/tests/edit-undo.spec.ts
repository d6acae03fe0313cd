import { writeFileSync } from 'node:fs'
import { lstat, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { sha256 } from '../src/fs-backend'
import { type Sandbox, failure, fakeCall, invoke, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

const SOURCE = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n'

describe('edit', () => {
  test('replaces the one occurrence and returns an exact file-change artifact', async () => {
    await tree(box.root, { 'f.txt': SOURCE })
    const fs = createFsTools({ workspace: box.root })
    const call = fakeCall({ id: 'chat-7' })
    const identity = async () => {
      const info = await lstat(join(box.root, 'f.txt'), { bigint: true })
      return { dev: String(info.dev), ino: String(info.ino), ctime: String(info.ctimeNs) }
    }
    const replaced = await identity()
    const output = await invoke(fs.tools.edit, { path: 'f.txt', oldText: 'e\n', newText: 'E\nE2\n' }, call)
    const next = 'a\nb\nc\nd\nE\nE2\nf\ng\nh\ni\nj\n'
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe(next)
    expect(output.text).toBe('Edited f.txt: +2 -1 lines.')
    const [change] = output.artifacts!
    expect(change).toEqual({
      kind: 'file_change',
      id: output.data.changeId,
      path: 'f.txt',
      type: 'modified',
      added: 2,
      removed: 1,
      hunks: [{ oldStart: 2, oldLines: 7, newStart: 2, newLines: 8, lines: [' b', ' c', ' d', '-e', '+E', '+E2', ' f', ' g', ' h'] }],
      before: sha256(SOURCE),
      after: sha256(next),
      prior: SOURCE,
      // The very files undo will require (the new one) and that the change replaced.
      written: await identity(),
      replaced,
      tool: 'edit',
      callId: 'call-1',
      sessionId: 'chat-7',
      createdAt: change.createdAt,
    })
    // The artifact is for the host: the model's text holds none of it.
    expect(output.text).not.toContain('E2')
    expect(fs.changes.get(change.id)).toBe(change)
  })

  const failures: [string, Record<string, string>, string, string][] = [
    ['the old text is missing', { oldText: 'zzz', newText: 'y' }, 'NO_MATCH', 'oldText was not found in f.txt. Read the file again and copy the text exactly, whitespace and indentation included.'],
    ['the old text is repeated', { oldText: 'x', newText: 'y' }, 'AMBIGUOUS', 'oldText occurs 3 times in f.txt; include more surrounding lines so it occurs exactly once.'],
    ['the new text equals the old', { oldText: 'one', newText: 'one' }, 'NO_CHANGE', 'oldText and newText are the same; nothing to edit'],
    ['an empty old text names an existing file', { oldText: '', newText: 'y' }, 'EXISTS', 'f.txt already exists; an empty oldText only creates new files. Give the exact text to replace, or use write to replace the whole file.'],
  ]
  test.each(failures)('fails, changing nothing, when %s', async (_, args, code, message) => {
    await tree(box.root, { 'f.txt': 'one x x x' })
    const fs = createFsTools({ workspace: box.root })
    const error = await failure(invoke(fs.tools.edit, { path: 'f.txt', ...args }))
    expect([error.code, error.message]).toEqual([code, message])
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe('one x x x')
    expect(fs.changes.list()).toEqual([])
  })

  test('overlapping occurrences count as repeated', async () => {
    await tree(box.root, { 'f.txt': 'aaa' })
    const fs = createFsTools({ workspace: box.root })
    expect((await failure(invoke(fs.tools.edit, { path: 'f.txt', oldText: 'aa', newText: 'b' }))).code).toBe('AMBIGUOUS')
  })

  test('an empty old text creates a new file; editing a missing file is NOT_FOUND', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.edit, { path: 'new/n.txt', oldText: '', newText: 'hi\n' })
    expect(output.text).toBe('Created new/n.txt.')
    expect(output.artifacts![0]).toMatchObject({ type: 'created', added: 1, removed: 0, before: null, prior: null })
    const missing = await failure(invoke(fs.tools.edit, { path: 'gone.txt', oldText: 'a', newText: 'b' }))
    expect([missing.code, missing.message]).toEqual(['NOT_FOUND', '"gone.txt" does not exist'])
  })

  test('a change on disk between reading and committing is "stale" and is not overwritten', async () => {
    await tree(box.root, { 'f.txt': 'value = 1\n' })
    const fs = createFsTools({ workspace: box.root })
    // Another program writes the file at the last moment before the digest is checked again.
    const call = fakeCall({}, (message) => {
      if (message.startsWith('checking')) writeFileSync(join(box.root, 'f.txt'), 'value = 99\n')
    })
    const error = await failure(invoke(fs.tools.edit, { path: 'f.txt', oldText: '1', newText: '2' }, call))
    expect([error.code, error.message]).toEqual(['STALE', 'f.txt changed on disk after it was read (another program wrote it); nothing was written. Read it again and redo the change.'])
    expect(call.progressed).toEqual(['checking f.txt for changes since it was read'])
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe('value = 99\n')
    expect(fs.changes.list()).toEqual([])
  })

  test('concurrent edits of one file run one after another under its lock', async () => {
    await tree(box.root, { 'f.txt': 'alpha beta gamma' })
    const fs = createFsTools({ workspace: box.root })
    const results = await Promise.allSettled([
      invoke(fs.tools.edit, { path: 'f.txt', oldText: 'alpha', newText: 'ALPHA' }),
      invoke(fs.tools.edit, { path: 'f.txt', oldText: 'gamma', newText: 'GAMMA' }),
      invoke(fs.tools.edit, { path: 'f.txt', oldText: 'alpha', newText: 'again' }),
    ])
    // Which `alpha` edit takes the lock first depends on how long each path check took; the
    // other then finds no `alpha`. Under the lock no edit is lost: both that ran are in the file.
    expect(results[1].status).toBe('fulfilled')
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(2)
    const rejected = results.find((result) => result.status === 'rejected') as PromiseRejectedResult
    expect(rejected.reason.code).toBe('NO_MATCH')
    const first = results[0].status === 'fulfilled' ? 'ALPHA' : 'again'
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe(`${first} beta GAMMA`)
  })
})

describe('undo', () => {
  test('restores a modified file by change id and marks the change undone', async () => {
    await tree(box.root, { 'f.txt': SOURCE })
    const fs = createFsTools({ workspace: box.root })
    const { data } = await invoke(fs.tools.edit, { path: 'f.txt', oldText: 'c\n', newText: 'C\n' })
    expect(await fs.changes.undo(data.changeId)).toEqual([
      { id: data.changeId, path: 'f.txt', status: 'undone', action: 'restored', message: 'f.txt: restored' },
    ])
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe(SOURCE)
    expect(fs.changes.get(data.changeId)!.undone).toBe(true)
    expect((await fs.changes.undo(data.changeId))[0].status).toBe('already_undone')
  })

  test('refuses with a conflict when the file no longer has the content the change wrote', async () => {
    await tree(box.root, { 'f.txt': 'one\n' })
    const fs = createFsTools({ workspace: box.root })
    const { data } = await invoke(fs.tools.write, { path: 'f.txt', content: 'two\n' })
    await writeFile(join(box.root, 'f.txt'), 'three (a person edited this)\n')
    expect(await fs.changes.undo([data.changeId])).toEqual([{
      id: data.changeId, path: 'f.txt', status: 'conflict', code: 'CONFLICT',
      message: 'f.txt was changed since; undo would overwrite that, so nothing was touched',
    }])
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe('three (a person edited this)\n')
    expect(fs.changes.get(data.changeId)!.undone).toBeUndefined()
  })

  test('a batch undoes newest first: create then edit ends with the file deleted', async () => {
    const fs = createFsTools({ workspace: box.root })
    const created = await invoke(fs.tools.write, { path: 'src/n.ts', content: 'let x = 1\n' })
    const edited = await invoke(fs.tools.edit, { path: 'src/n.ts', oldText: '1', newText: '2' })
    const ids = [created.data.changeId, edited.data.changeId]
    const outcomes = await fs.changes.undo(ids)
    expect(outcomes.map(({ id, status, action }) => ({ id, status, action }))).toEqual([
      { id: edited.data.changeId, status: 'undone', action: 'restored' },
      { id: created.data.changeId, status: 'undone', action: 'deleted' },
    ])
    await expect(readFile(join(box.root, 'src/n.ts'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  test('a conflict blocks older changes to the same path in the batch, not other paths', async () => {
    const fs = createFsTools({ workspace: box.root })
    const a1 = await invoke(fs.tools.write, { path: 'a.txt', content: 'a1' })
    const b1 = await invoke(fs.tools.write, { path: 'b.txt', content: 'b1' })
    const a2 = await invoke(fs.tools.write, { path: 'a.txt', content: 'a2' })
    await writeFile(join(box.root, 'a.txt'), 'external')
    const outcomes = await fs.changes.undo([a1.data.changeId, b1.data.changeId, a2.data.changeId, 'no-such-id'])
    expect(outcomes.map(({ path, status }) => [path, status])).toEqual([
      ['a.txt', 'conflict'],
      ['b.txt', 'undone'],
      ['a.txt', 'skipped'],
      [undefined, 'unknown'],
    ])
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('external')
  })

  test('undoing a created file that was deleted since is a conflict', async () => {
    const fs = createFsTools({ workspace: box.root })
    const created = await invoke(fs.tools.write, { path: 'n.txt', content: 'n' })
    await rm(join(box.root, 'n.txt'))
    expect((await fs.changes.undo(created.data.changeId))[0]).toMatchObject({ status: 'conflict', message: 'n.txt no longer exists; undo would overwrite that, so nothing was touched' })
  })

  test('changes loaded back from persisted artifacts can be undone by a new pack', async () => {
    await tree(box.root, { 'f.txt': 'old\n' })
    const first = createFsTools({ workspace: box.root })
    const { artifacts } = await invoke(first.tools.edit, { path: 'f.txt', oldText: 'old', newText: 'new' })
    const persisted = JSON.parse(JSON.stringify(artifacts))
    const second = createFsTools({ workspace: box.root })
    second.changes.add(persisted)
    expect((await second.changes.undo(persisted[0].id))[0].status).toBe('undone')
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe('old\n')
    expect(() => second.changes.add([{ kind: 'file_change', id: 'x' }])).toThrow('ChangeLog.add() expects file_change artifacts')
  })

  test('undo goes through the resolver: a path that became protected is refused', async () => {
    await tree(box.root, { 'f.txt': 'one' })
    const open = createFsTools({ workspace: box.root })
    const { artifacts } = await invoke(open.tools.write, { path: 'f.txt', content: 'two' })
    const locked = createFsTools({ workspace: box.root, protected: ['f.txt'] })
    locked.changes.add(artifacts!)
    expect((await locked.changes.undo(artifacts![0].id))[0]).toMatchObject({ status: 'error', code: 'READ_ONLY' })
    expect(await readFile(join(box.root, 'f.txt'), 'utf8')).toBe('two')
  })
})
