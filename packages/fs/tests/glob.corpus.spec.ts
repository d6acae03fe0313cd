import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { corpusPath } from '../../../scripts/corpora.mjs'
import { FsError, createFsTools } from '../src'
import { globFiles } from '../src/glob-files'
import { compileGlob } from '../src/glob-pattern'
import { invoke } from './helpers'

// Corpus tier (docs/testing.md): minimatch's own test cases expanded by GNU bash on real
// trees, read from the corpora folder at test time, never copied here.
interface Fixture {
  pattern: string
  options: Record<string, boolean>
  tree: string[]
  bash: string[] | null
  bash_with_brace_expansion?: string[]
  note: string
}

const fixtures: Fixture[] = JSON.parse(readFileSync(corpusPath('glob', 'bash_glob_fixtures.json'), 'utf8')).minimatch_cases

/**
 * Every fixture where Dogu's answer differs from bash's (after stripping trailing "/", as the
 * fixtures' notes say), keyed `pattern options`. docs/glob-differences.md explains each group.
 */
const DIFFERENCES: Record<string, string> = {
  // literal: bash keeps a word with no unquoted glob character (or an unclosed "[") as it is, existing or not; with nonull it returns the pattern when nothing matches. Dogu lists existing paths only.
  "X* {\"nonull\":true}": "bash [\"X*\"]; dogu []",
  "\\* {\"nonull\":true}": "bash [\"\\\\*\"]; dogu []",
  "\\** {\"nonull\":true}": "bash [\"\\\\**\"]; dogu []",
  "\\*\\* {\"nonull\":true}": "bash [\"\\\\*\\\\*\"]; dogu []",
  "s/\\..*// {\"nonull\":true}": "bash [\"s/\\\\..*\"]; dogu []",
  "*(a/b) {\"nonull\":true}": "bash [\"*(a/b)\"]; dogu []",
  "a\\*c {\"null\":true}": "bash [\"a\\\\*c\"]; dogu []",
  "[abc {\"null\":true}": "bash [\"[abc\"]; dogu []",
  "XYZ {\"nocase\":true,\"null\":true}": "bash [\"XYZ\"]; dogu [\"xYz\"]",
  "a/[2015-03-10T00:23:08.647Z\\]/z {}": "bash [\"a/[2015-03-10T00:23:08.647Z\\\\]/z\"]; dogu []",
  "Å {}": "bash [\"Å\"]; dogu []",
  "å {}": "bash [\"å\"]; dogu []",
  "Å {\"nocase\":true}": "bash [\"Å\"]; dogu [\"å\"]",
  "å {\"nocase\":true}": "bash [\"å\"]; dogu [\"Å\"]",
  "# ignore this {}": "bash [\"# ignore this\"]; dogu []",
  // outside: The pattern leaves the searched directory (absolute, or a ".." segment): Dogu refuses it (INVALID_ARGUMENT) or, inside braces, the absolute alternative never matches.
  "\\.\\./*/ {\"nonull\":true}": "bash [\"../root\"]; dogu []",
  "/^root:/{s/^[^:]*:[^:]*:([^:]*).*$/\\1/ {\"nonull\":true}": "INVALID_ARGUMENT",
  "/^root:/{s/^[^:]*:[^:]*:([^:]*).*$/\u0001/ {\"nonull\":true}": "INVALID_ARGUMENT",
  "{/*,*} {\"null\":true}": "bash omitted; dogu []",
  "{/?,*} {\"null\":true}": "bash omitted; dogu [\"bb\"]",
  "x/*/../a/b/c {}": "INVALID_ARGUMENT",
  "x/z/../*/a/b/c {}": "INVALID_ARGUMENT",
  "x/*/../../a/b/c {}": "INVALID_ARGUMENT",
  // empty: An empty pattern is an argument error in Dogu.
  " {\"null\":true}": "INVALID_ARGUMENT",
  // braces: minimatch expands braces before anything else, inside extglobs too, and paths never start with "./"; bash expands braces as a separate shell step.
  "{c*,./c*} {}": "bash [\"./c\",\"./ca\",\"./cb\",\"c\",\"ca\",\"cb\"]; dogu [\"c\",\"ca\",\"cb\"]",
  "*(a|{b),c)} {}": "bash []; dogu [\"a\",\"ab\",\"ac\"]",
  "{a,*(b|c,d)} {}": "bash [\"*(b|c\",\"a\",\"d)\"]; dogu [\"(b|c\",\"*(b|c\",\"a\",\"d)\"]",
  "*(a|{b|c,c}) {\"noext\":true}": "bash []; dogu [\"(a|b|c)\",\"(a|c)\",\"x(a|b|c)\",\"x(a|c)\"]",
  // negation: A leading "!" negates the whole pattern (minimatch, like .gitignore); bash treats it as a literal "!".
  "!a* {}": "bash [\"!ab\",\"!abc\"]; dogu [\"!ab\",\"!abc\",\"\\\\!a\",\"d\",\"e\"]",
  "!!a* {}": "bash []; dogu [\"a!b\"]",
  "!\\!a* {}": "bash []; dogu [\"\\\\!a\",\"a!b\",\"d\",\"e\"]",
  // extglob: minimatch reads a malformed or empty extglob ("+()", an unclosed "+(") as literal text; bash's extglob matches nothing.
  "+(a|*\\|c\\\\|d\\\\\\|e\\\\\\\\|f\\\\\\\\\\|g {}": "bash []; dogu [\"+(a|b\\\\|c\\\\\\\\|d\\\\\\\\|e\\\\\\\\\\\\\\\\|f\\\\\\\\\\\\\\\\|g\"]",
  "+() {}": "bash []; dogu [\"+()\"]",
  // unicode: POSIX classes are Unicode-aware in minimatch; bash ran with LC_ALL=C (ASCII).
  "[[:alpha:]][[:alpha:]][[:alpha:]][[:alpha:]][[:alpha:]] {}": "bash [\"aeiou\",\"fffff\"]; dogu [\"aeiou\",\"fffff\",\"åéîøü\"]",
  "[[:alnum:]][[:alnum:]][[:alnum:]][[:alnum:]][[:alnum:]] {}": "bash [\"0f7fa\",\"99999\",\"aeiou\",\"fffff\"]; dogu [\"0f7fa\",\"99999\",\"aeiou\",\"fffff\",\"åéîøü\"]",
}

