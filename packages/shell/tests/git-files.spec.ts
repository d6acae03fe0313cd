// The git config reader and the index reader behind the repository check, compared with
// real git: a key git sees must not be missed, a submodule git records must be found.
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseGitConfig } from '../src/git-config-file'
import { gitlinkPaths } from '../src/git-index'
import { git, requireProgram, tempDir, writeFiles } from './attack-helpers'

const base = tempDir('dogu-git-files-')
afterAll(() => rmSync(base, { recursive: true, force: true }))
beforeAll(() => requireProgram('git', 'apt-get install -y git'))

/** The keys git itself reads from `text`, lowercased as this reader reports them. */
function gitKeys(text: string): string[] | undefined {
  const file = join(base, 'probe.config')
  writeFileSync(file, text)
  const result = spawnSync('git', ['config', '--file', file, '--no-includes', '--list', '--name-only'], { encoding: 'utf8' })
  return result.status === 0 ? result.stdout.split('\n').filter(Boolean).map(lower) : undefined
}

// Section and name without case; a subsection keeps its case (git's `--name-only` does too).
function lower(key: string) {
  const first = key.indexOf('.')
  const last = key.lastIndexOf('.')
  return first === last ? key.toLowerCase() : `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`
}

describe('parseGitConfig', () => {
  it.each([
    ['[core]\n\tfsmonitor = x\n'],
    ['[core] fsmonitor = x\n'],
    ['[core]fsmonitor=x'],
    ['[CORE]\n\tFsMonitor = x\n[Diff "Pdf"]\n\ttextconv = y\n'],
    ['[diff.pdf]\n\ttextconv = y\n'],
    ['[remote "a\\"b"]\n\turl = x\n'],
    ['# comment\n; comment\n[core]\n\tbare\n\tpager = "less # not a comment" # comment\n'],
    ['[core]\n\tpager = a \\\n\tb\n\tfsmonitor = c\n'],
    ['[core]\n\tpager = "a\\\nfsmonitor = c"\n'],
    ['\ufeff[core]\n\tfsmonitor = x\n'],
    ['[core]\r\n\tfsmonitor = x\r\n'],
    ['[include]\n\tpath = ../x\n[includeIf "gitdir:/x/"]\n\tpath = y\n'],
    ['[a]b=1\n[c]d=2'],
  ])('finds the keys git finds in %j', (text) => {
    const keys = gitKeys(text)
    expect(keys).toBeDefined()
    expect(parseGitConfig(text)?.map((entry) => entry.key)).toEqual(keys)
  })

  it.each([
    ['[core\n\tfsmonitor = x\n'],
    ['[core]\n\tpager = "unterminated\n'],
    ['[core]\n\tpager = \\q\n'],
    ['[core "x]\n'],
    ['[core]\n\t=x\n'],
  ])('gives up where git does: %j', (text) => {
    expect(gitKeys(text)).toBeUndefined()
    expect(parseGitConfig(text)).toBeUndefined()
  })

  it('gives up on a key before any section, which git reads as a key of no section', () => {
    expect(gitKeys('fsmonitor = x\n')).toEqual(['fsmonitor'])
    expect(parseGitConfig('fsmonitor = x\n')).toBeUndefined()
  })

  it('reads values with quotes and escapes', () => {
    expect(parseGitConfig('[core]\n\tfsmonitor = "touch  x; false" # c\n\tbare\n')).toEqual([
      { key: 'core.fsmonitor', value: 'touch  x; false' },
      { key: 'core.bare', value: null },
    ])
  })
})

describe('gitlinkPaths', () => {
  /** A repository with two submodules and `extra` files, by git. */
  function repository(name: string, init: string[] = []) {
    const dir = join(base, name)
    const upstream = join(base, `${name}-upstream`)
    writeFiles(upstream, { 'u.txt': 'u\n' })
    git(upstream, 'init', '-q', ...init)
    git(upstream, 'add', '.')
    git(upstream, 'commit', '-qm', 'u')
    writeFiles(dir, { 'a.txt': 'a\n', 'deep/er/b.txt': 'b\n' })
    git(dir, 'init', '-q', ...init)
    git(dir, 'add', '.')
    git(dir, 'submodule', '-q', 'add', upstream, 'libs/one')
    git(dir, 'submodule', '-q', 'add', upstream, 'two')
    git(dir, 'commit', '-qm', 'a')
    return dir
  }

  const gitlinks = (dir: string) => git(dir, 'ls-files', '--stage').split('\n').filter((line) => line.startsWith('160000')).map((line) => line.split('\t')[1])
  const read = (dir: string, hashSize = 20) => gitlinkPaths(readFileSync(join(dir, '.git/index')), hashSize)

  it('finds the submodules of a version 2 index', () => {
    const dir = repository('v2')
    expect(gitlinks(dir)).toEqual(['libs/one', 'two'])
    expect(read(dir)).toEqual(['libs/one', 'two'])
  })

  it('finds them in a version 3 index (extended flags) and a version 4 one (compressed names)', () => {
    const dir = repository('v34')
    writeFiles(dir, { 'intent.txt': 'i\n' })
    git(dir, 'add', '-N', 'intent.txt')
    expect(read(dir)).toEqual(['libs/one', 'two'])
    git(dir, 'update-index', '--index-version', '4')
    expect(read(dir)).toEqual(['libs/one', 'two'])
  })

  it('finds them in a SHA-256 repository', () => {
    const dir = repository('sha256', ['--object-format=sha256'])
    expect(read(dir, 32)).toEqual(['libs/one', 'two'])
  })

  it('gives up on a split index and on a file that is not an index', () => {
    const dir = repository('split')
    git(dir, 'update-index', '--split-index')
    expect(read(dir)).toBeUndefined()
    expect(gitlinkPaths(Buffer.from('DIRC not really'), 20)).toBeUndefined()
    expect(gitlinkPaths(readFileSync(join(repository('short'), '.git/index')).subarray(0, 100), 20)).toBeUndefined()
  })
})
