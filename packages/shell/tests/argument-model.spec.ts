// Issue 25, class 2: every operand a program opens is judged by its real path, so the
// argument model of each listed command must be the program's own. For every option of
// every spec, this runs the real program with a canary outside the workspace where the
// option's value (or the next operand) would go: whenever the classifier says `read`,
// the canary's content must not appear in what the program printed.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ArgumentSpec } from '../src/argument-spec'
import { classifyCommand } from '../src/classify-command'
import { readEnvironment } from '../src/read-environment'
import { FIND_FLAGS, FIND_TESTS, GIT_SUBCOMMANDS, READ_SPECS } from '../src/read-commands'
import { git, requireProgram, tempDir, writeFiles } from './attack-helpers'

const TOKEN = `QZXCANARY${process.pid}`
const base = tempDir('dogu-argument-model-')
const outside = join(base, 'outside')
// A target whose name and content carry the token, of a size no other file here has.
const CONTENT = `#!/bin/${TOKEN}\n${TOKEN} line\n`.padEnd(4099, 'x') + '\n'
const SIZE = Buffer.byteLength(CONTENT)
mkdirSync(join(outside, 'canary.d', `${TOKEN}-entry`), { recursive: true })
writeFileSync(join(outside, `${TOKEN}-target`), CONTENT)
writeFileSync(join(outside, 'canary.d', `${TOKEN}-file`), CONTENT)
// The file canary is a link, so `stat`, `file` and `realpath` print the token too.
symlinkSync(join(outside, `${TOKEN}-target`), join(outside, 'canary'))
const FILE_CANARIES = [join(outside, 'canary'), 'escape']
const DIR_CANARIES = [join(outside, 'canary.d'), 'escape.d']
const HASHES = ['md5', 'sha1', 'sha256', 'sha512'].map((algorithm) => createHash(algorithm).update(CONTENT).digest('hex'))

/** A workspace with `inside.txt` and links `escape`, `escape.d` to the canaries. */
function workspace(name: string): string {
  const ws = join(base, name)
  writeFiles(ws, { 'inside.txt': 'inside\n', 'other.txt': 'other\n' })
  symlinkSync(join(outside, 'canary'), join(ws, 'escape'))
  symlinkSync(join(outside, 'canary.d'), join(ws, 'escape.d'))
  return ws
}
const plain = workspace('plain')
const repo = workspace('repo')
git(repo, 'init', '-q')
git(repo, 'add', 'inside.txt', 'other.txt')
git(repo, 'commit', '-qm', 'one')
git(repo, 'tag', 'v1')
writeFiles(repo, { 'inside.txt': 'inside\nchanged\n' })
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Whether a program's output shows that it read or listed a canary. */
function sawCanary(output: string): boolean {
  return output.includes(TOKEN) || HASHES.some((hash) => output.includes(hash)) || new RegExp(`\\b${SIZE}\\b`).test(output)
}

const quote = (word: string) => /^[\w./=:,+%@-]+$/.test(word) ? word : `'${word}'`

interface Run {
  command: string
  verdict: 'read' | 'exec'
  output?: string
  timedOut?: boolean
}