const strip = (paths: string[]) => [...new Set(paths.map((path) => path.replace(/\/+$/, '')))].sort()

let base: string
beforeAll(async () => { base = await realpath(await mkdtemp(join(tmpdir(), 'dogu-glob-'))) })
afterAll(() => rm(base, { recursive: true, force: true }))

async function build(index: number, entries: string[]): Promise<string> {
  // The tree root is named "root" inside an otherwise empty directory, as in the oracle.
  const root = join(base, String(index), 'root')
  await mkdir(root, { recursive: true })
  // A name listed both as "x" and "x/" (or with children) is a directory.
  const dirs = new Set(entries.filter((entry) => entry.endsWith('/')).map((entry) => entry.slice(0, -1)))
  for (const entry of entries) for (let at = entry.indexOf('/'); at > 0; at = entry.indexOf('/', at + 1)) dirs.add(entry.slice(0, at))
  for (const dir of dirs) await mkdir(join(root, dir), { recursive: true })
  // "." in a tree is the root itself.
  for (const entry of entries) if (!entry.endsWith('/') && !dirs.has(entry) && entry !== '.') await writeFile(join(root, entry), '')
  return root
}

const roots: string[] = []
beforeAll(async () => {
  for (const [index, fixture] of fixtures.entries()) roots.push(await build(index, fixture.tree))
})

async function dogu(fixture: Fixture, root: string): Promise<string[] | string> {
  const { nonull, null: _null, ...options } = fixture.options
  try {
    const matcher = compileGlob(fixture.pattern, options)
    const report = await globFiles({ root, matcher, maxResults: 100_000 })
    return report.matches.map((match) => match.path)
  } catch (error) {
    if (FsError.is(error)) return error.code
    throw error
  }
}

describe('glob against the bash oracle', () => {
  test('every fixture agrees with bash, or is a listed, explained difference', async () => {
    const found: Record<string, string> = {}
    let agreed = 0
    for (const [index, fixture] of fixtures.entries()) {
      const expected = fixture.bash_with_brace_expansion ?? fixture.bash
      const ours = await dogu(fixture, roots[index])
      const key = `${fixture.pattern} ${JSON.stringify(fixture.options)}`
      if (expected === null) {
        found[key] = typeof ours === 'string' ? ours : `bash omitted; dogu ${JSON.stringify(ours)}`
        continue
      }
      if (typeof ours === 'string') {
        found[key] = ours
        continue
      }
      if (JSON.stringify(strip(ours)) === JSON.stringify(strip(expected))) agreed++
      else found[key] = `bash ${JSON.stringify(strip(expected))}; dogu ${JSON.stringify(strip(ours))}`
    }
    if (process.env.DOGU_PRINT_GLOB_DIFFERENCES) console.log(JSON.stringify(found, null, 2))
    expect(found).toEqual(DIFFERENCES)
    expect(agreed + Object.keys(DIFFERENCES).length).toBe(fixtures.length)
  })

  test('the glob tool gives the engine\'s answer for the option-free and dot fixtures', async () => {
    for (const [index, fixture] of fixtures.entries()) {
      const keys = Object.keys(fixture.options)
      if (keys.some((key) => key !== 'dot')) continue
      const ours = await dogu(fixture, roots[index])
      const fs = createFsTools({ workspace: roots[index], ignore: [] })
      const output = await invoke(fs.tools.glob, { pattern: fixture.pattern, dot: !!fixture.options.dot, maxResults: 2000 })
        .catch((error) => error as FsError)
      if (typeof ours === 'string') {
        expect([fixture.pattern, (output as FsError).code]).toEqual([fixture.pattern, ours])
      } else {
        expect([fixture.pattern, (output as any).data.paths.map((path: string) => path.replace(/\/$/, ''))]).toEqual([fixture.pattern, ours])
      }
    }
  })
})
