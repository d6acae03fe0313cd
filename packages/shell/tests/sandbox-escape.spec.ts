// The sandbox escape suite: every attack of sandbox-attacks.ts run with the sandbox on, as
// root and as an unprivileged user, then with the sandbox required and bubblewrap missing.
//
// Which describes appear depends on who runs the tests (no test is ever skipped):
// - as root (CI, this project's machines): the root pass runs in this process; the
//   unprivileged pass runs this same file in a child vitest as `nobody` (setpriv, uid and
//   gid 65534, no groups), with `DOGU_ESCAPE_AS=unprivileged`, and shows one test per attack
//   here with the child's result (the child starts at once and runs alongside the root pass).
//   The child sees the repository bound onto a folder nobody can reach, so a clone under
//   root's 0700 home works (unprivileged-child.ts). Where it cannot run at all (no setpriv,
//   no uid to switch to, no way to reach the clone), that describe has one passing test,
//   "unprivileged pass did not run: <why>", which fails with DOGU_REQUIRE_UNPRIVILEGED=1 (CI);
// - as any other user (a developer machine): the root pass cannot run, so it does not
//   appear; the unprivileged pass runs in this process;
// - with `DOGU_ESCAPE_AS=unprivileged` (the child): only the in-process unprivileged pass.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createShellTool, ProcessTable } from '../src'
import { fakeCall, killMarkedProcesses, useScratchHome } from './helpers'
import { startRemoteHost } from './remote-host'
import { ATTACKS, attackContext, createFixture, type Fixture, runAttack, toolOptions } from './sandbox-attacks'
import { NOT_RUN, prepareUnprivileged, reportNotRun, type UnprivilegedRun } from './unprivileged-child'

const AS_CHILD = process.env.DOGU_ESCAPE_AS === 'unprivileged'
const ROOT = process.getuid?.() === 0
const REPO = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '')
const title = (i: number) => `${i + 1}. [${ATTACKS[i].class}] ${ATTACKS[i].name}`

afterAll(() => killMarkedProcesses())
// The child runs with a home its parent made; this process plants home attacks in its own.
if (!AS_CHILD) useScratchHome()

/** Runs the whole table in this process, with one fixture for the pass. */
function inProcessPass(name: string, prefix: string) {
  describe(name, () => {
    let fixture: Fixture
    beforeAll(async () => {
      fixture = await createFixture(prefix)
    })
    afterAll(async () => {
      await fixture?.close()
    })
    it('has at least 40 attacks', () => {
      expect(ATTACKS.length).toBeGreaterThanOrEqual(40)
      expect(new Set(ATTACKS.map((a) => a.name)).size).toBe(ATTACKS.length)
    })
    ATTACKS.forEach((attack, i) => {
      it(title(i), () => runAttack(attack, fixture), 90_000)
    })
  })
}

interface ChildReport {
  exitCode: number | null
  stderr: string
  results: Map<string, { status: string; failureMessages: string[] }>
}

/** The same file as `nobody` in a child vitest; its JSON report, keyed by test title. */
async function runUnprivilegedChild(run: UnprivilegedRun): Promise<ChildReport> {
  try {
    // The allowlist's control needs another host, which only root can make.
    const remote = await startRemoteHost()
    try {
      return await spawnUnprivilegedChild(run, remote.address)
    } finally {
      remote.close()
    }
  } finally {
    run.close()
  }
}

function spawnUnprivilegedChild(run: UnprivilegedRun, remote: string): Promise<ChildReport> {
  const report = join(run.home, 'report.json')
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: run.home,
    TMPDIR: run.home,
    DOGU_ESCAPE_AS: 'unprivileged',
    DOGU_ESCAPE_REMOTE: remote,
    CI: process.env.CI ?? '1',
  }
  const argv = [
    process.execPath, join(run.repo, 'node_modules/vitest/vitest.mjs'), 'run', 'packages/shell/tests/sandbox-escape.spec.ts',
    // The default loader writes the bundled config into node_modules, which nobody cannot.
    '--configLoader', 'runner', '--typecheck.enabled=false',
    '--reporter=json', `--outputFile=${report}`,
  ]
  return new Promise((resolve, reject) => {
    const child = run.spawn(argv, { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-20_000)
    })
    child.on('error', reject)
    child.on('close', (exitCode) => {
      const results = new Map<string, { status: string; failureMessages: string[] }>()
      if (existsSync(report)) {
        const json = JSON.parse(readFileSync(report, 'utf8')) as { testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[] }
        for (const file of json.testResults) for (const a of file.assertionResults) results.set(a.title, a)
      }
      resolve({ exitCode, stderr, results })
    })
  })
}

if (AS_CHILD) {
  inProcessPass('sandbox escape suite (unprivileged)', 'dogu-escape-user-')
} else {
  if (ROOT) {
    // Started now, so the child runs while the root pass does; awaited at the end whatever
    // tests were selected, so its directory is removed. A string: why it cannot run here.
    const run = prepareUnprivileged(REPO)
    const child = 'reason' in run ? run.reason : runUnprivilegedChild(run)
    if (typeof child !== 'string') {
      child.catch(() => {})
      afterAll(async () => {
        await child.catch(() => {})
      }, 240_000)
    }
    inProcessPass('sandbox escape suite (root)', 'dogu-escape-root-')
    describe('sandbox escape suite (unprivileged, as nobody in a child vitest)', () => {
      if (typeof child === 'string') {
        // Where nobody cannot run it: one line saying why, a failure where CI requires it.
        const line = `${NOT_RUN}: ${child}`
        it(line, () => reportNotRun(line))
        return
      }
      let report: ChildReport
      beforeAll(async () => {
        report = await child
      }, 240_000)
      const result = (name: string) => {
        const found = report.results.get(name)
        if (!found) throw new Error(`the unprivileged run has no result for "${name}" (exit code ${report.exitCode}):\n${report.stderr}`)
        if (found.status !== 'passed') throw new Error(`as nobody: ${found.status}\n${found.failureMessages.join('\n')}`)
      }
      it('has at least 40 attacks', () => result('has at least 40 attacks'))
      ATTACKS.forEach((_, i) => {
        it(title(i), () => result(title(i)))
      })
    })
  } else {
    inProcessPass('sandbox escape suite (unprivileged)', 'dogu-escape-user-')
  }

  describe('sandbox required, bubblewrap missing', () => {
    let fixture: Fixture
    const processes = new ProcessTable()
    beforeAll(async () => {
      fixture = await createFixture('dogu-escape-required-')
    })
    afterAll(async () => {
      await processes.dispose()
      await fixture?.close()
    })
    ATTACKS.forEach((attack, i) => {
      it(`refuses: ${title(i)}`, async () => {
        const ctx = attackContext(fixture)
        const marker = join(ctx.dir, 'ran')
        const tool = createShellTool(toolOptions(fixture, processes, { ...attack.sandbox?.(ctx), mode: 'required', bwrapPath: '/nonexistent/bwrap' }))
        const call = fakeCall({ id: 's', cwd: ctx.dir })
        const args = { command: `touch ${marker}; ${attack.command(ctx)}`, timeout: attack.timeout ?? 20_000 }
        let refused: unknown
        try {
          await tool.permission!(args, call)
        } catch (error) {
          refused = error
        }
        expect(refused).toMatchObject({ name: 'ShellError', code: 'SANDBOX_REQUIRED' })
        await expect(tool.run(args, call)).rejects.toMatchObject({ code: 'SANDBOX_REQUIRED' })
        expect(existsSync(marker)).toBe(false)
        for (const target of ctx.targets) expect(existsSync(target)).toBe(false)
      })
    })
  })
}
