// The data guard (test-support/data-guard.ts, the suite's set-up file): a test that opens a
// path under the checkout's data/ (or DOGU_DATA) fails, naming the path and the call. Its
// functions are tested here in this process, where the guard is installed as in every spec;
// its cases run once end to end in a child vitest, since some must fail.
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import * as fsp from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardedFolders, guardedPath, offenceMessage, takeOffences } from '../../test-support/data-guard'

const ROOT = resolve(import.meta.dirname, '../..')
const DATA = join(ROOT, 'data')
// Under data/, in a folder no playground makes: every call below fails with ENOENT and changes nothing.
const MISSING = join(DATA, `no-such-folder-${process.pid}`)
const file = (name: string) => join(MISSING, name)
const swallow = () => undefined

describe('the data guard in this process', () => {
  it('records the sync, callback and promise forms, and ESM named imports of node:fs and node:fs/promises', async () => {
    expect(fs.existsSync(file('a'))).toBe(false)
    expect(() => fs.statSync(file('b'))).toThrow(/ENOENT/)
    await new Promise((done) => fs.readFile(file('c'), done))
    await fsp.readFile(file('d')).catch(swallow)
    await fs.promises.access(file('e')).catch(swallow)
    expect(() => fs.writeFileSync(file('f'), 'x')).toThrow(/ENOENT/)
    expect(takeOffences().map(({ call, path }) => [call, path])).toEqual([
      ['existsSync', file('a')],
      ['statSync', file('b')],
      ['readFile', file('c')],
      ['fs/promises readFile', file('d')],
      ['fs/promises access', file('e')],
      ['writeFileSync', file('f')],
    ])
  })

  it('names where the call came from: the first frame outside node and node_modules', () => {
    fs.existsSync(file('here'))
    expect(takeOffences()).toEqual([{ call: 'existsSync', path: file('here'), at: expect.stringMatching(/^tests\/isolation\/data-guard\.spec\.ts:\d+$/) }])
  })

  it('checks both paths of a rename, and resolves relative paths, `..`, URLs and Buffers', async () => {
    await fsp.rename(join(ROOT, 'package.json.absent'), file('moved')).catch(swallow)
    fs.existsSync(join(ROOT, 'packages', '..', 'data', 'up'))
    fs.existsSync(pathToFileURL(file('url')))
    fs.existsSync(Buffer.from(file('buffer')))
    const relativeToCwd = resolve(process.cwd(), 'data', 'relative')
    fs.existsSync('data/relative')
    const found = takeOffences().map(({ call, path }) => [call, path])
    expect(found).toEqual(expect.arrayContaining([
      ['fs/promises rename', file('moved')],
      ['existsSync', join(DATA, 'up')],
      ['existsSync', file('url')],
      ['existsSync', file('buffer')],
      ['existsSync', relativeToCwd],
    ]))
    // The checkout's own package.json is not under data/.
    expect(found.map(([, path]) => path)).not.toContain(join(ROOT, 'package.json.absent'))
  })

  it('records a call node makes on the caller\'s behalf once, as the caller\'s (fs/promises rm, not its lstat)', async () => {
    await fsp.rm(file('gone'), { force: true })
    expect(takeOffences().map(({ call }) => call)).toEqual(['fs/promises rm'])
  })

  it('leaves paths outside data/ alone: the checkout, a sibling named data-something, the temp folder', () => {
    fs.existsSync(join(ROOT, 'package.json'))
    fs.existsSync(join(ROOT, 'database'))
    fs.existsSync(join(ROOT, 'data-other', 'x'))
    fs.existsSync(join(tmpdir(), 'data', 'x'))
    fs.existsSync(join(ROOT, 'packages', 'koishi', 'data', 'x'))
    expect(takeOffences()).toEqual([])
  })
})

