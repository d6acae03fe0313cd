import { afterAll, describe, expect, it } from 'vitest'
import { groupControl } from '../src/process-group'
import { ProcessTable } from '../src/process-table'
import { ShellError } from '../src/shell-error'
import { killMarkedProcesses, processesMatching, sleepMarker } from './helpers'

afterAll(killMarkedProcesses)

const bash = (command: string, timeout = 20_000, signal?: AbortSignal) =>
  ({ file: 'bash', args: ['-c', command], cwd: process.cwd(), timeout, signal })

describe('ProcessTable: exits', () => {
  it('reports exit codes and both streams; a non-zero exit is a normal outcome', async () => {
    const table = new ProcessTable()
    const outcome = await table.run(bash('echo out; echo err >&2; exit 3'))
    expect(outcome).toMatchObject({
      status: 'exited',
      exitCode: 3,
      signal: null,
      stdout: { text: 'out\n', bytes: 4, omittedBytes: 0 },
      stderr: { text: 'err\n', bytes: 4, omittedBytes: 0 },
      leftovers: false,
    })
    expect((await table.run(bash('definitely-not-a-command-xyz'))).exitCode).toBe(127)
    expect(await table.run(bash('kill -TERM $$'))).toMatchObject({ status: 'exited', exitCode: null, signal: 'SIGTERM' })
    expect(table.size).toBe(0)
  })

  it('throws SPAWN_FAILED when the shell cannot start, and tracks nothing', async () => {
    const table = new ProcessTable()
    const error = await table.run({ ...bash('true'), file: '/nonexistent/shell' }).catch((error) => error)
    expect(ShellError.is(error, 'SPAWN_FAILED')).toBe(true)
    expect(error.message).toContain('could not start /nonexistent/shell')
    expect(table.size).toBe(0)
  })

  it('terminates what the shell left running in its group once it exits', async () => {
    const marker = sleepMarker()
    const table = new ProcessTable()
    const outcome = await table.run(bash(`sleep ${marker} & echo started`))
    expect(outcome).toMatchObject({ status: 'exited', exitCode: 0, leftovers: true, stdout: { text: 'started\n' } })
    expect(processesMatching(marker)).toEqual([])
  })
})

describe('ProcessTable: termination leaves no process behind', () => {
  it('on timeout, with grandchildren, keeping the output so far', async () => {
    const marker = sleepMarker()
    const table = new ProcessTable()
    const outcome = await table.run(bash(`echo before; sleep ${marker} & sleep ${marker} & wait`, 300))
    expect(outcome).toMatchObject({ status: 'timed_out', exitCode: null, stdout: { text: 'before\n' } })
    expect(processesMatching(marker)).toEqual([])
    expect(table.size).toBe(0)
  })

  it('on abort (cancel)', async () => {
    const marker = sleepMarker()
    const controller = new AbortController()
    const table = new ProcessTable()
    const running = table.run({
      ...bash(`sh -c 'sleep ${marker} & sleep ${marker} & wait' & echo ready; wait`, 60_000, controller.signal),
      onOutput: (_, chunk) => { if (chunk.includes('ready')) controller.abort() },
    })
    const outcome = await running
    expect(outcome.status).toBe('cancelled')
    expect(processesMatching(marker)).toEqual([])
  })

  it('with SIGKILL when the group ignores SIGTERM', async () => {
    const marker = sleepMarker()
    const table = new ProcessTable({ killGrace: 200 })
    const outcome = await table.run(bash(`trap '' TERM; sleep ${marker} & sleep ${marker}; wait`, 300))
    expect(outcome.status).toBe('timed_out')
    expect(outcome.signal).toBe('SIGKILL')
    expect(processesMatching(marker)).toEqual([])
  })

  it('on dispose, which waits for the groups and refuses new runs; a second dispose is harmless', async () => {
    const marker = sleepMarker()
    const table = new ProcessTable()
    let ready!: () => void
    const started = new Promise<void>((resolve) => { ready = resolve })
    const running = table.run({ ...bash(`sleep ${marker} & sleep ${marker} & echo ready; wait`, 60_000), onOutput: () => ready() })
    await started
    expect(table.list()).toEqual([expect.objectContaining({ state: 'running' })])
    await table.dispose()
    expect(processesMatching(marker)).toEqual([])
    expect((await running).status).toBe('cancelled')
    await table.dispose()
    const error = await table.run(bash('true')).catch((error) => error)
    expect(ShellError.is(error, 'DISPOSED')).toBe(true)
  })

  it('returns outcome_unknown and keeps the handle when the kill cannot be confirmed', async () => {
    const marker = sleepMarker()
    const signals: string[] = []
    // A control whose signals never arrive, as for a process stuck in the kernel.
    const table = new ProcessTable({ killGrace: 50, killWait: 50, control: { signal: (_, signal) => { signals.push(signal) }, alive: groupControl.alive } })
    const outcome = await table.run(bash(`sleep ${marker}`, 100))
    expect(outcome.status).toBe('outcome_unknown')
    expect(signals).toEqual(['SIGTERM', 'SIGKILL'])
    expect(table.list()).toEqual([{ pid: outcome.pid, label: `sleep ${marker}`, state: 'unconfirmed' }])
    expect(processesMatching(marker)).toHaveLength(1)
    // Once the group does die, dispose confirms it and lets go of the handle.
    process.kill(-outcome.pid!, 'SIGKILL')
    await table.dispose()
    expect(table.size).toBe(0)
    expect(processesMatching(marker)).toEqual([])
  })
})

