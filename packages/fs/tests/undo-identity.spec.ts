import { chmod, link, lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools, type FsTools, type UndoOutcome } from '../src'
import { heldDirectories, setHeldDirectories } from '../src/held-dir'
import { type Sandbox, invoke, sandbox, tree } from './helpers'

// Issue 43, item 6: undo acts only on the very file its change wrote. A link at the path or
// at a parent, a hard link, or another file with the same content in its place is refused,
// and nothing is deleted or written, here or where a link leads.

const IMPORTANT = 'the owner\'s important file\n'

let box: Sandbox
beforeEach(async () => {
  box = await sandbox()
  await tree(box.root, { 'important.txt': IMPORTANT, 'keep/made.txt': IMPORTANT, 'dir-backup/made.txt': IMPORTANT })
})
afterEach(async () => {
  setHeldDirectories(undefined)
  await box.cleanup()
})

const at = (rel: string) => join(box.root, rel)
const text = (rel: string) => readFile(at(rel), 'utf8')

const REPLACED = (rel: string) => `${rel} is not the file this change wrote: another file, or a link to one, is in its place (the same content is not enough), or its metadata changed since (chmod, a hard link); nothing was touched`

/**
 * Waits until the file system's clock is past `ctime` (ns), so what is made next is not
 * stamped in the same tick as the file it replaces: that is the attack's case, not a timing margin.
 */
async function clockPast(ctime: string): Promise<void> {
  const probe = join(box.base, 'clock-probe')
  do {
    await writeFile(probe, '')
  } while ((await lstat(probe, { bigint: true })).ctimeNs <= BigInt(ctime))
}

/** What the model would see undo report, without the id. */
const shape = ({ status, code, action }: UndoOutcome) => ({ status, code, action })

/** Creates `rel` with the important file's content through `write`; returns the change id. */
async function created(fs: FsTools, rel: string): Promise<string> {
  const { data } = await invoke(fs.tools.write, { path: rel, content: IMPORTANT })
  expect(data.status).toBe('created')
  return data.changeId
}

/** Edits `rel` (holding `before`) so that it then holds the important file's content; returns the change id. */
async function modified(fs: FsTools, rel: string, before = 'DEBUG = True\n'): Promise<string> {
  await tree(box.root, { [rel]: before })
  const { data } = await invoke(fs.tools.write, { path: rel, content: IMPORTANT })
  expect(data.status).toBe('overwritten')
  return data.changeId
}

const modes = [
  ['held directories (/proc/self/fd)', true],
  ['the path-based fallback', false],
] as const

