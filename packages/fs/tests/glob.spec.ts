import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { bashGlob } from './bash-glob'
import { type Sandbox, failure, invoke, sandbox, tree } from './helpers'

/**
 * The oracle is GNU bash, run at test time on the same tree (bash-glob.ts). The corpus tier
 * (glob.corpus.spec.ts) adds minimatch's own 196 cases; docs/glob-differences.md lists where
 * Dogu means to differ from bash, and these patterns stay clear of those cases: words with no
 * glob character that name nothing, "..", absolute paths, a leading "!", "./", malformed
 * extglobs and non-ASCII classes.
 */
const PATTERNS: readonly string[] = [
  '*', '*.txt', '?.txt', '??.txt', '[ab].txt', '[!a]*.txt', '[[:digit:]]*', 'x[[:digit:]].log',
  'x+([0-9]).log', '*.+(txt|log)', 'a?(b)?(c).txt', '*(a|b).txt', '@(a|ab).txt',
  '*.@(ts|js)', 'src/*.ts', 'src/!(*.test).ts', 'src/*.!(ts)', 'src/**', 'src/**/*.ts', '**/*.ts', '**', '**/',
  '*/', 'src/*/', '**/*.spec.ts', 'test/**/*.spec.ts', '**/lib/*', 'src/lib/**/c.ts',
  '**/deep/**', 'docs/*.[mM][dD]', 'name with *', 'br\\[ack\\]*', '*.config', '.*', '.config/*',
  '**/.*', 'src/.*', 'link*', 'link-dir', 'empty-dir/**',
]
const BRACE_PATTERNS: readonly string[] = [
  '*.{ts,js}', '{src,test}/**/*.ts', 'src/{index,util}.ts', 'src/lib/{a,b}.*', '{docs,.config}/*', '**/*.{md,MD}',
]

/**
 * Where Dogu means to differ here. It never follows symbolic links: a link to a directory is
 * a link, so a pattern ending in "/" does not list it, where bash looks through it.
 */
const DIFFERENCES: Record<string, { bashOnly: string[], doguOnly: string[] }> = {
  '*/': { bashOnly: ['link-dir'], doguOnly: [] },
  '**/': { bashOnly: ['link-dir'], doguOnly: [] },
}

describe('glob against a bash oracle computed at test time', () => {
  let box: Sandbox
  beforeAll(async () => {
    box = await sandbox()
    await tree(box.root, {
      'src/index.ts': '', 'src/util.ts': '', 'src/util.test.ts': '', 'src/.hidden.ts': '', 'src/style.css': '',
      'src/lib/a.js': '', 'src/lib/b.ts': '', 'src/lib/deep/c.ts': '', 'src/lib/deep/d.txt': '',
      'test/a.spec.ts': '', 'test/unit/b.spec.ts': '', 'test/.fixtures/e.spec.ts': '',
      'docs/readme.md': '', 'docs/guide.MD': '', 'README.md': '',
      'a.txt': '', 'b.txt': '', 'ab.txt': '', 'abc.txt': '', 'aab.txt': '', 'x1.log': '', 'x22.log': '',
      'name with space.txt': '', 'br[ack]et.txt': '', 'tsc.config': '',
      '.env': '', '.config/settings.json': '', '.config/.inner/deep.json': '',
      'empty-dir/': null, 'link-file': { link: 'a.txt' }, 'link-dir': { link: 'src' },
    })
  })
  afterAll(() => box.cleanup())

  async function tool(pattern: string, dot: boolean): Promise<string[]> {
    const fs = createFsTools({ workspace: box.root, ignore: [] })
    const output = await invoke(fs.tools.glob, { pattern, dot, maxResults: 2000 })
    expect(output.data.truncated).toBe(false)
    return [...output.data.paths].sort()
  }

  for (const dot of [false, true]) {
    test(`every pattern gives bash's answer${dot ? ' with dot (dotglob)' : ''}, or a listed difference`, async () => {
      const cases = [...PATTERNS.map((pattern) => [pattern, false] as const), ...BRACE_PATTERNS.map((pattern) => [pattern, true] as const)]
      const found: Record<string, { bashOnly: string[], doguOnly: string[] }> = {}
      for (const [pattern, braces] of cases) {
        const ours = await tool(pattern, dot)
        const theirs = bashGlob(box.root, pattern, { dot, braces })
        const bashOnly = theirs.filter((path) => !ours.includes(path))
        const doguOnly = ours.filter((path) => !theirs.includes(path))
        if (bashOnly.length || doguOnly.length) found[pattern] = { bashOnly, doguOnly }
      }
      expect(found).toEqual(DIFFERENCES)
    })
  }

  test('the oracle sees the tree: a few answers spelled out', () => {
    expect(bashGlob(box.root, '*')).toEqual([
      'README.md', 'a.txt', 'aab.txt', 'ab.txt', 'abc.txt', 'b.txt', 'br[ack]et.txt', 'docs/', 'empty-dir/',
      'link-dir', 'link-file', 'name with space.txt', 'src/', 'test/', 'tsc.config', 'x1.log', 'x22.log',
    ])
    expect(bashGlob(box.root, 'src/**/*.ts')).toEqual(['src/index.ts', 'src/lib/b.ts', 'src/lib/deep/c.ts', 'src/util.test.ts', 'src/util.ts'])
    expect(bashGlob(box.root, 'src/**/*.ts', { dot: true })).toEqual(['src/.hidden.ts', 'src/index.ts', 'src/lib/b.ts', 'src/lib/deep/c.ts', 'src/util.test.ts', 'src/util.ts'])
    expect(bashGlob(box.root, '*.{ts,js}', { braces: true })).toEqual([])
    expect(bashGlob(box.root, 'src/lib/{a,b}.*', { braces: true })).toEqual(['src/lib/a.js', 'src/lib/b.ts'])
  })
})

