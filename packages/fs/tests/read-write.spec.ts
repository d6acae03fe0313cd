import { readdir, readFile, stat, writeFile, chmod } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { type Sandbox, failure, invoke, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

const lines = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${i + from}\n`).join('')

describe('read', () => {
  test('returns a whole small file as is', async () => {
    await tree(box.root, { 'a.txt': '\uFEFFone\r\ntwo' })
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.read, { path: 'a.txt' })
    expect(output.text).toBe('\uFEFFone\r\ntwo')
    expect(output.data).toEqual({ path: 'a.txt', offset: 0, lines: 2, totalLines: 2, size: 11, truncated: false })
  })

  test('pages with a zero-based offset and a line limit', async () => {
    await tree(box.root, { 'a.txt': lines(10) })
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.read, { path: 'a.txt', offset: 2, limit: 3 })).text)
      .toBe('line 3\nline 4\nline 5\n[lines 3-5; more follow: continue with offset=5]')
    expect((await invoke(fs.tools.read, { path: 'a.txt', offset: 8 })).text).toBe('line 9\nline 10\n[lines 9-10 of 10]')
    expect((await invoke(fs.tools.read, { path: 'a.txt', offset: 8, limit: 2 })).text).toBe('line 9\nline 10\n[lines 9-10 of 10]')
    expect((await invoke(fs.tools.read, { path: 'a.txt', offset: 12 })).text).toBe('[offset 12 is past the end: a.txt has 10 lines]')
    expect((await invoke(fs.tools.read, { path: 'a.txt', limit: 3 })).data.truncated).toBe(true)
  })

  test('limit is 1-2000 and offset a natural number (schema errors, before running)', () => {
    const fs = createFsTools({ workspace: box.root })
    expect(() => fs.tools.read.args({ path: 'a', limit: 2001 })).toThrow('$.limit expected number <= 2000 but got 2001')
    expect(() => fs.tools.read.args({ path: 'a', limit: 0 })).toThrow('$.limit expected number >= 1 but got 0')
    expect(() => fs.tools.read.args({ path: 'a', offset: -1 })).toThrow('$.offset expected number >= 0 but got -1')
  })

  test('a file over the byte cap is streamed, never loaded whole, and the cut is explicit', async () => {
    await tree(box.root, { 'big.txt': lines(200_000) })
    const fs = createFsTools({ workspace: box.root, limits: { readBytes: 1000 } })
    const first = await invoke(fs.tools.read, { path: 'big.txt' })
    expect(first.text).toBe(`${lines(123)}[stopped at the 1000 B limit after line 123; continue with offset=123]`)
    expect(first.data).toMatchObject({ lines: 123, totalLines: undefined, truncated: true })
    const page = await invoke(fs.tools.read, { path: 'big.txt', offset: 150_000, limit: 2 })
    expect(page.text).toBe('line 150001\nline 150002\n[lines 150001-150002; more follow: continue with offset=150002]')
  })

  test('a single line longer than the cap is cut and marked', async () => {
    await tree(box.root, { 'min.js': 'x'.repeat(5000) + '\nnext\n' })
    const fs = createFsTools({ workspace: box.root, limits: { readBytes: 100 } })
    expect((await invoke(fs.tools.read, { path: 'min.js' })).text).toBe(`${'x'.repeat(100)}\n[line 1 is longer than 100 B and was cut]`)
  })

  test('binary files and invalid UTF-8 are reported, directories refused', async () => {
    await writeFile(join(box.root, 'img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
    await writeFile(join(box.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    await tree(box.root, { 'dir/': null, 'empty.txt': '' })
    const fs = createFsTools({ workspace: box.root })
    const binary = await failure(invoke(fs.tools.read, { path: 'img.png' }))
    expect([binary.code, binary.message]).toEqual(['BINARY', 'img.png is a binary file'])
    const latin1 = await failure(invoke(fs.tools.read, { path: 'latin1.txt' }))
    expect([latin1.code, latin1.message]).toEqual(['INVALID_UTF8', 'latin1.txt is not valid UTF-8 text'])
    const dir = await failure(invoke(fs.tools.read, { path: 'dir' }))
    expect([dir.code, dir.message]).toEqual(['NOT_A_FILE', '"dir" is a directory, not a file'])
    const missing = await failure(invoke(fs.tools.read, { path: 'nope.txt' }))
    expect([missing.code, missing.message]).toEqual(['NOT_FOUND', '"nope.txt" does not exist'])
    expect((await invoke(fs.tools.read, { path: 'empty.txt' })).text).toBe('[empty file]')
  })

  test('a multi-byte character split across read chunks is decoded whole', async () => {
    await tree(box.root, { 'u.txt': 'é'.repeat(70_000) })
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.read, { path: 'u.txt' })).text).toBe('é'.repeat(70_000))
  })
})

describe('write', () => {
  test('creates a file and its missing parents, and reports it', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.write, { path: 'a/b/c.txt', content: 'one\ntwo\n' })
    expect(output.text).toBe('Created a/b/c.txt (2 lines).')
    expect(output.data).toEqual({ path: 'a/b/c.txt', status: 'created', changeId: output.artifacts![0].id, added: 2, removed: 0 })
    expect(await readFile(join(box.root, 'a/b/c.txt'), 'utf8')).toBe('one\ntwo\n')
  })

  test('overwrites atomically, keeps the mode, leaves no temporary file', async () => {
    await tree(box.root, { 'run.sh': 'echo 1\n' })
    await chmod(join(box.root, 'run.sh'), 0o751)
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.write, { path: 'run.sh', content: 'echo 2\n' })
    expect(output.text).toBe('Overwrote run.sh: +1 -1 lines.')
    expect(output.data.status).toBe('overwritten')
    expect((await stat(join(box.root, 'run.sh'))).mode & 0o777).toBe(0o751)
    expect(await readdir(box.root)).toEqual(['run.sh'])
  })

  test('the same content is "unchanged", with no artifact', async () => {
    await tree(box.root, { 'a.txt': 'same' })
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.write, { path: 'a.txt', content: 'same' })
    expect(output).toEqual({ text: 'No change: a.txt already has this content.', data: { path: 'a.txt', status: 'unchanged' } })
    expect(fs.changes.list()).toEqual([])
  })

  test('refuses content over the limit, and replacing binary or oversized files', async () => {
    await writeFile(join(box.root, 'bin'), Buffer.from([1, 0, 2]))
    await tree(box.root, { 'large.txt': 'x'.repeat(200) })
    const fs = createFsTools({ workspace: box.root, limits: { writeBytes: 100 } })
    const big = await failure(invoke(fs.tools.write, { path: 'new.txt', content: 'y'.repeat(101) }))
    expect([big.code, big.message]).toEqual(['TOO_LARGE', 'the content is 101 B, over the 100 B limit for write'])
    const binary = await failure(invoke(fs.tools.write, { path: 'bin', content: 'text' }))
    expect([binary.code, binary.message]).toEqual(['BINARY', 'bin is a binary file; write only replaces UTF-8 text files (so the change can be undone)'])
    const large = await failure(invoke(fs.tools.write, { path: 'large.txt', content: 'small' }))
    expect([large.code, large.message]).toEqual(['TOO_LARGE', 'large.txt is 200 B, over the 100 B limit for this operation; write only replaces UTF-8 text files (so the change can be undone)'])
    expect(await readdir(box.root)).toEqual(['bin', 'large.txt'])
  })

  test('a path ending in "/" is not a file path', async () => {
    const fs = createFsTools({ workspace: box.root })
    const error = await failure(invoke(fs.tools.write, { path: 'notes/', content: 'x' }))
    expect([error.code, error.message]).toEqual(['INVALID_PATH', '"notes/" ends with "/"; give a file path'])
  })
})
