import { lstat, readdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { CheckedPath, PathResolver, createFsTools } from '../src'
import { realPathOf } from '../src/fs-backend'
import { type Sandbox, failure, fakeCall, invoke, lexicalCode, sandbox, tree, writeTraversal } from './helpers'
import { TRAVERSAL_CASES } from './traversal-cases'

const SECRET = 'SECRET-OUTSIDE-THE-ROOT'

let box: Sandbox
beforeEach(async () => {
  box = await sandbox()
  await tree(box.base, {
    'etc/passwd': SECRET,
    'outside/secret.txt': SECRET,
    'outside/real.txt': SECRET,
    'root-evil/secret.txt': SECRET,
  })
})
afterEach(() => box.cleanup())

// The corpus tier runs 416 third-party payloads the same way (path-safety.corpus.spec.ts).
describe('traversal cases', () => {
  test('every case\'s code is the one POSIX lexical resolution gives', () => {
    expect(TRAVERSAL_CASES.map(([, payload]) => [payload, lexicalCode(payload, box.root)]))
      .toEqual(TRAVERSAL_CASES.map(([, payload, code]) => [payload, code]))
  })

  test('read: no payload reads outside the root, and each fails with its code', async () => {
    const fs = createFsTools({ workspace: box.root })
    const answers = []
    for (const [category, payload] of TRAVERSAL_CASES) {
      const error = await failure(invoke(fs.tools.read, { path: payload }))
      expect(error.message).not.toContain(SECRET)
      answers.push([category, payload, error.code])
    }
    expect(answers).toEqual(TRAVERSAL_CASES)
  })

  test('write: no payload writes outside the root; in-root payloads create a file where lexical resolution says', async () => {
    const fs = createFsTools({ workspace: box.root })
    const created: string[] = []
    for (const [, payload, code] of TRAVERSAL_CASES) {
      if (await writeTraversal(fs.tools.write, box.root, payload, code)) created.push(payload)
    }
    // 32 of the 57 resolve inside the root (`%2e%2e`, `..\etc` and `..;` are plain names): created there.
    expect(created.length).toBe(32)
    // Beside the root, nothing changed.
    expect((await readdir(box.base)).sort()).toEqual(['etc', 'outside', 'root', 'root-evil'])
    expect(await readdir(join(box.base, 'outside'))).toEqual(['real.txt', 'secret.txt'])
    expect(await readdir(join(box.base, 'root-evil'))).toEqual(['secret.txt'])
    expect(await readFile(join(box.base, 'etc/passwd'), 'utf8')).toBe(SECRET)
  })

  test('percent-encoding is literal text, not decoded', async () => {
    const fs = createFsTools({ workspace: box.root })
    await tree(box.root, { '%2e%2e/passwd': 'inside' })
    expect((await invoke(fs.tools.read, { path: '%2e%2e/passwd' })).text).toBe('inside')
  })
})

describe('symbolic links', () => {
  beforeEach(async () => {
    await tree(box.root, {
      'real.txt': 'real inside',
      'sub/keep.txt': 'keep',
      'out': { link: '../outside' },
      'out-file': { link: '../outside/secret.txt' },
      'in-file': { link: 'real.txt' },
      'in-dir': { link: 'sub' },
      'chain-a': { link: 'chain-b' },
      'chain-b': { link: 'chain-c' },
      'chain-c': { link: 'real.txt' },
      'chain-out-a': { link: 'chain-out-b' },
      'chain-out-b': { link: '../outside/secret.txt' },
      'loop-a': { link: 'loop-b' },
      'loop-b': { link: 'loop-a' },
      'dangling': { link: 'nowhere.txt' },
      'dangling-out': { link: '../outside/new.txt' },
    })
  })

  const cases: [string, string, string][] = [
    ['a link inside the root pointing out (directory)', 'out/secret.txt', 'OUTSIDE_ROOT'],
    ['a link inside the root pointing out (file)', 'out-file', 'OUTSIDE_ROOT'],
    ['a chain ending outside', 'chain-out-a', 'OUTSIDE_ROOT'],
    ['a cycle', 'loop-a', 'LINK_LOOP'],
    ['a path through a cycle', 'loop-a/x.txt', 'LINK_LOOP'],
    ['a dangling link', 'dangling', 'DANGLING_LINK'],
    ['a link to a file followed by /', 'in-file/', 'NOT_A_DIRECTORY'],
    ['a link to an outside file followed by /', 'out-file/', 'OUTSIDE_ROOT'],
    ['a missing file below a link pointing out', 'out/missing.txt', 'OUTSIDE_ROOT'],
    ['.. after a link, lexically leaving the root', 'out/../../outside/secret.txt', 'OUTSIDE_ROOT'],
  ]
  test.each(cases)('read refuses %s', async (_, path, code) => {
    const fs = createFsTools({ workspace: box.root })
    const error = await failure(invoke(fs.tools.read, { path }))
    expect(error.code).toBe(code)
    expect(error.message).not.toContain(SECRET)
  })

  test('error messages name the input, never the real outside target', async () => {
    const fs = createFsTools({ workspace: box.root })
    const error = await failure(invoke(fs.tools.read, { path: 'out/secret.txt' }))
    expect(error.message).toBe('"out/secret.txt" leads outside the allowed roots through a symbolic link')
  })

  test('a chain of links inside the root is followed', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.read, { path: 'chain-a' })).text).toBe('real inside')
  })

  test('.. after a link is folded lexically first: out/../real.txt is the root\'s real.txt', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.read, { path: 'out/../real.txt' })).text).toBe('real inside')
  })

  const writes: [string, string, string][] = [
    ['a new file under a linked parent pointing out', 'out/new.txt', 'OUTSIDE_ROOT'],
    ['new directories under a linked parent pointing out', 'out/a/b/new.txt', 'OUTSIDE_ROOT'],
    ['through a link to an outside file', 'out-file', 'OUTSIDE_ROOT'],
    ['a dangling link (would create its target)', 'dangling', 'DANGLING_LINK'],
    ['a dangling link pointing out', 'dangling-out', 'DANGLING_LINK'],
    ['below a cycle', 'loop-a/new.txt', 'LINK_LOOP'],
    ['below a file', 'real.txt/new.txt', 'NOT_A_DIRECTORY'],
  ]
  test.each(writes)('write refuses %s, and nothing appears outside', async (_, path, code) => {
    const fs = createFsTools({ workspace: box.root })
    const error = await failure(invoke(fs.tools.write, { path, content: 'pwned' }))
    expect(error.code).toBe(code)
    expect(await readdir(join(box.base, 'outside'))).toEqual(['real.txt', 'secret.txt'])
    expect(await readFile(join(box.base, 'outside/secret.txt'), 'utf8')).toBe(SECRET)
    await expect(lstat(join(box.root, 'nowhere.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  test('a new file under a linked parent inside the root lands at the real place', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.write, { path: 'in-dir/new.txt', content: 'hello\n' })
    expect(output.text).toBe('Created sub/new.txt (1 line).')
    expect(output.artifacts![0].path).toBe('sub/new.txt')
    expect(await readFile(join(box.root, 'sub/new.txt'), 'utf8')).toBe('hello\n')
  })

  test('writing through a link to a file inside the root replaces the target and keeps the link', async () => {
    const fs = createFsTools({ workspace: box.root })
    await invoke(fs.tools.write, { path: 'in-file', content: 'changed' })
    expect(await readFile(join(box.root, 'real.txt'), 'utf8')).toBe('changed')
    expect((await lstat(join(box.root, 'in-file'))).isSymbolicLink()).toBe(true)
  })

  test('list reports links as links and refuses to enter one pointing out', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.list, {})
    expect(output.text).toBe([
      'chain-a@', 'chain-b@', 'chain-c@', 'chain-out-a@', 'chain-out-b@', 'dangling@', 'dangling-out@',
      'in-dir@', 'in-file@', 'loop-a@', 'loop-b@', 'out@', 'out-file@', 'real.txt', 'sub/',
    ].join('\n'))
    expect((await failure(invoke(fs.tools.list, { path: 'out' }))).code).toBe('OUTSIDE_ROOT')
  })

  test('grep and glob never follow links', async () => {
    const fs = createFsTools({ workspace: box.root })
    const grep = await invoke(fs.tools.grep, { pattern: 'SECRET|real inside' })
    expect(grep.text).toBe('real.txt:1:real inside')
    const glob = await invoke(fs.tools.glob, { pattern: '**/*.txt' })
    expect(glob.text).toBe(['real.txt', 'sub/keep.txt'].join('\n'))
    const links = await invoke(fs.tools.glob, { pattern: 'out*' })
    expect(links.text).toBe(['out', 'out-file'].join('\n'))
  })
})

