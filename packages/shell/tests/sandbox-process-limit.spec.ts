// How `sandbox.limits.processes` is held. An ordinary user's sandbox has RLIMIT_NPROC; a
// root bot's gets a pids cgroup where one can be made (this project's machines: cgroup v1's
// pids hierarchy), and the watchdog elsewhere. Which tests appear depends on who runs them
// and what the machine has; none is skipped.
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createShellTool, ProcessTable } from '../src'
import { CgroupParent } from '../src/sandbox-cgroup'
import { ShellSandbox } from '../src/sandbox-plan'
import { fakeCall } from './helpers'

const ROOT = process.getuid?.() === 0
const cgroups = ROOT ? CgroupParent.detect('pids') : undefined
let workspace: string

beforeAll(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-process-limit-')))
})
afterAll(() => rmSync(workspace, { recursive: true, force: true }))

// Forks 40 sleepers and says how many it got and why it stopped; no timing involved.
const FORK_40 = `python3 -c "
import os, sys, time
n = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError as e:
        print('refused', e.strerror)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print('forked', n)
"`

type Data = { status: string; stdout: { text: string } }
async function runBash(command: string): Promise<Data> {
  const processes = new ProcessTable()
  try {
    const tool = createShellTool({ workspace, processes, sandbox: { mode: 'required', limits: { processes: 16 } as never } })
    const result = await tool.run({ command, timeout: 60_000 } as never, fakeCall({ id: 's1' })) as { data: Data }
    return result.data
  } finally {
    await processes.dispose()
  }
}

const forked = (data: Data) => Number(/forked (\d+)/.exec(data.stdout.text)?.[1])

if (!ROOT || cgroups) {
  describe(`limits.processes is held by the kernel (${ROOT ? 'a pids cgroup' : 'RLIMIT_NPROC'})`, () => {
    it('refuses the forks past the limit: the command sees EAGAIN and goes on', async () => {
      const data = await runBash(FORK_40)
      expect(data.stdout.text).toContain('refused Resource temporarily unavailable')
      expect(forked(data)).toBeLessThan(16)
      expect(data.status).toBe('exited')
    })
  })
}

if (cgroups) {
  describe('a root bot\'s pids cgroups', () => {
    const ours = () => readdirSync(cgroups.base).filter((name) => name.startsWith(`dogu-${process.pid}-`))

    it('each command has its own limit: two at once fork more than one limit\'s worth together', async () => {
      const [a, b] = await Promise.all([runBash(FORK_40), runBash(FORK_40)])
      expect(forked(a)).toBeLessThan(16)
      expect(forked(b)).toBeLessThan(16)
      expect(forked(a) + forked(b)).toBeGreaterThan(16)
    })

    it('a command\'s cgroup is removed once it ends, sleepers it left behind included', async () => {
      await runBash(FORK_40)
      expect(ours()).toEqual([])
    })
  })
}

if (ROOT) {
  describe('a root bot without a pids cgroup: the watchdog', () => {
    // The shell sleeps after forking, so the watchdog sees the sleepers while it runs.
    it('kills the sandbox past the limit (limit_exceeded) and names the limit', async () => {
      const sandbox = new ShellSandbox({ mode: 'required', limits: { processes: 16 } as never }, { pidsCgroups: false })
      expect(sandbox.processLimit).toBe('watchdog')
      const processes = new ProcessTable({ killWait: 30_000 })
      const prepared = await sandbox.prepare({ workspace, cwd: workspace, readOnly: false, shell: 'bash', command: `${FORK_40}; sleep 60`, env: { PATH: process.env.PATH } })
      try {
        const outcome = await processes.run({ file: prepared.command.file, args: prepared.command.args, env: prepared.command.env, cwd: workspace, timeout: 60_000, watch: prepared.watch, fds: prepared.fds })
        expect(outcome.status).toBe('limit_exceeded')
        expect(outcome.limit).toBe('more than 16 processes (sandbox.limits.processes)')
      } finally {
        await prepared.close()
        await processes.dispose()
      }
    })
  })
}
