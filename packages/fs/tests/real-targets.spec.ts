import { readdir, readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { PermissionEngine, type ToolCall } from '@dogu/core'
import { createFsTools } from '../src'
import { type Sandbox, failure, fakeCall, invoke, sandbox, tree } from './helpers'

// Issue 25, items 15 and 16: permission targets are real paths, and protected names are
// protected at any depth and through links.

let box: Sandbox
beforeEach(async () => {
  box = await sandbox()
  await tree(box.root, {
    'secrets/key.txt': 'KEY',
    'secrets/sub/deep.txt': 'DEEP',
    'secretsX/open.txt': 'open',
    'public/readme.md': 'hi',
    'notsecret': { link: 'secrets' },
    'alias.txt': { link: 'secrets/key.txt' },
    'hop': { link: 'notsecret' },
    'public/up': { link: '../secrets/sub' },
  })
})
afterEach(() => box.cleanup())

const quiet = { debug() {}, warn() {} }

describe('permission targets are judged by the real path (item 15)', () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['a linked directory', 'notsecret/key.txt', {}, 'secrets/key.txt'],
    ['a link to a file', 'alias.txt', {}, 'secrets/key.txt'],
    ['a chain of links', 'hop/key.txt', {}, 'secrets/key.txt'],
    ['a new file below a linked directory (nearest existing parent)', 'notsecret/new.txt', {}, 'secrets/new.txt'],
    ['new directories below a linked directory', 'notsecret/a/b/c.txt', {}, 'secrets/a/b/c.txt'],
    ['a link one level down, climbing back', 'public/up/deep.txt', {}, 'secrets/sub/deep.txt'],
    ['session.cwd through a link', 'key.txt', { cwd: 'notsecret' }, 'secrets/key.txt'],
    ['.. after a linked cwd folds from the real cwd, as the resolver does', '../sub/deep.txt', { cwd: 'hop/sub' }, 'secrets/sub/deep.txt'],
    ['a plain path is its own target', 'public/readme.md', {}, 'public/readme.md'],
  ]
  test.each(cases)('%s: %s is judged as its real place', (_, path, session, expected) => {
    const fs = createFsTools({ workspace: box.root })
    const call = fakeCall(session)
    expect(fs.tools.read.permission!({ path }, call).target).toBe(expected)
    expect(fs.tools.write.permission!({ path, content: '' }, call).target).toBe(expected)
    expect(fs.tools.edit.permission!({ path, oldText: '', newText: '' }, call).target).toBe(expected)
  })

  test('a deny rule on secrets/** stops read, write, edit, list, grep and glob through every link; siblings are not caught', async () => {
    const fs = createFsTools({ workspace: box.root })
    const permissions = new PermissionEngine({ logger: quiet, rules: [
      { permission: 'fs.*', target: 'secrets', decision: 'deny' },
      { permission: 'fs.*', target: 'secrets/**', decision: 'deny' },
      { permission: 'fs.*', decision: 'allow' },
    ] })
    const decide = (tool: keyof typeof fs.tools, args: Record<string, unknown>, session = {}) => {
      const call = fakeCall(session)
      const permission = fs.tools[tool].permission!(args as never, call)
      return permissions.authorize({ session: call.session, permission, effect: fs.tools[tool].traits.effect, tool: tool, args }).decision
    }
    for (const path of ['notsecret/key.txt', 'alias.txt', 'hop/key.txt', 'public/up/deep.txt', 'notsecret//key.txt', 'public/../notsecret/key.txt']) {
      expect([path, decide('read', { path })]).toEqual([path, 'deny'])
      expect([path, decide('write', { path, content: 'x' })]).toEqual([path, 'deny'])
      expect([path, decide('edit', { path, oldText: 'KEY', newText: 'x' })]).toEqual([path, 'deny'])
    }
    expect(decide('write', { path: 'notsecret/new/file.txt', content: 'x' })).toBe('deny')
    expect(decide('list', { path: 'notsecret' })).toBe('deny')
    expect(decide('grep', { pattern: 'KEY', path: 'hop' })).toBe('deny')
    expect(decide('glob', { pattern: '*', path: 'public/up' })).toBe('deny')
    expect(decide('read', { path: 'key.txt' }, { cwd: 'notsecret' })).toBe('deny')
    // A sibling with the same prefix, and the link's own directory, are not secrets.
    expect(decide('read', { path: 'secretsX/open.txt' })).toBe('allow')
    expect(decide('write', { path: 'public/readme.md', content: 'x' })).toBe('allow')
  })

  test('a link created between the permission check and the run is refused, not followed', async () => {
    const fs = createFsTools({ workspace: box.root })
    for (const tool of ['read', 'write'] as const) {
      const path = `later-${tool}/key.txt`
      const call = fakeCall() as ToolCall
      const args = fs.tools[tool].args(tool === 'read' ? { path } : { path, content: 'pwned' })
      // Asked for `later-…/key.txt`, a new file in a new directory: an allow rule could match.
      expect(fs.tools[tool].permission!(args, call).target).toBe(path)
      await symlink('secrets', join(box.root, `later-${tool}`))
      const error = await failure(Promise.resolve().then(() => fs.tools[tool].run(args, call)))
      expect([tool, error.code]).toEqual([tool, 'CHANGED'])
    }
    expect(await readFile(join(box.root, 'secrets/key.txt'), 'utf8')).toBe('KEY')
  })

  test('unresolvable paths keep their lexical target (the call fails later)', async () => {
    await tree(box.root, { 'dangling': { link: 'nowhere/x' }, 'loop': { link: 'loop' } })
    const fs = createFsTools({ workspace: box.root })
    const call = fakeCall()
    expect(fs.tools.read.permission!({ path: 'dangling' }, call).target).toBe('dangling')
    expect(fs.tools.read.permission!({ path: 'loop/x' }, call).target).toBe('loop/x')
    expect(fs.tools.read.permission!({ path: 'a\0b' }, call).target).toBe('a\0b')
    expect(fs.tools.read.permission!({ path: 'public/readme.md/x' }, call).target).toBe('public/readme.md/x')
  })
})

