import { closeSync, constants, openSync, renameSync, symlinkSync } from 'node:fs'
import { lstat, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import type { CheckStep } from '../src/checked-path'
import { heldDirectories, setHeldDirectories } from '../src/held-dir'
import { walk } from '../src/walk'
import { type Sandbox, failure, fakeCall, invoke, sandbox, tree } from './helpers'

// Issue 25, item 5: a local process swaps a checked directory for a link to outside at
// exactly the point between the check and the use (the resolver's internal `checkStep`
// seam), and nothing outside may be read, listed, created or deleted.

const SECRET = 'SECRET-OUTSIDE-THE-ROOT'

let box: Sandbox
let outside: string
beforeEach(async () => {
  box = await sandbox()
  outside = join(box.base, 'outside')
  await tree(box.base, {
    'outside/file.txt': SECRET,
    'outside/deeper/file.txt': SECRET,
    'outside/new.txt': 'created\n',
  })
  await tree(box.root, {
    'a.txt': 'first inside\n',
    'sub/file.txt': 'inside\n',
    'sub/deeper/file.txt': 'inside deeper\n',
  })
})
afterEach(async () => {
  setHeldDirectories(undefined)
  await box.cleanup()
})

/** Everything below `outside`, with contents, to compare before and after. */
async function snapshot(dir = outside): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    out[path.slice(dir.length + 1)] = entry.isFile() ? await readFile(path, 'utf8') : entry.isSymbolicLink() ? '@' : '/'
  }
  return out
}

/** Puts `root/sub` back as it was, without whatever a swap left. */
async function reset(): Promise<void> {
  await rm(join(box.root, 'sub'), { recursive: true, force: true })
  await rm(join(box.root, 'sub.moved'), { recursive: true, force: true })
  await tree(box.root, { 'sub/file.txt': 'inside\n', 'sub/deeper/file.txt': 'inside deeper\n' })
}

/** Moves `root/<dir>` aside (to `<dir>.moved`) and puts a link to `outside` in its place. */
async function swap(dir = 'sub'): Promise<void> {
  await rename(join(box.root, dir), join(box.root, `${dir}.moved`))
  await symlink(outside, join(box.root, dir))
}

/** Tools whose resolver swaps `dir` at the `nth` time it reaches `at`. */
function racedTools(at: CheckStep, dir = 'sub', nth = 1) {
  let seen = 0
  const steps: CheckStep[] = []
  const fs = createFsTools({
    workspace: box.root,
    checkStep: async (step) => {
      steps.push(step)
      if (step === at && ++seen === nth) await swap(dir)
    },
  })
  return { fs, steps, swapped: () => seen >= nth }
}

const modes = [
  ['held directories (/proc/self/fd)', true],
  ['the path-based fallback', false],
] as const