describe('glob tool', () => {
  let box: Sandbox
  beforeAll(async () => {
    box = await sandbox()
    const files: Record<string, string> = {}
    for (let i = 0; i < 50; i++) files[`gen/d${i % 5}/f${String(i).padStart(2, '0')}.ts`] = ''
    await tree(box.root, {
      ...files,
      'src/a.ts': '', 'src/b.js': '', 'src/.hidden.ts': '', '.config/x.ts': '',
      'node_modules/pkg/i.ts': '', 'a-b': '', 'a/b': '',
    })
  })
  afterAll(() => box.cleanup())

  test('sorted by path segments, directories marked, dot files only on request', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.glob, { pattern: 'src/*' })).text).toBe('src/a.ts\nsrc/b.js')
    expect((await invoke(fs.tools.glob, { pattern: 'src/*', dot: true })).text).toBe('src/.hidden.ts\nsrc/a.ts\nsrc/b.js')
    // Walk order: a directory's contents right after it, so "a/b" comes before "a-b".
    expect((await invoke(fs.tools.glob, { pattern: 'a*{,/*}' })).text).toBe('a/\na/b\na-b')
    expect((await invoke(fs.tools.glob, { pattern: '.config/*.ts' })).text).toBe('.config/x.ts')
    expect((await invoke(fs.tools.glob, { pattern: '*.ts', path: 'src' })).text).toBe('src/a.ts')
  })

  test('ignored directories are not entered unless searched directly', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect((await invoke(fs.tools.glob, { pattern: '**/i.ts' })).text).toBe('No paths in . match "**/i.ts".')
    expect((await invoke(fs.tools.glob, { pattern: '**/i.ts', path: 'node_modules' })).text).toBe('node_modules/pkg/i.ts')
  })

  test('stops at maxResults without walking the rest of the tree', async () => {
    const fs = createFsTools({ workspace: box.root })
    const output = await invoke(fs.tools.glob, { pattern: 'gen/**/*.ts', maxResults: 3 })
    expect(output.text).toBe('gen/d0/f00.ts\ngen/d0/f05.ts\ngen/d0/f10.ts\n[stopped at maxResults=3; more paths match]')
    // .config, a, a-b, gen, gen/d0 and four files of d0: the walk ended at the fourth match.
    expect(output.data).toEqual({ paths: ['gen/d0/f00.ts', 'gen/d0/f05.ts', 'gen/d0/f10.ts'], truncated: true, visited: 9 })
    expect(() => fs.tools.glob.args({ pattern: '*', maxResults: 2001 })).toThrow('$.maxResults expected number <= 2000 but got 2001')
  })

  test('absolute patterns and ".." segments are refused with advice', async () => {
    const fs = createFsTools({ workspace: box.root })
    const absolute = await failure(invoke(fs.tools.glob, { pattern: '/etc/*' }))
    expect([absolute.code, absolute.message]).toEqual(['INVALID_ARGUMENT', 'pattern "/etc/*" is absolute; patterns are relative to the searched directory (set path to choose it)'])
    expect((await failure(invoke(fs.tools.glob, { pattern: 'src/../../*' }))).code).toBe('INVALID_ARGUMENT')
  })

  test('a cancelled call rejects with the abort reason', async () => {
    const fs = createFsTools({ workspace: box.root })
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    const call = { id: 'c', name: 'glob', session: { id: 's' }, signal: controller.signal, deadline: 0, mode: 'default', progress() {}, ask: async () => {}, deny: () => { throw new Error() } }
    await expect(invoke(fs.tools.glob, { pattern: '**' }, call as any)).rejects.toBe(reason)
  })
})
