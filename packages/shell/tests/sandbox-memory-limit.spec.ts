// How `sandbox.limits.memory` is held: a memory cgroup where the bot can make one under its
// own (this project's machines, as root: cgroup v1's memory hierarchy), else a watchdog that
// sums the resident memory of the sandbox's processes. Both are tested here, the watchdog by
// turning the cgroup off; the escape suite runs the same attack as root and as `nobody`.
// Which describes appear depends on what the machine has; none is skipped.
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createShellTool, ProcessTable } from '../src'
import { CgroupParent } from '../src/sandbox-cgroup'
import { ShellSandbox } from '../src/sandbox-plan'
import { fakeCall } from './helpers'

const MiB = 1024 * 1024
const memoryCgroups = CgroupParent.detect('memory')
let workspace: string

beforeAll(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-memory-limit-')))
})
afterAll(() => rmSync(workspace, { recursive: true, force: true }))

/**
 * `n` processes each filling `mib` MiB (written, so it is resident), then, with `hold`,
 * sleeping 30 s so that all of it is resident at once; the parent waits for them and prints
 * `done`. Each stays far below `limits.addressSpace`: only the sum is too much.
 */
const FILL = (n: number, mib: number, hold: boolean) => `python3 -c "
import os, time
kids = []
for i in range(${n}):
    pid = os.fork()
    if pid == 0:
        b = bytearray(b'x') * (${mib} * 1024 * 1024)
        time.sleep(${hold ? 30 : 0})
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print('done')
"`

type Data = { status: string; exitCode: number | null; limit?: string; stdout: { text: string } }
const LIMITS = { memory: 256 * MiB } as never

/** Through the tool, with the mechanism the machine has. */
async function runTool(command: string): Promise<{ text: string; data: Data }> {
  const processes = new ProcessTable({ killWait: 15_000 })
  try {
    const tool = createShellTool({ workspace, processes, sandbox: { mode: 'required', limits: LIMITS } })
    return await tool.run({ command, timeout: 60_000 } as never, fakeCall({ id: 's1' })) as { text: string; data: Data }
  } finally {
    await processes.dispose()
  }
}

/** Through a sandbox with no memory cgroup, as on a machine that has none. */
async function runWatched(command: string): Promise<Data> {
  const sandbox = new ShellSandbox({ mode: 'required', limits: LIMITS }, { memoryCgroups: false })
  expect(sandbox.memoryLimit).toBe('watchdog')
  const processes = new ProcessTable({ killWait: 15_000 })
  const prepared = await sandbox.prepare({ workspace, cwd: workspace, readOnly: false, shell: 'bash', command, env: { PATH: process.env.PATH } })
  try {
    const outcome = await processes.run({ file: prepared.command.file, args: prepared.command.args, env: prepared.command.env, cwd: workspace, timeout: 60_000, watch: prepared.watch, fds: prepared.fds })
    return outcome as unknown as Data
  } finally {
    await prepared.close()
    await processes.dispose()
  }
}

const MEMORY_LIMIT = 'more than 256 MiB of memory, all its processes together (sandbox.limits.memory)'

describe(`limits.memory is held by ${memoryCgroups ? 'a memory cgroup' : 'the watchdog'} (what this machine has)`, () => {
  it('the tool description says which', () => {
    const tool = createShellTool({ workspace, sandbox: { mode: 'required', limits: { memory: 256 * MiB } as never } })
    expect(tool.description).toContain(memoryCgroups
      ? 'A command\'s processes together may use 256 MiB of memory (a memory cgroup); past it the command is stopped.'
      : 'A command\'s processes together may use about 256 MiB of resident memory (checked every 20 ms, no memory cgroup here)')
  })

  it('four processes of 100 MiB each under a 256 MiB limit: the command is stopped, and the result says it was memory', async () => {
    const { text, data } = await runTool(FILL(4, 100, true))
    expect(data.status, JSON.stringify(data)).toBe('limit_exceeded')
    expect(data.limit).toBe(MEMORY_LIMIT)
    expect(text).toContain(`Stopped by the sandbox: ${MEMORY_LIMIT}`)
    expect(data.stdout.text).not.toContain('done')
  })

  it('two processes of 40 MiB each run to their end under the same limit', async () => {
    const { data } = await runTool(FILL(2, 40, false))
    expect(data.status, JSON.stringify(data)).toBe('exited')
    expect(data.exitCode).toBe(0)
    expect(data.stdout.text).toContain('done')
  })
})

if (memoryCgroups) {
  describe('memory cgroups', () => {
    const ours = () => readdirSync(memoryCgroups.base).filter((name) => name.startsWith(`dogu-${process.pid}-`))

    it('a command\'s memory cgroup is removed once it ends, an OOM-killed one included', async () => {
      await runTool(FILL(4, 100, true))
      await runTool(FILL(1, 10, false))
      expect(ours()).toEqual([])
    })
  })
}

describe('without a memory cgroup: the watchdog', () => {
  it('kills the sandbox once its processes\' resident memory together passes the limit', async () => {
    const data = await runWatched(FILL(4, 100, true))
    expect(data.status, JSON.stringify(data)).toBe('limit_exceeded')
    expect(data.limit).toBe(MEMORY_LIMIT)
    expect(data.stdout.text).not.toContain('done')
  })

  it('lets a command under the limit finish', async () => {
    const data = await runWatched(FILL(2, 40, false))
    expect(data.status, JSON.stringify(data)).toBe('exited')
    expect(data.stdout.text).toContain('done')
  })
})