/** Classifies `argv` as a command line and, when it is `read`, runs it as the tool would. */
function attempt(ws: string, argv: string[]): Run {
  const command = argv.map(quote).join(' ')
  const verdict = classifyCommand(command, { workspace: ws }).effect
  if (verdict === 'exec') return { command, verdict }
  const result = spawnSync(argv[0], argv.slice(1), { cwd: ws, env: readEnvironment(process.env, ws), input: '', encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' })
  return { command, verdict, output: `${result.stdout}${result.stderr}`, timedOut: result.signal === 'SIGKILL' }
}

type Kind = 'flag' | 'value' | 'optional' | 'lastarg'

/** Every option of a spec, with how it takes a value. */
function options(spec: ArgumentSpec): [string, Kind][] {
  const list: [string, Kind][] = []
  for (const char of spec.short ?? '') list.push([`-${char}`, 'flag'])
  for (const char of spec.shortValue ?? '') list.push([`-${char}`, 'value'])
  for (const char of spec.shortOptional ?? '') list.push([`-${char}`, 'optional'])
  for (const entry of spec.long ?? []) {
    if (entry.endsWith('[=]')) list.push([entry.slice(0, -3), 'optional'])
    else if (entry.endsWith('[?]')) list.push([entry.slice(0, -3), 'lastarg'])
    else if (entry.endsWith('=')) list.push([entry.slice(0, -1), 'value'])
    else list.push([entry, 'flag'])
  }
  return list
}

/**
 * The argument lists that would catch a wrong model of `option`: the canary as the next
 * word (where a value would be), attached as its value, and, for programs whose first
 * operand is a pattern, a word before it (so a value the program does not take would
 * leave the canary as the file operand).
 */
function forms(option: string, kind: Kind, canary: string, patternFirst: boolean): string[][] {
  const attached = option.startsWith('--') ? `${option}=${canary}` : `${option}${canary}`
  const list = [[option, canary, 'inside.txt'], [option, canary]]
  if (kind !== 'flag') list.push([attached, 'inside.txt'])
  if (patternFirst) list.push([option, '.', canary, 'inside.txt'], [option, 'x', '.', canary])
  return list
}

interface Program {
  /** The words before the options: `['git', 'diff']`. */
  argv: string[]
  spec: ArgumentSpec
  canaries: string[]
  ws: string
  /** How to show that the canary is seen at all: the program with it as an operand. */
  baseline?: string[]
}

// `baseline: null`: the program shows nothing of a file's content (`cmp`, `date`).
const content = (program: string, baseline?: string[] | null): Program => ({
  argv: [program], spec: READ_SPECS.get(program)!, canaries: FILE_CANARIES, ws: plain, baseline: baseline === null ? undefined : baseline ?? [program, FILE_CANARIES[0]],
})
const searching = (program: Program): Program => ({ ...program, canaries: [...FILE_CANARIES, ...DIR_CANARIES] })
const listing = (program: string): Program => ({ argv: [program], spec: READ_SPECS.get(program)!, canaries: DIR_CANARIES, ws: plain, baseline: [program, DIR_CANARIES[0]] })

const PROGRAMS: [string, Program][] = [
  ...['cat', 'head', 'tail', 'wc', 'sort', 'uniq', 'nl', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'stat', 'file', 'realpath'].map((name) => [name, content(name)] as [string, Program]),
  ['cut', content('cut', ['cut', '-c1-40', FILE_CANARIES[0]])],
  // These also walk directories (`-r`, `rg --files`): directory canaries too.
  ['grep', searching(content('grep', ['grep', '.', FILE_CANARIES[0]]))],
  ['egrep', searching(content('egrep', ['egrep', '.', FILE_CANARIES[0]]))],
  ['fgrep', searching(content('fgrep', ['fgrep', 'line', FILE_CANARIES[0]]))],
  ['rg', searching(content('rg', ['rg', '.', FILE_CANARIES[0]]))],
  ['diff', content('diff', ['diff', FILE_CANARIES[0], 'inside.txt'])],
  ['cmp', content('cmp', null)],
  ['date', content('date', null)],
  ...['ls', 'tree', 'du'].map((name) => [name, listing(name)] as [string, Program]),
  // `git diff` compares files outside a repository, or when a path is outside it.
  ['git diff (no repository)', { argv: ['git', 'diff'], spec: GIT_SUBCOMMANDS.get('diff')!, canaries: FILE_CANARIES, ws: plain, baseline: ['git', 'diff', FILE_CANARIES[0], 'inside.txt'] }],
  ...[...GIT_SUBCOMMANDS].map(([sub, spec]) => [`git ${sub}`, { argv: ['git', sub], spec, canaries: FILE_CANARIES, ws: repo, baseline: sub === 'diff' ? ['git', 'diff', FILE_CANARIES[0], 'inside.txt'] : undefined }] as [string, Program]),
]

// Programs on the list without a spec here: `echo`, `true`, `false`, `pwd`, `whoami`,
// `uname`, `which`, `basename`, `dirname`, `tr` and `df` open no file operand (`df` shows
// the file system a path is on). `find` and `git`'s global options have their own rules.
const COVERED = new Set(PROGRAMS.map(([, program]) => program.argv[0]))
const WITHOUT_FILES = ['pwd', 'whoami', 'uname', 'which', 'basename', 'dirname', 'tr', 'df']

beforeAll(() => {
  requireProgram('rg', 'apt-get install -y ripgrep')
  requireProgram('tree', 'apt-get install -y tree')
  requireProgram('git', 'apt-get install -y git')
})

describe('the argument model of each listed program is the program\'s own', () => {
  it('covers every program on the list', () => {
    expect([...READ_SPECS.keys()].filter((program) => !COVERED.has(program) && !WITHOUT_FILES.includes(program))).toEqual([])
  })

  it.each(PROGRAMS)('%s: a `read` verdict never shows a canary outside the workspace', (_, { argv, spec, canaries, ws, baseline }) => {
    if (baseline) {
      // The canary shows when the program opens it, and the classifier refuses it as an operand.
      const seen = attempt(ws, baseline)
      expect(seen.verdict).toBe('exec')
      const result = spawnSync(baseline[0], baseline.slice(1), { cwd: ws, encoding: 'utf8' })
      expect(sawCanary(`${result.stdout}${result.stderr}`), `${baseline.join(' ')} shows the canary`).toBe(true)
    }
    const refs = ws === repo ? snapshot(ws) : undefined
    const leaks: string[] = []
    let reads = 0
    for (const [option, kind] of options(spec)) {
      for (const canary of canaries) {
        for (const words of forms(option, kind, canary, !!spec.patternFirst)) {
          const run = attempt(ws, [...argv, ...words])
          if (run.verdict !== 'read') continue
          reads++
          if (run.timedOut) leaks.push(`${run.command}: did not end`)
          else if (sawCanary(run.output!)) leaks.push(`${run.command}: ${run.output!.slice(0, 200)}`)
          if (refs && snapshot(ws) !== refs) {
            leaks.push(`${run.command}: changed the repository`)
            restore(ws)
          }
        }
      }
    }
    expect(leaks).toEqual([])
    // Not vacuous: options that take a value (other than a path, which is always judged) were run for real.
    if (options(spec).some(([option, kind]) => kind === 'value' && !spec.pathValues?.includes(option))) expect(reads).toBeGreaterThan(0)
    // Hundreds of runs of the real program on shared cores: a bound, not a timing check.
  }, 180_000)

  it('find: a test\'s value is never a starting point, and the file tests judge theirs', () => {
    expect(attempt(plain, ['find', DIR_CANARIES[0]]).verdict).toBe('exec')
    expect(sawCanary(spawnSync('find', [DIR_CANARIES[0]], { encoding: 'utf8' }).stdout)).toBe(true)
    const leaks: string[] = []
    for (const test of [...FIND_TESTS, ...FIND_FLAGS]) {
      for (const canary of DIR_CANARIES) {
        const run = attempt(plain, ['find', '.', '-maxdepth', '1', test, canary])
        if (run.verdict === 'read' && sawCanary(run.output!)) leaks.push(`${run.command}: ${run.output!.slice(0, 200)}`)
      }
    }
    expect(leaks).toEqual([])
    for (const test of ['-newer', '-samefile']) {
      expect(classifyCommand(`find . ${test} escape`, { workspace: plain }).reason).toContain('leads outside the workspace')
    }
  })
})

/** Deletes the branches and tags a wrongly classed command created. */
function restore(ws: string) {
  for (const line of git(ws, 'for-each-ref', '--format=%(refname)').split('\n')) {
    if (line && line !== 'refs/heads/main' && line !== 'refs/tags/v1') git(ws, 'update-ref', '-d', line)
  }
}

/** The repository's refs and the files of its git directory: a read changes neither. */
function snapshot(ws: string): string {
  const dir = join(ws, '.git')
  const refs = spawnSync('git', ['for-each-ref'], { cwd: ws, encoding: 'utf8' }).stdout
  return `${refs}\n${readdirSync(dir).sort().join(' ')}\n${readFileSync(join(dir, 'HEAD'), 'utf8')}`
}