// An abort or a dispose that lands while the table awaits during set-up (opening the
// captures, waiting for the spawn) must still stop the command. `setUpStep` pauses at
// those exact points; each command sleeps far longer than the test may take.
describe('ProcessTable: stopping during set-up', () => {
  // The shell itself, which the table reaps; its group's members are checked with `ps`,
  // since an init that does not reap would leave them as zombies.
  const gone = (pid: number) => {
    try {
      process.kill(pid, 0)
      return false
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH'
    }
  }

  it('an abort before the run starts spawns nothing', async () => {
    const steps: string[] = []
    const table = new ProcessTable({ setUpStep: (step) => { steps.push(step) } })
    const outcome = await table.run(bash('touch should-not-exist', 20_000, AbortSignal.abort()))
    expect(outcome).toMatchObject({ status: 'cancelled', exitCode: null, signal: null, leftovers: false, stdout: { bytes: 0 }, stderr: { bytes: 0 } })
    expect(outcome.pid).toBeUndefined()
    expect(steps).toEqual([])
    expect(table.size).toBe(0)
  })

  it('an abort once the pipes are open spawns nothing', async () => {
    const marker = sleepMarker()
    const controller = new AbortController()
    const steps: string[] = []
    const table = new ProcessTable({ setUpStep: (step) => { steps.push(step); if (step === 'opened') controller.abort() } })
    const outcome = await table.run(bash(`sleep ${marker}`, 60_000, controller.signal))
    expect(outcome).toMatchObject({ status: 'cancelled', exitCode: null, leftovers: false })
    expect(outcome.pid).toBeUndefined()
    expect(steps).toEqual(['opened'])
    expect(processesMatching(marker)).toEqual([])
    expect(table.size).toBe(0)
  }, 10_000)

  it('an abort once the process is spawned terminates its group', async () => {
    const marker = sleepMarker()
    const controller = new AbortController()
    const steps: string[] = []
    const table = new ProcessTable({ setUpStep: (step) => { steps.push(step); if (step === 'spawned') controller.abort() } })
    const outcome = await table.run(bash(`sleep ${marker} & sleep ${marker}; wait`, 60_000, controller.signal))
    expect(outcome).toMatchObject({ status: 'cancelled', exitCode: null, leftovers: false })
    expect(steps).toEqual(['opened', 'spawned'])
    expect(gone(outcome.pid!)).toBe(true)
    expect(processesMatching(marker)).toEqual([])
    expect(table.size).toBe(0)
  }, 10_000)

  it.each(['opened', 'spawned'] as const)('a dispose at %s stops the command and refuses later runs', async (at) => {
    const marker = sleepMarker()
    const table: ProcessTable = new ProcessTable({ setUpStep: (step) => step === at ? table.dispose() : undefined })
    const outcome = await table.run(bash(`sleep ${marker}`, 60_000))
    expect(outcome.status).toBe('cancelled')
    if (at === 'opened') expect(outcome.pid).toBeUndefined()
    else expect(gone(outcome.pid!)).toBe(true)
    expect(processesMatching(marker)).toEqual([])
    expect(table.size).toBe(0)
    expect(ShellError.is(await table.run(bash('true')).catch((error) => error), 'DISPOSED')).toBe(true)
  }, 10_000)
})