describe.each(modes)('a directory swapped for a link right after the check, with %s', (_, held) => {
  beforeEach(() => {
    if (held) expect(heldDirectories(), 'this suite runs on Linux with /proc mounted').toBe(true)
    setHeldDirectories(held)
  })

  test('read: the file below the swapped directory is not read through the link', async () => {
    const before = await snapshot()
    for (const [path, dir] of [['sub/file.txt', 'sub'], ['sub/deeper/file.txt', 'sub'], ['sub/deeper/file.txt', 'sub/deeper']]) {
      await reset()
      const { fs, swapped } = racedTools('open', dir)
      const error = await failure(invoke(fs.tools.read, { path }))
      expect([path, dir, swapped(), error.code]).toEqual([path, dir, true, 'CHANGED'])
      expect(error.message).not.toContain(SECRET)
    }
    expect(await snapshot()).toEqual(before)
  })

  test('list: the swapped directory (or one above it) is not listed through the link', async () => {
    for (const [path, dir] of [['sub', 'sub'], ['sub/deeper', 'sub']]) {
      await reset()
      const { fs, swapped } = racedTools('open', dir)
      const error = await failure(invoke(fs.tools.list, { path }))
      expect([path, swapped(), error.code]).toEqual([path, true, 'CHANGED'])
      expect(error.message).not.toContain('new.txt')
    }
  })

  test('grep and glob: the directory they search, swapped before it is opened, is not searched', async () => {
    const grep = racedTools('open')
    expect((await failure(invoke(grep.fs.tools.grep, { pattern: 'SECRET', path: 'sub' }))).code).toBe('CHANGED')
    await rm(join(box.root, 'sub'))
    await rename(join(box.root, 'sub.moved'), join(box.root, 'sub'))
    const glob = racedTools('open')
    expect((await failure(invoke(glob.fs.tools.glob, { pattern: '**', path: 'sub' }))).code).toBe('CHANGED')
  })

  test('write: no temporary file and no file appear outside, for a new file, new parents and a replaced file', async () => {
    const before = await snapshot()
    for (const path of ['sub/new.txt', 'sub/a/b/new.txt', 'sub/file.txt', 'sub/deeper/file.txt']) {
      await reset()
      const { fs, swapped } = racedTools('open')
      const error = await failure(invoke(fs.tools.write, { path, content: 'pwned\n' }))
      // A replaced file is read first (for the diff): that read already meets the link.
      expect([path, swapped(), error.code]).toEqual([path, true, 'CHANGED'])
      expect(await snapshot()).toEqual(before)
    }
  })

  test('write: swapped after the temporary file is written, before the rename', async () => {
    const before = await snapshot()
    const { fs, swapped } = racedTools('rename')
    const attempt = invoke(fs.tools.write, { path: 'sub/new.txt', content: 'pwned\n' })
    if (held) {
      // The rename happens in the held directory: the checked one, wherever it was moved.
      expect((await attempt).data.status).toBe('created')
      expect(await readFile(join(box.root, 'sub.moved/new.txt'), 'utf8')).toBe('pwned\n')
    } else {
      // Without a held directory, the parent is checked again right before the rename.
      expect((await failure(attempt)).code).toBe('CHANGED')
    }
    expect(swapped()).toBe(true)
    expect(await snapshot()).toEqual(before)
    // No temporary file is left with held directories; the fallback removes it by path, which
    // now leads through the link, so it stays in the moved directory (documented).
    expect((await readdir(join(box.root, 'sub.moved'))).filter((name) => name.endsWith('.dogu-tmp')).length).toBe(held ? 0 : 1)
  })

  test('edit: swapped at each open (read for the diff, the digest check, the commit), nothing outside is read or written', async () => {
    const before = await snapshot()
    for (const nth of [1, 2, 3]) {
      await reset()
      // The outside file has the same text, so the edit would apply there just as well.
      await writeFile(join(outside, 'file.txt'), 'inside\n')
      const { fs, swapped } = racedTools('open', 'sub', nth)
      const error = await failure(invoke(fs.tools.edit, { path: 'sub/file.txt', oldText: 'inside', newText: 'pwned' }))
      expect([nth, swapped(), error.code]).toEqual([nth, true, 'CHANGED'])
      expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('inside\n')
      expect(await readFile(join(box.root, 'sub.moved/file.txt'), 'utf8')).toBe('inside\n')
    }
    await writeFile(join(outside, 'file.txt'), SECRET)
    expect(await snapshot()).toEqual(before)
  })

  test('undo of a creation: the same-named, same-content file outside is not deleted', async () => {
    const before = await snapshot()
    // Undo opens the path once: the check and the unlink use the one held directory.
    for (const nth of [1]) {
      await reset()
      const { fs, swapped } = racedTools('open', 'sub', Infinity)
      // outside/new.txt holds exactly what the write creates.
      await invoke(fs.tools.write, { path: 'sub/new.txt', content: 'created\n' }, fakeCall({ id: `s${nth}` }))
      const raced = racedTools('open', 'sub', nth)
      raced.fs.changes.add(fs.changes.list())
      const [outcome] = await raced.fs.changes.undo(fs.changes.list()[0].id)
      expect([nth, raced.swapped(), outcome.status, outcome.code]).toEqual([nth, true, 'error', 'CHANGED'])
      expect(swapped()).toBe(false)
      expect(await readFile(join(box.root, 'sub.moved/new.txt'), 'utf8')).toBe('created\n')
    }
    expect(await snapshot()).toEqual(before)
  })

  test('undo of an edit: the prior content is not restored through the link', async () => {
    const fs = createFsTools({ workspace: box.root })
    await writeFile(join(outside, 'file.txt'), 'edited\n')
    await invoke(fs.tools.write, { path: 'sub/file.txt', content: 'edited\n' })
    const raced = racedTools('open')
    raced.fs.changes.add(fs.changes.list())
    const [outcome] = await raced.fs.changes.undo(fs.changes.list()[0].id)
    expect([raced.swapped(), outcome.status, outcome.code]).toEqual([true, 'error', 'CHANGED'])
    expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('edited\n')
  })
})