describe('roots, protected paths and the working directory', () => {
  test('read-only roots are readable, never writable, and links into them are read-only too', async () => {
    await tree(box.base, { 'docs/guide.md': 'guide' })
    await tree(box.root, { 'guide-link': { link: '../docs/guide.md' } })
    const fs = createFsTools({ workspace: box.root, readOnly: [join(box.base, 'docs')] })
    expect((await invoke(fs.tools.read, { path: '../docs/guide.md' })).text).toBe('guide')
    expect((await invoke(fs.tools.read, { path: 'guide-link' })).text).toBe('guide')
    expect((await failure(invoke(fs.tools.write, { path: '../docs/guide.md', content: 'x' }))).code).toBe('READ_ONLY')
    expect((await failure(invoke(fs.tools.write, { path: 'guide-link', content: 'x' }))).code).toBe('READ_ONLY')
    expect((await failure(invoke(fs.tools.write, { path: '../docs/new.md', content: 'x' }))).code).toBe('READ_ONLY')
    expect(await readFile(join(box.base, 'docs/guide.md'), 'utf8')).toBe('guide')
  })

  test('protected globs cover the match and everything below it, by lexical and by real path', async () => {
    await tree(box.root, { '.git/config': 'cfg', '.env': 'KEY=1', 'git-link': { link: '.git' } })
    const fs = createFsTools({ workspace: box.root, protected: ['.git', '.env*'] })
    expect((await invoke(fs.tools.read, { path: '.git/config' })).text).toBe('cfg')
    for (const path of ['.git/config', '.git/hooks/pre-commit', '.env', '.env.local', 'git-link/config']) {
      const error = await failure(invoke(fs.tools.write, { path, content: 'x' }))
      expect([path, error.code, error.message]).toEqual([path, 'READ_ONLY', `${JSON.stringify(path)} is a protected path and cannot be written`])
    }
    expect((await failure(invoke(fs.tools.edit, { path: '.env', oldText: 'KEY=1', newText: 'KEY=2' }))).code).toBe('READ_ONLY')
    expect(await readFile(join(box.root, '.env'), 'utf8')).toBe('KEY=1')
  })

  test('relative paths resolve against session.cwd, which must lie inside a root', async () => {
    await tree(box.root, { 'pkg/a.txt': 'A', 'b.txt': 'B' })
    const fs = createFsTools({ workspace: box.root })
    const call = fakeCall({ cwd: 'pkg' })
    expect((await invoke(fs.tools.read, { path: 'a.txt' }, call)).text).toBe('A')
    expect((await invoke(fs.tools.read, { path: '../b.txt' }, call)).text).toBe('B')
    expect((await invoke(fs.tools.read, { path: join(box.root, 'b.txt') }, call)).text).toBe('B')
    expect((await invoke(fs.tools.glob, { pattern: '*', path: '..' }, call)).text).toBe(['../b.txt', '../pkg/'].join('\n'))
    const error = await failure(invoke(fs.tools.read, { path: 'a.txt' }, fakeCall({ cwd: '../outside' })))
    expect([error.code, error.message]).toEqual(['OUTSIDE_ROOT', 'the session working directory "../outside" is not a directory inside the allowed roots'])
  })

  test('permission targets are root-relative, computed lexically from args and session.cwd', () => {
    const fs = createFsTools({ workspace: box.root })
    const { read, write, edit, grep, glob, list } = fs.tools
    const call = fakeCall()
    expect(write.permission!({ path: 'src/a.ts', content: '' }, call)).toEqual({ name: 'fs.write', target: 'src/a.ts' })
    expect(edit.permission!({ path: './src/../src/a.ts' }, call)).toEqual({ name: 'fs.write', target: 'src/a.ts' })
    expect(read.permission!({ path: 'a.ts' }, fakeCall({ cwd: 'src' }))).toEqual({ name: 'fs.read', target: 'src/a.ts' })
    expect(grep.permission!({ pattern: 'x' }, call)).toEqual({ name: 'fs.read', target: '.' })
    expect(glob.permission!({ pattern: 'x', path: 'lib' }, call)).toEqual({ name: 'fs.read', target: 'lib' })
    expect(list.permission!({ path: '../outside' }, call)).toEqual({ name: 'fs.read', target: join(box.base, 'outside') })
    expect(read.permission!({ path: 'a\0b' }, call)).toEqual({ name: 'fs.read', target: 'a\0b' })
  })

  test('null bytes and empty paths are refused before touching the disk', async () => {
    const fs = createFsTools({ workspace: box.root })
    const nul = await failure(invoke(fs.tools.read, { path: 'a\0.txt' }))
    expect([nul.code, nul.message]).toEqual(['INVALID_PATH', 'the path contains a null byte'])
    const empty = await failure(invoke(fs.tools.write, { path: '', content: '' }))
    expect([empty.code, empty.message]).toEqual(['INVALID_PATH', 'the path is empty'])
  })

  test('a CheckedPath cannot be forged; only the resolver issues one', async () => {
    const resolver = new PathResolver({ workspace: box.root })
    const Forge = CheckedPath as unknown as new (...args: unknown[]) => CheckedPath
    expect(() => new Forge(Symbol('CheckedPath'), { real: '/etc/passwd', base: '/etc/passwd', missing: [], access: 'write' }, 'x', 'x'))
      .toThrow('CheckedPath is created by PathResolver.resolve()')
    expect(() => realPathOf(Object.create(CheckedPath.prototype))).toThrow('not a CheckedPath issued by PathResolver.resolve()')
    await tree(box.root, { 'a.txt': 'A' })
    const checked = await resolver.resolve('a.txt', undefined, { access: 'read', intent: 'existing' })
    expect(Object.isFrozen(checked)).toBe(true)
    expect({ ...checked }).toEqual({ target: 'a.txt', display: 'a.txt', access: 'read', exists: true, kind: 'file' })
  })
})
