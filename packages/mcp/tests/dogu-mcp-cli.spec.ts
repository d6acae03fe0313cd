// The `dogu-mcp` command line as a user runs it: the built bin (packages/mcp/bin/dogu-mcp.js,
// on lib/: `yarn build` first) through node, its exit code, stdout and stderr.
// install.tarball.spec.ts runs the same flags through `npx` from the packed tarball.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PACKAGE = resolve(import.meta.dirname, '..')
const BIN = join(PACKAGE, 'bin/dogu-mcp.js')
const LIB = join(PACKAGE, 'lib/index.js')
const { version } = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { version: string }

interface Run { code: number | null; stdout: string; stderr: string }

function dogu(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    // stdin closed at once: a command that started serving would stop and exit 0.
    const child = execFile(process.execPath, [BIN, ...args], { cwd, timeout: 20_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
    child.stdin?.end()
  })
}

describe('dogu-mcp on the command line (the built bin)', () => {
  let cwd: string

  beforeAll(async () => {
    // The bin runs lib/: one older than the sources would test the code before this change.
    for (const source of ['src/run-dogu-mcp.ts', 'src/dogu-mcp-args.ts']) {
      if (!existsSync(LIB) || statSync(LIB).mtimeMs < statSync(join(PACKAGE, source)).mtimeMs) {
        throw new Error(`packages/mcp/lib/index.js is missing or older than ${source}: run yarn build first`)
      }
    }
    cwd = await mkdtemp(join(tmpdir(), 'dogu-mcp-cli-'))
  })
  afterAll(() => rm(cwd, { recursive: true, force: true }))

  it('--help and -h print the usage, its options, the config file and an example, and exit 0', async () => {
    for (const flag of ['--help', '-h']) {
      const run = await dogu([flag], cwd)
      expect(run, flag).toMatchObject({ code: 0, stderr: '' })
      expect(run.stdout).toMatch(/^Usage: dogu-mcp \[options\] \[config\.json\]\n/)
      expect(run.stdout).toContain('-h, --help')
      expect(run.stdout).toContain('-v, --version')
      expect(run.stdout).toContain('defaults to ./dogu-mcp.json')
      expect(run.stdout).toMatch(/^ {2}plugins {4}/m)
      expect(run.stdout).toContain('"plugins": { "@dogu/fs": { "workspace": "/home/me/project" } }')
      expect(run.stdout).toContain('claude mcp add dogu -- npx dogu-mcp /home/me/dogu-mcp.json')
    }
    // Asked for help with a config beside it: the help, nothing served.
    expect(await dogu(['dogu-mcp.json', '--help'], cwd)).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^Usage: dogu-mcp/) })
  })

  it('--version and -v print the package\'s version and exit 0', async () => {
    for (const flag of ['--version', '-v']) expect(await dogu([flag], cwd)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  it('an unknown option is named, with the usage hint, exit 2; so is a second config file', async () => {
    expect(await dogu(['--config', 'x.json'], cwd)).toEqual({
      code: 2,
      stdout: '',
      stderr: 'dogu-mcp: unknown option "--config" (dogu-mcp takes --help, --version and a config file)\nRun "dogu-mcp --help" for usage.\n',
    })
    expect(await dogu(['a.json', 'b.json'], cwd)).toEqual({
      code: 2,
      stdout: '',
      stderr: 'dogu-mcp: expected one config file, got 2: a.json b.json\nRun "dogu-mcp --help" for usage.\n',
    })
  })

  it('a config file that is not there is still a failure to start (exit 1) naming it', async () => {
    const run = await dogu(['missing.json'], cwd)
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`cannot read the dogu-mcp config ${join(cwd, 'missing.json')}: ENOENT: no such file or directory, open '${join(cwd, 'missing.json')}'\n`)
    // After `--`, a name that starts with `-` is a path.
    const dashed = await dogu(['--', '--help'], cwd)
    expect(dashed.code).toBe(1)
    expect(dashed.stderr).toContain(`cannot read the dogu-mcp config ${join(cwd, '--help')}`)
  })
})