describe('undo never deletes through, or instead of, what took a created file\'s place', () => {
  test('the created file replaced by a link to a same-content file outside: conflict, both stay', async () => {
    const fs = createFsTools({ workspace: box.root })
    await invoke(fs.tools.write, { path: 'sub/new.txt', content: 'created\n' })
    await rm(join(box.root, 'sub/new.txt'))
    await symlink(join(outside, 'new.txt'), join(box.root, 'sub/new.txt'))
    const [outcome] = await fs.changes.undo(fs.changes.list()[0].id)
    expect(outcome.status).not.toBe('undone')
    expect(await readFile(join(outside, 'new.txt'), 'utf8')).toBe('created\n')
    expect((await lstat(join(box.root, 'sub/new.txt'))).isSymbolicLink()).toBe(true)
  })

  test('swapped between the hash and the unlink: a same-content file put in its place is not deleted', async () => {
    let replaced = false
    const fs = createFsTools({
      workspace: box.root,
      checkStep: async (step) => {
        if (step !== 'unlink') return
        // Another file (same bytes, another inode) takes the created file's name.
        await writeFile(join(box.root, 'sub/other.txt'), 'created\n')
        await rename(join(box.root, 'sub/other.txt'), join(box.root, 'sub/new.txt'))
        replaced = true
      },
    })
    await invoke(fs.tools.write, { path: 'sub/new.txt', content: 'created\n' })
    const [outcome] = await fs.changes.undo(fs.changes.list()[0].id)
    expect([replaced, outcome.status, outcome.code]).toEqual([true, 'conflict', 'REPLACED'])
    expect(await readFile(join(box.root, 'sub/new.txt'), 'utf8')).toBe('created\n')
  })

  test('swapped between the hash and the unlink, parent for a link: only the created file (in the moved directory) goes', async () => {
    const before = await snapshot()
    const { fs } = racedTools('unlink')
    await invoke(fs.tools.write, { path: 'sub/new.txt', content: 'created\n' })
    const [outcome] = await fs.changes.undo(fs.changes.list()[0].id)
    expect([outcome.status, outcome.action]).toEqual(['undone', 'deleted'])
    expect(await readdir(join(box.root, 'sub.moved'))).toEqual(['deeper', 'file.txt'])
    expect(await snapshot()).toEqual(before)
  })
})

describe('grep and glob walks hold their directories', () => {
  test('grep: a directory swapped for a link after its parent was listed is not entered', async () => {
    const fs = createFsTools({ workspace: box.root, limits: { grepProgressEvery: 1 } })
    let swapped = false
    // Progress is reported synchronously after each file: after a.txt, before sub/ is opened.
    const call = fakeCall({}, () => {
      if (swapped) return
      swapped = true
      renameAndLink('sub')
    })
    const output = await invoke(fs.tools.grep, { pattern: 'inside|SECRET' }, call)
    expect(swapped).toBe(true)
    expect(output.text).not.toContain(SECRET)
    expect(output.text).toContain('a.txt:1:first inside')
    expect(output.data.unreadable).toBe(1)
  })

  test('grep: a parent swapped while its files are searched: the rest still come from the held (moved) directory', async () => {
    await tree(box.root, { 'sub/b.txt': 'inside b\n', 'sub/c/d.txt': 'inside d\n' })
    const fs = createFsTools({ workspace: box.root, limits: { grepProgressEvery: 1 } })
    let count = 0
    const call = fakeCall({}, () => {
      // After a.txt and sub/b.txt: sub is open, its entries still to come.
      if (++count === 2) renameAndLink('sub')
    })
    const output = await invoke(fs.tools.grep, { pattern: 'inside|SECRET', mode: 'files' }, call)
    expect(count).toBeGreaterThan(2)
    expect(output.text).not.toContain(SECRET)
    expect(output.text.split('\n')).toEqual(['a.txt', 'sub/b.txt', 'sub/c/d.txt', 'sub/deeper/file.txt', 'sub/file.txt'])
  })

  test('walk (glob\'s): a directory swapped for a link after it was listed is not entered', async () => {
    const rootFd = openSync(box.root, constants.O_RDONLY | constants.O_DIRECTORY)
    const seen: string[] = []
    try {
      await walk(box.root, (entry) => {
        seen.push(entry.rel)
        if (entry.rel === 'sub') renameAndLink('sub')
      }, { rootFd })
    } finally {
      closeSync(rootFd)
    }
    // The entry was listed as a directory; opening it by name meets the link and stops.
    expect(seen).toEqual(['a.txt', 'sub'])
  })
})

/** Synchronous, for hooks that run inside a synchronous slice of a walk. */
function renameAndLink(dir: string): void {
  renameSync(join(box.root, dir), join(box.root, `${dir}.moved`))
  symlinkSync(outside, join(box.root, dir))
}