describe.each(modes)('undo of a creation never deletes what took the file\'s place, with %s', (_, held) => {
  beforeEach(() => {
    if (held) expect(heldDirectories(), 'this suite runs on Linux with /proc mounted').toBe(true)
    setHeldDirectories(held)
  })

  test('the issue\'s case: made.txt replaced by a link to important.txt (same content)', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'made.txt')
    await rm(at('made.txt'))
    await symlink('important.txt', at('made.txt'))
    const [outcome] = await fs.changes.undo(id)
    expect(shape(outcome)).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(outcome.message).toBe('made.txt is now a symbolic link (to important.txt), not the file this change wrote; undo never acts through a link, so nothing was touched')
    expect(await text('important.txt')).toBe(IMPORTANT)
    expect((await lstat(at('made.txt'))).isSymbolicLink()).toBe(true)
    expect(fs.changes.get(id)!.undone).toBeUndefined()
  })

  test('a parent directory replaced by a link, to a sibling whose name it prefixes too', async () => {
    const fs = createFsTools({ workspace: box.root })
    for (const target of ['keep', 'dir-backup']) {
      await rm(at('dir'), { recursive: true, force: true })
      const id = await created(fs, 'dir/made.txt')
      await rename(at('dir'), at('dir.moved'))
      await symlink(target, at('dir'))
      const [outcome] = await fs.changes.undo(id)
      expect([target, shape(outcome)]).toEqual([target, { status: 'conflict', code: 'REPLACED', action: undefined }])
      expect(outcome.message).toBe(`dir/made.txt now leads to ${target}/made.txt through a symbolic link, not to the file this change wrote; undo never acts through a link, so nothing was touched`)
      expect(await text(`${target}/made.txt`)).toBe(IMPORTANT)
      await rm(at('dir.moved'), { recursive: true })
    }
  })

  test('a hard link to important.txt put in its place', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'made.txt')
    await rm(at('made.txt'))
    await link(at('important.txt'), at('made.txt'))
    const [outcome] = await fs.changes.undo(id)
    expect(shape(outcome)).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(outcome.message).toBe(REPLACED('made.txt'))
    expect((await lstat(at('made.txt'))).nlink).toBe(2)
  })

  test('another file with the same content renamed over it (another inode)', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'made.txt')
    await writeFile(at('other.txt'), IMPORTANT)
    await rename(at('other.txt'), at('made.txt'))
    const [outcome] = await fs.changes.undo(id)
    expect(shape(outcome)).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(outcome.message).toBe(REPLACED('made.txt'))
    expect(await text('made.txt')).toBe(IMPORTANT)
  })

  test('deleted and written again with the same content (ext4 hands the freed inode number out again)', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'made.txt')
    await clockPast(fs.changes.get(id)!.written!.ctime!)
    await rm(at('made.txt'))
    await writeFile(at('made.txt'), IMPORTANT)
    expect(shape((await fs.changes.undo(id))[0])).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(await text('made.txt')).toBe(IMPORTANT)
  })

  test('a hard link made to the created file elsewhere: refused (its ctime changed), both names keep the data', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'made.txt')
    await clockPast(fs.changes.get(id)!.written!.ctime!)
    await link(at('made.txt'), at('copy.txt'))
    expect((await fs.changes.undo(id)).map(shape)).toEqual([{ status: 'conflict', code: 'REPLACED', action: undefined }])
    expect([await text('made.txt'), await text('copy.txt')]).toEqual([IMPORTANT, IMPORTANT])
  })

  test('the file the change made, untouched, is deleted', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await created(fs, 'sub/made.txt')
    expect((await fs.changes.undo(id)).map(shape)).toEqual([{ status: 'undone', code: undefined, action: 'deleted' }])
    expect(await readdir(at('sub'))).toEqual([])
  })
})

describe.each(modes)('undo of a change restores only the file it wrote, never through a link, with %s', (_, held) => {
  beforeEach(() => {
    if (held) expect(heldDirectories(), 'this suite runs on Linux with /proc mounted').toBe(true)
    setHeldDirectories(held)
  })

  test('the changed file replaced by a link to important.txt (same content): important.txt keeps its content', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await modified(fs, 'settings.py')
    await rm(at('settings.py'))
    await symlink('important.txt', at('settings.py'))
    const [outcome] = await fs.changes.undo(id)
    expect(shape(outcome)).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(await text('important.txt')).toBe(IMPORTANT)
    expect((await lstat(at('settings.py'))).isSymbolicLink()).toBe(true)
  })

  test('a parent directory replaced by a link: nothing is written where it leads', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await modified(fs, 'dir/made.txt')
    await rename(at('dir'), at('dir.moved'))
    await symlink('dir-backup', at('dir'))
    const [outcome] = await fs.changes.undo(id)
    expect(shape(outcome)).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(await text('dir-backup/made.txt')).toBe(IMPORTANT)
    expect(await text('dir.moved/made.txt')).toBe(IMPORTANT)
  })

  test('a hard link, or another same-content file, in its place is not replaced', async () => {
    const fs = createFsTools({ workspace: box.root })
    const id = await modified(fs, 'settings.py')
    await rm(at('settings.py'))
    await link(at('important.txt'), at('settings.py'))
    expect(shape((await fs.changes.undo(id))[0])).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    await rm(at('settings.py'))
    await writeFile(at('settings.py'), IMPORTANT)
    expect(shape((await fs.changes.undo(id))[0])).toEqual({ status: 'conflict', code: 'REPLACED', action: undefined })
    expect(await text('important.txt')).toBe(IMPORTANT)
    expect(await text('settings.py')).toBe(IMPORTANT)
  })

  test('the changed file, untouched, gets its prior content back, with its permission bits', async () => {
    const fs = createFsTools({ workspace: box.root })
    await tree(box.root, { 'run.sh': 'echo old\n' })
    await chmod(at('run.sh'), 0o750)
    const { data } = await invoke(fs.tools.write, { path: 'run.sh', content: 'echo new\n' })
    expect((await fs.changes.undo(data.changeId)).map(shape)).toEqual([{ status: 'undone', code: undefined, action: 'restored' }])
    expect([await text('run.sh'), (await lstat(at('run.sh'))).mode & 0o777]).toEqual(['echo old\n', 0o750])
  })

  test('edits undone one at a time, newest first, each restore leaving the file the older change can undo', async () => {
    const fs = createFsTools({ workspace: box.root })
    const first = await created(fs, 'n.txt')
    const second = (await invoke(fs.tools.edit, { path: 'n.txt', oldText: 'owner', newText: 'bot' })).data.changeId
    const third = (await invoke(fs.tools.edit, { path: 'n.txt', oldText: 'bot', newText: 'model' })).data.changeId
    for (const id of [third, second]) expect((await fs.changes.undo(id)).map(shape)).toEqual([{ status: 'undone', code: undefined, action: 'restored' }])
    expect(await text('n.txt')).toBe(IMPORTANT)
    expect((await fs.changes.undo(first)).map(shape)).toEqual([{ status: 'undone', code: undefined, action: 'deleted' }])
    expect(await readdir(box.root)).not.toContain('n.txt')
  })
})

