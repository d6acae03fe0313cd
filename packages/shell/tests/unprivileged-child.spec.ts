// How the escape suite's unprivileged pass reaches the repository as `nobody`
// (unprivileged-child.ts), and what the suite says where it cannot: one passing test,
// "unprivileged pass did not run: <why>", which DOGU_REQUIRE_UNPRIVILEGED=1 (CI) fails.
import { execFile, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { NOT_RUN, prepareUnprivileged, reportNotRun, type UnprivilegedRun } from './unprivileged-child'

const ROOT = process.getuid?.() === 0
const REPO = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '')
const VITEST_TEXT = 'export {} // the fake repository\'s vitest\n'

// Open to others, so that only a fake repository's own parent decides whether nobody reaches it.
const scratch = mkdtempSync(join(tmpdir(), 'dogu-unprivileged-spec-'))
chmodSync(scratch, 0o755)
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A folder on PATH with every command of this PATH but `setpriv`, as on a machine without it. */
function pathWithout(command: string): string {
  const shim = mkdtempSync(join(scratch, `no-${command}-`))
  const seen = new Set([command])
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    let names: string[] = []
    try {
      names = readdirSync(folder)
    } catch {}
    for (const name of names) {
      if (seen.has(name)) continue
      seen.add(name)
      symlinkSync(join(folder, name), join(shim, name))
    }
  }
  return shim
}

/** A repository stand-in holding the file the child needs, at `<parent>/clone`, `parent` of the given mode. */
function fakeRepo(parentMode: number, fileMode = 0o644): string {
  const parent = mkdtempSync(join(scratch, 'parent-'))
  chmodSync(parent, parentMode)
  const repo = join(parent, 'clone')
  mkdirSync(join(repo, 'node_modules/vitest'), { recursive: true })
  writeFileSync(join(repo, 'node_modules/vitest/vitest.mjs'), VITEST_TEXT, { mode: fileMode })
  return repo
}