describe('the data guard\'s functions', () => {
  it('guards the checkout\'s data/, the cwd\'s, and DOGU_DATA against the cwd as the playground reads it', () => {
    expect(guardedFolders('/repo', {}, '/repo')).toEqual(['/repo/data'])
    expect(guardedFolders('/repo', { DOGU_DATA: '  ' }, '/repo')).toEqual(['/repo/data'])
    expect(guardedFolders('/repo', { DOGU_DATA: 'mine' }, '/elsewhere')).toEqual(['/repo/data', '/elsewhere/data', '/elsewhere/mine'])
    expect(guardedFolders('/repo', { DOGU_DATA: '/srv/dogu' }, '/repo')).toEqual(['/repo/data', '/srv/dogu'])
  })

  it('matches a folder and what is under it, nothing that only begins with its name', () => {
    const folders = ['/repo/data']
    expect(guardedPath('/repo/data', folders)).toBe('/repo/data')
    expect(guardedPath('/repo/data/', folders)).toBe('/repo/data/')
    expect(guardedPath('/repo/data/dogu/audit.jsonl', folders)).toBe('/repo/data/dogu/audit.jsonl')
    expect(guardedPath('/repo/./data//x', folders)).toBe('/repo/data/x')
    expect(guardedPath('/repo/database', folders)).toBeUndefined()
    expect(guardedPath('/repo/data.bak/x', folders)).toBeUndefined()
    expect(guardedPath(3, folders)).toBeUndefined()
    expect(guardedPath(new URL('https://example.com/repo/data/x'), folders)).toBeUndefined()
  })

  it('words the failure with each call, its path and where it came from', () => {
    expect(offenceMessage([
      { call: 'fs/promises rename', path: '/repo/data/dogu/audit.jsonl', at: 'packages/core/src/database/migrated-file.ts:6' },
      { call: 'existsSync', path: '/srv/dogu/x' },
    ], ['/repo/data', '/srv/dogu'], '/repo')).toBe([
      'data guard: this test opened 2 paths under data/ or /srv/dogu (the playground\'s data, which tests must not touch):',
      '  fs/promises rename("/repo/data/dogu/audit.jsonl") at packages/core/src/database/migrated-file.ts:6',
      '  existsSync("/srv/dogu/x")',
      'Give it a folder of its own (mkdtemp), an explicit storePath or dataDir, or a cwd in a temporary folder.',
    ].join('\n'))
  })
})

interface CaseResult { name: string; state: string; errors: string[] }

describe('the data guard end to end: its cases in a child vitest, with the cwd and DOGU_DATA in temporary folders', () => {
  let dir: string
  let cases: CaseResult[]
  let fileErrors: string[]
  const outcome = (name: string) => {
    const found = cases.find((test) => test.name === name)
    expect(found, `no case named "${name}" in ${JSON.stringify(cases.map((test) => test.name))}`).toBeDefined()
    return found!
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-data-guard-'))
    const cwd = join(dir, 'cwd')
    const playground = join(dir, 'playground-data')
    fs.mkdirSync(cwd)
    fs.mkdirSync(playground)
    const report = join(dir, 'report.json')
    // The parent's vitest variables would make the child think it is a worker.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS'))
    await new Promise<void>((done, fail) => {
      execFile(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', ROOT, '--config', join(ROOT, 'test-support/data-guard-cases.config.ts')], {
        cwd,
        env: { ...env, DOGU_DATA: playground, DATA_GUARD_REPORT: report, NO_COLOR: '1' },
        timeout: 60_000,
      }, (error, stdout, stderr) => {
        // The cases that fail make vitest exit 1: expected. No report at all is not.
        readFile(report, 'utf8').then(() => done(), () => fail(new Error(`the cases did not run (${error?.message ?? 'no report'}):\n${stdout}\n${stderr}`)))
      })
    })
    const [module] = JSON.parse(await readFile(report, 'utf8')) as { errors: string[]; tests: CaseResult[] }[]
    cases = module.tests
    fileErrors = module.errors
  }, 60_000)
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('fails a test that writes a file in DOGU_DATA, naming the file and the call', () => {
    const { state, errors } = outcome('writes a file in DOGU_DATA')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining(`\n  writeFileSync("${join(dir, 'playground-data', 'audit.jsonl')}") at test-support/data-guard.cases.ts:`)])
    expect(errors[0]).toMatch(/^data guard: this test opened a path under data\/ or .* \(the playground's data, which tests must not touch\):/)
  })

  it('fails a test that writes data/dogu/audit.jsonl under the cwd, as a default storePath would', () => {
    const { state, errors } = outcome('writes data/dogu/audit.jsonl under the cwd, as a default storePath does')
    expect(state).toBe('failed')
    expect(errors[0]).toContain(`fs/promises mkdir("${join(dir, 'cwd', 'data', 'dogu')}")`)
    expect(errors[0]).toContain(`fs/promises writeFile("${join(dir, 'cwd', 'data', 'dogu', 'audit.jsonl')}")`)
  })

  it('fails a test that opens a write stream in DOGU_DATA', () => {
    const { state, errors } = outcome('opens a write stream in DOGU_DATA')
    expect(state).toBe('failed')
    expect(errors[0]).toContain(`createWriteStream("${join(dir, 'playground-data', 'background.json')}")`)
  })

  it('passes a test that writes in a folder of its own', () => {
    expect(outcome('writes in a folder of its own')).toMatchObject({ state: 'passed', errors: [] })
  })

  it('fails the file when its last clean-up reads DOGU_DATA', () => {
    expect(outcome('passes on its own')).toMatchObject({ state: 'passed' })
    expect(fileErrors).toEqual([expect.stringContaining(`fs/promises stat("${join(dir, 'playground-data', 'permissions.json')}")`)])
  })
})