describe('the path swapped between undo\'s check and its act', () => {
  test('before the unlink: a link to important.txt put in place of the created file is not followed, and important.txt stays', async () => {
    let swapped = false
    const fs = createFsTools({
      workspace: box.root,
      checkStep: async (step) => {
        if (step !== 'unlink') return
        await rm(at('made.txt'))
        await symlink('important.txt', at('made.txt'))
        swapped = true
      },
    })
    const id = await created(fs, 'made.txt')
    const [outcome] = await fs.changes.undo(id)
    expect([swapped, shape(outcome)]).toEqual([true, { status: 'conflict', code: 'REPLACED', action: undefined }])
    expect(await text('important.txt')).toBe(IMPORTANT)
  })

  test('before the restore\'s rename: a link swapped in is refused and important.txt keeps its content', async () => {
    let armed = false
    let swapped = false
    const fs = createFsTools({
      workspace: box.root,
      checkStep: async (step) => {
        if (step !== 'rename' || !armed) return
        await rm(at('settings.py'))
        await symlink('important.txt', at('settings.py'))
        swapped = true
      },
    })
    const id = await modified(fs, 'settings.py')
    armed = true
    const [outcome] = await fs.changes.undo(id)
    expect([swapped, shape(outcome)]).toEqual([true, { status: 'conflict', code: 'REPLACED', action: undefined }])
    expect(await text('important.txt')).toBe(IMPORTANT)
    expect((await lstat(at('settings.py'))).isSymbolicLink()).toBe(true)
    expect((await readdir(box.root)).filter((name) => name.endsWith('.dogu-tmp'))).toEqual([])
  })

  test.each(modes)('before the restore\'s rename: a parent swapped for a link gets nothing written through it, with %s', async (_, held) => {
    setHeldDirectories(held)
    await mkdir(at('elsewhere'))
    await writeFile(at('elsewhere/made.txt'), IMPORTANT)
    let armed = false
    const fs = createFsTools({
      workspace: box.root,
      checkStep: async (step) => {
        if (step !== 'rename' || !armed) return
        await rename(at('dir'), at('dir.moved'))
        await symlink('elsewhere', at('dir'))
      },
    })
    const id = await modified(fs, 'dir/made.txt')
    armed = true
    const [outcome] = await fs.changes.undo(id)
    // Held directories: the restore lands in the held (moved) directory, the file the change wrote.
    // The path-based fallback notices the link and refuses.
    expect(outcome.status === 'undone' ? await text('dir.moved/made.txt') : outcome.code).toBe(held ? 'DEBUG = True\n' : 'CHANGED')
    expect(await text('elsewhere/made.txt')).toBe(IMPORTANT)
    expect(await readdir(at('elsewhere'))).toEqual(['made.txt'])
  })
})