describe('protected names at any depth and through links (item 16)', () => {
  beforeEach(async () => {
    await tree(box.root, {
      'sub/.git/config': 'cfg',
      'sub/.env': 'KEY=1',
      'a/b/.env.local': 'KEY=2',
      'config/secret.json': '{}',
      'repo-link': { link: 'sub/.git' },
      'env-link': { link: 'sub/.env' },
      'sub/.github/workflow.yml': 'on: push',
      'sub/my.env': 'x',
    })
  })

  test('writes to protected names below the root, and through links to them, are refused', async () => {
    const fs = createFsTools({ workspace: box.root, protected: ['.git', '.env', '.env.*', 'config/secret.json'] })
    for (const path of ['sub/.git/config', 'sub/.git/hooks/pre-commit', 'sub/.env', 'a/b/.env.local', 'a/b/c/.env.production', 'x/y/.git', 'repo-link/config', 'env-link', 'sub/./.git/../.git/HEAD', 'config/secret.json']) {
      const error = await failure(invoke(fs.tools.write, { path, content: 'pwned' }))
      expect([path, error.code]).toEqual([path, 'READ_ONLY'])
    }
    expect((await failure(invoke(fs.tools.edit, { path: 'sub/.env', oldText: 'KEY=1', newText: 'KEY=2' }))).code).toBe('READ_ONLY')
    expect((await failure(invoke(fs.tools.edit, { path: 'env-link', oldText: 'KEY=1', newText: 'KEY=2' }))).code).toBe('READ_ONLY')
    expect(await readFile(join(box.root, 'sub/.env'), 'utf8')).toBe('KEY=1')
    expect(await readdir(join(box.root, 'sub/.git'))).toEqual(['config'])
    expect(await readdir(join(box.root, 'a/b'))).toEqual(['.env.local'])
  })

  test('names that only share a prefix, and a glob with "/" below the root, stay writable', async () => {
    const fs = createFsTools({ workspace: box.root, protected: ['.git', '.env', '.env.*', 'config/secret.json'] })
    for (const path of ['sub/.github/workflow.yml', 'sub/my.env', 'sub/.gitignore', 'sub/.environment', 'deep/config/secret.json']) {
      expect([path, (await invoke(fs.tools.write, { path, content: 'ok' })).data.status]).toEqual([path, expect.stringMatching(/created|overwritten/)])
    }
  })

  test('a protected path is still readable', async () => {
    const fs = createFsTools({ workspace: box.root, protected: ['.git', '.env'] })
    expect((await invoke(fs.tools.read, { path: 'sub/.git/config' })).text).toBe('cfg')
    expect((await invoke(fs.tools.read, { path: 'env-link' })).text).toBe('KEY=1')
  })
})
