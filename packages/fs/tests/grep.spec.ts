import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { type Sandbox, failure, fakeCall, invoke, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => {
  box = await sandbox()
  await tree(box.root, {
    'src/a.ts': 'import x from "y"\nexport const TODO = 1\n// todo: later\n',
    'src/b.js': 'function todo() {}\nTODO()\nTODO()\n',
    'src/deep/c.ts': 'nothing here\n',
    'README.md': '# TODO list\r\n',
    '.hidden/h.ts': 'TODO hidden\n',
    'node_modules/m/index.js': 'TODO in deps\n',
    '.git/HEAD': 'TODO in git\n',
  })
  await writeFile(join(box.root, 'src/blob.bin'), Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]))
})
afterEach(() => box.cleanup())

describe('grep', () => {
  test('content mode: path:line:text in walk order, binary skipped and counted, ignored dirs not entered', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.grep, { pattern: 'TODO' })
    expect(output.text).toBe([
      '.hidden/h.ts:1:TODO hidden',
      'README.md:1:# TODO list',
      'src/a.ts:2:export const TODO = 1',
      'src/b.js:2:TODO()',
      'src/b.js:3:TODO()',
      '[skipped files: 1 binary]',
    ].join('\n'))
    expect(output.data).toMatchObject({ results: 5, truncated: false, scanned: 5, skippedBinary: 1, skippedLarge: 0 })
  })

  test('files and count modes, ignoreCase, literal, and a glob filter matching names at any depth', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.grep, { pattern: 'todo', ignoreCase: true, mode: 'files', glob: '*.ts' })).text)
      .toBe(['.hidden/h.ts', 'src/a.ts'].join('\n'))
    expect((await invoke(fs.tools.grep, { pattern: 'todo', ignoreCase: true, mode: 'count', path: 'src' })).text)
      .toBe(['src/a.ts:2', 'src/b.js:3', '[skipped files: 1 binary]'].join('\n'))
    expect((await invoke(fs.tools.grep, { pattern: 'TODO()', literal: true, mode: 'count' })).text).toBe('src/b.js:2\n[skipped files: 1 binary]')
    expect((await invoke(fs.tools.grep, { pattern: 'TODO', glob: 'src/**/*.ts' })).text).toBe('src/a.ts:2:export const TODO = 1')
  })

  test('a single file, an explicit path into an ignored directory, and no matches', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.grep, { pattern: '^TODO', path: 'src/b.js' })).text).toBe('src/b.js:2:TODO()\nsrc/b.js:3:TODO()')
    expect((await invoke(fs.tools.grep, { pattern: 'TODO', path: 'node_modules' })).text).toBe('node_modules/m/index.js:1:TODO in deps')
    expect((await invoke(fs.tools.grep, { pattern: 'absent', path: 'src' })).text)
      .toBe('No matches in src (3 files searched).\n[skipped files: 1 binary]')
  })

  test('matches are per line: a pattern cannot span lines, and $ after the last newline is no line', async () => {
    await tree(box.root, { 'x/l.txt': 'foo\nbar\n' })
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.grep, { pattern: 'foo\\sbar', path: 'x' })).text).toBe('No matches in x (1 file searched).')
    expect((await invoke(fs.tools.grep, { pattern: '$', path: 'x', mode: 'count' })).text).toBe('x/l.txt:2')
  })

  test('long lines are cut around the match and marked', async () => {
    await tree(box.root, { 'x/min.js': `${'a'.repeat(1000)}NEEDLE${'b'.repeat(1000)}\n` })
    const fs = createFsTools({ workspace: box.root, limits: { grepLineLength: 40 } })
    const output = await invoke(fs.tools.grep, { pattern: 'NEEDLE', path: 'x' })
    expect(output.text).toBe(`x/min.js:1:…${'a'.repeat(10)}NEEDLE${'b'.repeat(24)}… [line cut: 2006 characters]`)
    expect(output.data.files[0].lines[0].cut).toBe(true)
  })

  test('oversized files are skipped and counted', async () => {
    const fs = createFsTools({ workspace: box.root, limits: { grepFileBytes: 40 } })
    const output = await invoke(fs.tools.grep, { pattern: 'TODO', path: 'src' })
    expect(output.text).toBe('src/b.js:2:TODO()\nsrc/b.js:3:TODO()\n[skipped files: 1 binary, 1 over 40 B]')
  })

  test('maxResults stops the search early and says more exist; 0 is rejected', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 300; i++) files[`many/f${String(i).padStart(3, '0')}.txt`] = 'hit\nhit\n'
    await tree(box.root, files)
    const fs = createFsTools({ workspace: box.root, })
    const output = await invoke(fs.tools.grep, { pattern: 'hit', path: 'many', maxResults: 5 })
    expect(output.text).toBe([
      'many/f000.txt:1:hit', 'many/f000.txt:2:hit', 'many/f001.txt:1:hit', 'many/f001.txt:2:hit', 'many/f002.txt:1:hit',
      '[stopped at maxResults=5; more matches exist]',
    ].join('\n'))
    // Files are searched in walk order; the third file's second line is the sixth result: stop.
    expect(output.data.scanned).toBe(3)
    const files2 = await invoke(fs.tools.grep, { pattern: 'hit', path: 'many', mode: 'files', maxResults: 2 })
    expect(files2.text).toBe('many/f000.txt\nmany/f001.txt\n[stopped at maxResults=2; more matches exist]')
    expect(() => fs.tools.grep.args({ pattern: 'x', maxResults: 0 })).toThrow('$.maxResults expected number >= 1 but got 0')
  })

  test('exactly maxResults results is not truncated', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.grep, { pattern: 'TODO', path: 'src', maxResults: 3 })
    expect(output.data.truncated).toBe(false)
    expect(output.text).not.toContain('stopped')
  })

  test('cancellation mid-search rejects with the abort reason and stops reporting', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 1200; i++) files[`many/f${String(i).padStart(4, '0')}.txt`] = 'x\n'
    await tree(box.root, files)
    const fs = createFsTools({ workspace: box.root, limits: { grepProgressEvery: 100 } })
    const reason = new Error('user pressed stop')
    // Abort from inside the search, at its first progress report (after 100 files).
    const call = fakeCall({}, (_, self) => self.controller.abort(reason))
    const error = await invoke(fs.tools.grep, { pattern: 'x', path: 'many' }, call).then(() => undefined, (error) => error)
    expect(error).toBe(reason)
    expect(call.progressed).toEqual(['searched 100 files, 100 results so far'])
  })

  test('bad patterns are clear argument errors', async () => {
    const fs = createFsTools({ workspace: box.root })
    const regex = await failure(invoke(fs.tools.grep, { pattern: 'a(' }))
    expect([regex.code, regex.message]).toEqual(['INVALID_ARGUMENT', 'pattern is not a valid JavaScript regular expression: Invalid regular expression: /a(/: Unterminated group'])
    const glob = await failure(invoke(fs.tools.grep, { pattern: 'a', glob: '../*.ts' }))
    expect([glob.code, glob.message]).toEqual(['INVALID_ARGUMENT', 'glob "../*.ts" has a ".." segment; patterns match below the searched directory (set path to search elsewhere)'])
  })
})
