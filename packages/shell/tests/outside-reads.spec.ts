// Issue 25, class 2 (what argument-model.spec.ts cannot see: option values that are files,
// a repository larger than the workspace, the environment) and class 13 (options that make
// a program read a list of paths from a file, and reads that never end). Each case shows
// with the real program that the read happens, then that `bash` refuses it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ToolRegistry } from '@dogu/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classifyCommand } from '../src/classify-command'
import { createShellTool, ProcessTable } from '../src'
import { git, guardedShell, requireProgram, tempDir, writeFiles } from './attack-helpers'

const TOKEN = `QZXSECRET${process.pid}`
const base = tempDir('dogu-outside-reads-')
const outside = join(base, 'outside')
const target = join(outside, `${TOKEN}-target`)
const ws = join(base, 'ws')
mkdirSync(join(outside, 'dir', `${TOKEN}-entry`), { recursive: true })
writeFileSync(target, `${TOKEN} line\n`)
writeFileSync(join(outside, 'dir', `${TOKEN}-file`), `${TOKEN} line\n`)
// A distinctive time, so `date -r` shows that it read the file.
utimesSync(target, new Date('2001-02-03T04:05:06Z'), new Date('2001-02-03T04:05:06Z'))
writeFiles(ws, {
  'a.txt': 'one\ntwo\nthree\n',
  'b.txt': 'one\n',
  // Lists naming the outside file: NUL-separated (--files0-from), by line, and as checksums.
  'names0': `${target}\0`,
  'names': `${target}\n`,
  'sums.md5': `${md5(`${TOKEN} line\n`)}  ${target}\n`,
})
symlinkSync(target, join(ws, 'escape'))
symlinkSync(join(outside, 'dir'), join(ws, 'escape.d'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

function md5(text: string) {
  return spawnSync('md5sum', { input: text, encoding: 'utf8' }).stdout.split(' ')[0]
}

/** The real program, in the workspace, with `env` added: its output. */
function real(command: string, env: Record<string, string> = {}, cwd = ws): string {
  const result = spawnSync('bash', ['-c', command], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', input: '', timeout: 10_000 })
  return `${result.stdout}${result.stderr}`
}

beforeAll(() => {
  requireProgram('rg', 'apt-get install -y ripgrep')
  requireProgram('tree', 'apt-get install -y tree')
  requireProgram('git', 'apt-get install -y git')
})

/** Runs `command` through `bash` in readOnly mode: a read runs, anything else is denied. */
async function readOnly(command: string, workspace = ws, cwd?: string) {
  const shell = guardedShell({ workspace }, 'readOnly')
  try {
    return await shell.bash(command, cwd)
  } finally {
    await shell.dispose()
  }
}

describe('class 2: what a read-only command opens is judged by its real path', () => {
  it.each([
    // The review's example and its siblings: `-U`/`--unified` take a value only attached.
    `git diff -U ${target} a.txt`,
    `git diff --unified ${target} a.txt`,
    'git diff -U escape a.txt',
    'git diff -M escape a.txt',
    'git diff -B escape a.txt',
  ])('%s: git reads the outside file; bash in readOnly mode refuses', async (command) => {
    expect(real(command)).toContain(TOKEN)
    const result = await readOnly(command)
    expect(result.status).toBe('denied')
    expect(result.content).not.toContain(TOKEN)
  })

  it.each([
    ['date -r escape +%Y', '2001'],
    [`date --reference=${target} +%Y`, '2001'],
    ['find . -newer escape -name a.txt', null],
    ['find . -samefile escape', null],
    ['realpath --relative-to=escape.d a.txt', null],
    ['diff -X escape a.txt b.txt', null],
  ] as const)('%s: an option whose value is a file is judged like an operand', (command, shows) => {
    if (shows) expect(real(command)).toContain(shows)
    expect(classifyCommand(command, { workspace: ws })).toMatchObject({ effect: 'exec', reason: expect.stringMatching(/outside/) })
  })

  it('asks for git when the workspace lies inside a larger repository (its history and files are outside)', async () => {
    const parent = join(base, 'parent')
    writeFiles(parent, { 'secret.txt': `${TOKEN}\n`, 'data/workspace/notes.txt': 'notes\n' })
    git(parent, 'init', '-q')
    git(parent, 'add', '.')
    git(parent, 'commit', '-qm', 'secret')
    const inner = join(parent, 'data/workspace')
    expect(real('git show HEAD:secret.txt', {}, inner)).toContain(TOKEN)
    for (const command of ['git show HEAD:secret.txt', 'git log -p', 'git status']) {
      expect(classifyCommand(command, { workspace: inner }).reason).toBe(`git would use the repository at \`${parent}\`, which reaches beyond the workspace`)
      const result = await readOnly(command, inner)
      expect(result.status).toBe('denied')
      expect(result.content).not.toContain(TOKEN)
    }
  })

  it('POSIXLY_CORRECT in the host environment would make grep open what the classifier took for -e\'s value: reads run without it', async () => {
    const command = `grep line a.txt -e ${target}`
    expect(real(command, { POSIXLY_CORRECT: '1' })).toContain(TOKEN)
    expect(classifyCommand(command, { workspace: ws }).effect).toBe('read')
    const processes = new ProcessTable()
    const registry = new ToolRegistry()
    registry.define(createShellTool({ workspace: ws, env: { POSIXLY_CORRECT: '1' }, processes, sandbox: { mode: 'off' } }))
    try {
      const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'c1', name: 'bash', arguments: { command } }])
      expect(result.status).toBe('ok')
      expect(result.content).not.toContain(TOKEN)
    } finally {
      await processes.dispose()
    }
  })

  it('git branch --abbrev takes its value only attached: `git branch --abbrev new` creates a branch, so it is not a read', () => {
    const repo = join(base, 'abbrev')
    writeFiles(repo, { 'a.txt': 'a\n' })
    git(repo, 'init', '-q')
    git(repo, 'add', '.')
    git(repo, 'commit', '-qm', 'a')
    real('git branch --abbrev created', {}, repo)
    expect(git(repo, 'branch', '--list')).toContain('created')
    expect(classifyCommand('git branch --abbrev other', { workspace: repo })).toMatchObject({ effect: 'exec', reason: expect.stringContaining('creates one') })
    expect(classifyCommand('git branch --abbrev=12 -v', { workspace: repo }).effect).toBe('read')
    expect(classifyCommand('git branch --contains HEAD', { workspace: repo }).effect).toBe('read')
  })
})

