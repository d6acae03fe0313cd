import { mkfifo } from './fifo'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { Tool } from '@dogu/core'
import plugin, { Config, apply, createFsTools, inject, name } from '../src'
import { type Sandbox, failure, invoke, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

describe('list', () => {
  test('one level, sorted, kinds as suffixes, stable paging', async () => {
    const files: Record<string, string | { link: string }> = { 'dir/inner.txt': '', 'link': { link: 'dir' } }
    for (let i = 0; i < 5; i++) files[`f${i}.txt`] = ''
    await tree(box.root, files)
    await mkfifo(`${box.root}/pipe`)
    const fs = createFsTools({ workspace: box.root })
    const all = await invoke(fs.tools.list, {})
    expect(all.text).toBe(['dir/', 'f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt', 'link@', 'pipe?'].join('\n'))
    expect(all.data.entries[0]).toEqual({ name: 'dir', kind: 'directory' })
    const page = await invoke(fs.tools.list, { offset: 2, limit: 3 })
    expect(page.text).toBe('f1.txt\nf2.txt\nf3.txt\n[entries 3-5 of 8; continue with offset=5]')
    expect((await invoke(fs.tools.list, { offset: 5, limit: 3 })).text).toBe('f4.txt\nlink@\npipe?\n[entries 6-8 of 8]')
    expect((await invoke(fs.tools.list, { offset: 9 })).text).toBe('[offset 9 is past the end: . has 8 entries]')
    expect((await invoke(fs.tools.list, { path: 'dir/' })).text).toBe('inner.txt')
  })

  test('refuses files and missing directories', async () => {
    await tree(box.root, { 'a.txt': '' })
    const fs = createFsTools({ workspace: box.root })
    const file = await failure(invoke(fs.tools.list, { path: 'a.txt' }))
    expect([file.code, file.message]).toEqual(['NOT_A_DIRECTORY', '"a.txt" is not a directory'])
    expect((await failure(invoke(fs.tools.list, { path: 'nope' }))).code).toBe('NOT_FOUND')
  })
})

describe('pack and plugin', () => {
  test('six tools with their effects, and a name prefix', () => {
    const fs = createFsTools({ workspace: box.root, prefix: 'fs_' })
    expect(Object.values(fs.tools).map((tool) => [tool.name, tool.traits.effect])).toEqual([
      ['fs_read', 'read'], ['fs_write', 'write'], ['fs_edit', 'write'], ['fs_grep', 'read'], ['fs_glob', 'read'], ['fs_list', 'read'],
    ])
  })

  test('the Cordis plugin defines every tool on ctx.tools, without importing cordis', () => {
    const defined: Tool[] = []
    const ctx = { tools: { define: (tool: Tool) => { defined.push(tool); return () => {} } } }
    const config = Config({ workspace: box.root, prefix: 'x_' } as Config)
    expect(config).toEqual({ workspace: box.root, readOnly: [], protected: ['.git', '.env', '.env.*'], prefix: 'x_', ignore: ['.git', 'node_modules'] })
    const pack = apply(ctx, config)
    expect(defined.map((tool) => tool.name)).toEqual(['x_read', 'x_write', 'x_edit', 'x_grep', 'x_glob', 'x_list'])
    expect(pack.changes.list()).toEqual([])
    expect([name, inject]).toEqual(['dogu-fs', ['tools']])
    expect(plugin).toEqual({ name, inject, Config, apply })
    expect(() => Config({} as Config)).toThrow('$.workspace missing required value')
  })

  test('bad options are developer errors, thrown at creation', () => {
    expect(() => createFsTools({ workspace: '' })).toThrow('workspace must be a non-empty path')
    expect(() => createFsTools({ workspace: box.root, limits: { readBytes: 0 } })).toThrow('limits.readBytes must be a positive number')
  })
})