/** Runs `script` with sh as nobody through `run`; its exit code and output. */
function runAs(run: UnprivilegedRun, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = run.spawn(['/bin/sh', '-c', script], { env: { PATH: process.env.PATH, HOME: run.home }, stdio: ['ignore', 'pipe', 'pipe'] })
    let [stdout, stderr] = ['', '']
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('the unprivileged pass where it cannot run', () => {
  it('names a missing setpriv in one line', () => {
    expect(prepareUnprivileged(REPO, { PATH: '/nonexistent' })).toEqual({
      reason: 'no setpriv on PATH (/nonexistent); it comes with util-linux (apt-get install -y util-linux)',
    })
  })

  it('prints its line and passes, and fails with DOGU_REQUIRE_UNPRIVILEGED=1', () => {
    const line = `${NOT_RUN}: no setpriv on PATH`
    const printed: unknown[] = []
    const log = console.log
    console.log = (...args: unknown[]) => printed.push(args)
    try {
      reportNotRun(line, {})
      reportNotRun(line, { DOGU_REQUIRE_UNPRIVILEGED: '0' })
    } finally {
      console.log = log
    }
    expect(printed).toEqual([[line], [line]])
    expect(() => reportNotRun(line, { DOGU_REQUIRE_UNPRIVILEGED: '1' })).toThrow(`${line}; DOGU_REQUIRE_UNPRIVILEGED=1 requires it`)
  })
})

if (ROOT) {
  describe('as root: reaching the repository as nobody', () => {
    it('binds a clone under a 0700 folder where nobody reads it, and leaves no bind or folder behind', async () => {
      const repo = fakeRepo(0o700)
      // Without the bind, nobody cannot pass through the clone's parent.
      const direct = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'cat', join(repo, 'node_modules/vitest/vitest.mjs')], { encoding: 'utf8' })
      expect(direct.status).not.toBe(0)
      expect(direct.stderr).toContain('Permission denied')

      const run = prepareUnprivileged(repo)
      if ('reason' in run) throw new Error(run.reason)
      expect(run.how).toBe('bind')
      expect(run.repo).not.toBe(repo)
      const seen = await runAs(run, 'id -u; id -G; pwd; cat node_modules/vitest/vitest.mjs; touch "$HOME/made"; touch made-in-repo')
      expect(seen.stdout).toBe(`65534\n65534\n${run.repo}\n${VITEST_TEXT}`)
      // The bind lends nobody no rights on the repository's files.
      expect(seen.stderr).toMatch(/made-in-repo.*Permission denied/)
      expect(existsSync(join(run.home, 'made'))).toBe(true)
      // The bind was the child's alone: the mount point is empty here.
      expect(readdirSync(run.repo)).toEqual([])
      run.close()
      expect(existsSync(run.home)).toBe(false)
      expect(existsSync(run.repo)).toBe(false)
      expect(readFileSync(join(repo, 'node_modules/vitest/vitest.mjs'), 'utf8')).toBe(VITEST_TEXT)
    })

    it('without a mount namespace, runs in the repository where nobody reaches it, and says why not where it does not', async () => {
      const PATH = pathWithout('unshare')
      const open = fakeRepo(0o755)
      const run = prepareUnprivileged(open, { PATH })
      if ('reason' in run) throw new Error(run.reason)
      expect(run.how).toBe('direct')
      expect(run.repo).toBe(open)
      expect((await runAs(run, 'id -u; pwd')).stdout).toBe(`65534\n${open}\n`)
      run.close()

      const closed = fakeRepo(0o700)
      expect(prepareUnprivileged(closed, { PATH })).toEqual({
        reason: `nobody (uid 65534) cannot reach the repository at ${closed} (cannot read ${closed}/node_modules/vitest/vitest.mjs (EACCES); ${dirname(closed)} is 0700), and no mount namespace could bind it where nobody can (no unshare on PATH)`,
      })
    })

    it('says so when the clone\'s own files are not readable by others (a clone made with umask 077)', () => {
      const repo = fakeRepo(0o700, 0o600)
      expect(prepareUnprivileged(repo)).toEqual({
        reason: `as nobody (uid 65534): cannot read ${repo}/node_modules/vitest/vitest.mjs (EACCES)`,
      })
    })

    it('the escape suite, without setpriv, has one passing test saying so, which DOGU_REQUIRE_UNPRIVILEGED=1 fails', async () => {
      const PATH = pathWithout('setpriv')
      const suite = async (require: boolean) => {
        const report = join(mkdtempSync(join(scratch, 'report-')), 'report.json')
        const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS' && key !== 'DOGU_REQUIRE_UNPRIVILEGED'))
        const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
          execFile(process.execPath, [
            join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', 'packages/shell/tests/sandbox-escape.spec.ts',
            '-t', NOT_RUN, '--configLoader', 'runner', '--typecheck.enabled=false',
            '--reporter=default', '--reporter=json', `--outputFile.json=${report}`,
          ], { cwd: REPO, env: { ...env, PATH, NO_COLOR: '1', ...(require ? { DOGU_REQUIRE_UNPRIVILEGED: '1' } : {}) }, timeout: 120_000 }, (_, out, err) => resolve({ stdout: out, stderr: err }))
        })
        if (!existsSync(report)) throw new Error(`the escape suite wrote no report:\n${stdout}\n${stderr}`)
        const json = JSON.parse(readFileSync(report, 'utf8')) as { numFailedTests: number; numPassedTests: number; testResults: { assertionResults: { ancestorTitles: string[]; title: string; status: string; failureMessages: string[] }[] }[] }
        const tier = json.testResults.flatMap((f) => f.assertionResults).filter((a) => a.ancestorTitles[0] === 'sandbox escape suite (unprivileged, as nobody in a child vitest)')
        return { json, tier, stdout }
      }
      const [plain, required] = await Promise.all([suite(false), suite(true)])
      const line = `${NOT_RUN}: no setpriv on PATH (${PATH}); it comes with util-linux (apt-get install -y util-linux)`
      expect(plain.tier.map((a) => [a.title, a.status])).toEqual([[line, 'passed']])
      expect(plain.json).toMatchObject({ numPassedTests: 1, numFailedTests: 0 })
      // The test printed its line, whole, on a line of its own.
      expect(plain.stdout.split('\n')).toContain(line)
      expect(required.tier.map((a) => [a.title, a.status])).toEqual([[line, 'failed']])
      expect(required.tier[0].failureMessages.join('\n')).toContain(`${line}; DOGU_REQUIRE_UNPRIVILEGED=1 requires it`)
    }, 150_000)
  })
}