describe('class 13: options that read a list of paths, and reads that never end', () => {
  it.each([
    // rg has no pattern operand with --files (the review's `rg --files /etc`).
    ['rg --files escape.d', `${TOKEN}-file`],
    ['rg --files a.txt escape.d', `${TOKEN}-file`],
    // Checksums: -c opens every path the list names.
    ['md5sum -c sums.md5', TOKEN],
    ['md5sum --check sums.md5', TOKEN],
    ['md5sum --warn -c sums.md5', TOKEN],
    // Siblings that are not on the list: each reads paths or patterns from a file.
    ['wc --files0-from=names0', TOKEN],
    ['du --files0-from=names0', TOKEN],
    ['sort --files0-from=names0', TOKEN],
    ['find -files0-from names0', TOKEN],
    ['file -f names', TOKEN],
    ['date -f escape', TOKEN],
    ['tree --fromfile escape', TOKEN],
    ['grep -f escape a.txt', null],
    ['grep --file=escape a.txt', null],
    ['rg -f escape a.txt', null],
    ['rg --ignore-file escape x', null],
    ['diff --from-file=escape a.txt', TOKEN],
    ['diff --exclude-from=escape a.txt b.txt', null],
    ['git diff -O escape', null],
    ['git diff --orderfile=escape', null],
    ['git blame --contents escape a.txt', null],
    ['git blame -S escape a.txt', null],
    ['git ls-files -X escape', null],
    ['git grep -f escape', null],
    ['git grep --no-index x', null],
    ['git rev-list --stdin', null],
    ['xargs cat', null],
  ] as const)('%s is not a read', async (command, shows) => {
    if (shows) expect(real(command)).toContain(shows)
    expect(classifyCommand(command, { workspace: ws }).effect).toBe('exec')
  })

  it.each(['sha1sum', 'sha256sum', 'sha512sum'])('%s -c is not a read', (program) => {
    expect(classifyCommand(`${program} -c sums`, { workspace: ws }).reason).toBe(`\`${program} -c\` is not on the read-only list`)
    expect(classifyCommand(`${program} --check sums`, { workspace: ws }).effect).toBe('exec')
  })

  it('tail still takes the old `+N[bcl][f]` form: `tail +1f` follows forever, so no `+` operand is a read', () => {
    // The old form is live: `+2` is an option, not a file.
    expect(real('tail +2 a.txt')).toBe('two\nthree\n')
    for (const command of ['tail +1f a.txt', 'tail +f a.txt', 'tail +2 a.txt', 'tail +1c a.txt', 'tail -n 1 +f']) {
      expect(classifyCommand(command, { workspace: ws }).reason).toMatch(/old-style `\+N`/)
    }
    for (const command of ['tail -F a.txt', 'tail --follow a.txt', 'tail --retry a.txt', 'tail -s 1 a.txt', 'tail --pid=1 a.txt', 'tail -1f a.txt']) {
      expect(classifyCommand(command, { workspace: ws }).effect).toBe('exec')
    }
    expect(classifyCommand('tail -n +2 a.txt', { workspace: ws }).effect).toBe('read')
  })

  it.each(['rg --files /etc', 'rg --files escape.d', 'md5sum -c sums.md5', 'tail +1f a.txt', 'find -files0-from names0'])('bash in readOnly mode refuses %s', async (command) => {
    const result = await readOnly(command)
    expect(result.status).toBe('denied')
    expect(result.content).not.toContain(TOKEN)
  })
})
