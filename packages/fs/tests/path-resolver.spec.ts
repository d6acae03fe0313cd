import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsTools, PathResolver } from '../src'
import { inside } from '../src/path-resolver'
import { failure, invoke, tree } from './helpers'

const SECRET = 'SECRET-IN-THE-SIBLING'

// A workspace `ws` beside `ws-evil`, whose name starts with the workspace's: a prefix
// test without the separator would take one for the other.
let base: string
let ws: string
let evil: string
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'dogu-fs-')))
  ws = join(base, 'ws')
  evil = join(base, 'ws-evil')
  await mkdir(ws)
  await tree(base, { 'ws-evil/secret': SECRET, 'ro/notes': 'read-only', 'ro-evil/secret': SECRET })
  await tree(ws, { 'evil': { link: '../ws-evil' }, 'secret-link': { link: '../ws-evil/secret' }, 'ok.txt': 'ok' })
})
afterEach(() => rm(base, { recursive: true, force: true }))

describe('inside()', () => {
  it('holds the root itself and paths below it, not siblings that share its prefix', () => {
    expect(inside('/ws', '/ws')).toBe(true)
    expect(inside('/ws/x', '/ws')).toBe(true)
    expect(inside('/ws-evil', '/ws')).toBe(false)
    expect(inside('/ws-evil/x', '/ws')).toBe(false)
    expect(inside('/wsx', '/ws')).toBe(false)
    expect(inside('/', '/ws')).toBe(false)
    expect(inside('/ws/x', '/ws/')).toBe(true)
    expect(inside('/anything', '/')).toBe(true)
  })
})

describe('PathResolver: a sibling whose name starts with the workspace\'s', () => {
  it.each([
    ['../ws-evil/secret', 'is outside the allowed roots'],
    ['<base>/ws-evil/secret', 'is outside the allowed roots'],
    ['evil/secret', 'leads outside the allowed roots through a symbolic link'],
    ['secret-link', 'leads outside the allowed roots through a symbolic link'],
  ])('refuses %s for reading and writing', async (input, message) => {
    const path = input.replace('<base>', base)
    const resolver = new PathResolver({ workspace: ws })
    for (const access of ['read', 'write'] as const) {
      const error = await failure(resolver.resolve(path, undefined, { access, intent: access === 'read' ? 'existing' : 'create' }))
      expect([error.code, error.message]).toEqual(['OUTSIDE_ROOT', expect.stringContaining(message)])
    }
  })

  it('gives the sibling an absolute permission target, not a workspace-relative one', () => {
    const resolver = new PathResolver({ workspace: ws })
    expect(resolver.target('../ws-evil/secret')).toBe(join(evil, 'secret'))
    expect(resolver.target(join(evil, 'secret'))).toBe(join(evil, 'secret'))
    expect(resolver.target('ok.txt')).toBe('ok.txt')
  })

  it('refuses a session working directory in the sibling', async () => {
    const resolver = new PathResolver({ workspace: ws })
    const error = await failure(resolver.resolve('secret', { id: 's', cwd: '../ws-evil' }, { access: 'read', intent: 'existing' }))
    expect(error.code).toBe('OUTSIDE_ROOT')
  })

  it('keeps a read-only root apart from its own prefixed sibling', async () => {
    const resolver = new PathResolver({ workspace: ws, readOnly: [join(base, 'ro')] })
    expect((await resolver.resolve('../ro/notes', undefined, { access: 'read', intent: 'existing' })).display).toBe(join(base, 'ro/notes'))
    const error = await failure(resolver.resolve('../ro-evil/secret', undefined, { access: 'read', intent: 'existing' }))
    expect(error.code).toBe('OUTSIDE_ROOT')
  })
})

describe('fs tools: a sibling whose name starts with the workspace\'s', () => {
  it('read, list and write refuse it by relative path, absolute path and link', async () => {
    const { tools } = createFsTools({ workspace: ws })
    for (const path of ['../ws-evil/secret', join(evil, 'secret'), 'evil/secret', 'secret-link']) {
      const error = await failure(invoke(tools.read, { path }))
      expect([path, error.code]).toEqual([path, 'OUTSIDE_ROOT'])
      expect(error.message).not.toContain(SECRET)
    }
    for (const path of ['../ws-evil', evil, 'evil']) {
      expect([path, (await failure(invoke(tools.list, { path }))).code]).toEqual([path, 'OUTSIDE_ROOT'])
    }
    for (const path of ['../ws-evil/new.txt', join(evil, 'new.txt'), 'evil/new.txt', 'secret-link']) {
      expect([path, (await failure(invoke(tools.write, { path, content: 'pwned' }))).code]).toEqual([path, 'OUTSIDE_ROOT'])
    }
    expect(await readFile(join(evil, 'secret'), 'utf8')).toBe(SECRET)
    await expect(readFile(join(evil, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await invoke(tools.read, { path: 'ok.txt' })).text).toBe('ok')
  })
})
