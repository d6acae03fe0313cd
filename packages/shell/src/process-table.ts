import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import { openCapture } from './capture-socket'
import { setTimeout as sleep } from 'node:timers/promises'
import { OutputBuffer, type CapturedOutput } from './output-buffer'
import { groupControl, type GroupControl } from './process-group'
import { ShellError } from './shell-error'

/** How a command ended. `outcome_unknown`: its group survived SIGKILL and is still tracked. */
export type ProcessStatus = 'exited' | 'timed_out' | 'cancelled' | 'limit_exceeded' | 'outcome_unknown'

export interface ProcessOutcome {
  status: ProcessStatus
  /** The shell's exit code; `null` when it was ended by a signal or never exited. */
  exitCode: number | null
  /** The signal that ended the shell, if one did. */
  signal: NodeJS.Signals | null
  stdout: CapturedOutput
  stderr: CapturedOutput
  durationMs: number
  /** The process group id (the shell's pid); absent when nothing was started. */
  pid?: number
  /** The shell exited but left processes in its group; they were terminated. */
  leftovers: boolean
  /** Why a `watch` stopped it (`limit_exceeded`), also when the shell exited before the watch could stop it. */
  limit?: string
}

export interface RunRequest {
  file: string
  args: readonly string[]
  cwd: string
  env?: NodeJS.ProcessEnv
  /** Milliseconds before the group is terminated as `timed_out`. */
  timeout: number
  /** Aborting terminates the group as `cancelled`. */
  signal?: AbortSignal
  /** Every chunk as it is read, for streaming progress; valid only during the call (the buffer is reused). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void
  /** Bytes kept from the start of each stream. @default 16384 */
  headBytes?: number
  /** Bytes kept from the end of each stream. @default 16384 */
  tailBytes?: number
  /**
   * Follows processes that belong to the run outside its process group (a sandbox's pid
   * namespace), given the started process's pid. `check` runs every `interval` ms while the command runs, and once more when
   * the shell exits; a reason it returns stops the command as `limit_exceeded`. The run is not over
   * while `alive` says so.
   */
  watch?: (pid: number) => RunWatch
  /** What `list()` shows for it. @default the last argument */
  label?: string
  /** Open file descriptors the process inherits as fd 3, 4, … (bubblewrap reads its seccomp filter from one). */
  fds?: readonly number[]
}

export interface RunWatch {
  interval: number
  check(): string | undefined
  alive(): boolean
  /** Kills what it follows, before the group is signalled (a sandbox's namespace, which killing bubblewrap alone may miss). */
  kill(): Promise<void>
}

export interface ProcessTableOptions {
  /** Milliseconds between SIGTERM and SIGKILL. @default 2000 */
  killGrace?: number
  /** Milliseconds to wait for the group to vanish after SIGKILL before `outcome_unknown`. @default 2000 */
  killWait?: number
  /** @internal Replaces signalling and probing, for tests. */
  control?: GroupControl
  /** @internal Awaited after each await of set-up (pipes opened, process spawned), for tests that abort there. */
  setUpStep?: (step: SetUpStep) => unknown
}

type SetUpStep = 'opened' | 'spawned'

/** A process group the table is responsible for. */
export interface TrackedProcess {
  readonly pid: number
  readonly label: string
  /** `unconfirmed`: a kill was sent but the group did not vanish; the handle is kept. */
  state: 'running' | 'unconfirmed'
}

type StopReason = 'timeout' | 'signal' | 'dispose' | 'limit'

type Exit = [code: number | null, signal: NodeJS.Signals | null]

interface Entry extends TrackedProcess {
  stop(reason: StopReason): void
  done?: Promise<unknown>
}

const POLL_INTERVAL = 20
const CLOSE_WAIT = 1000

/**
 * Runs commands in their own process groups and owns them until they are gone: one
 * termination path (SIGTERM to the group, SIGKILL after a grace period) for timeouts,
 * aborts and disposal; groups whose death cannot be confirmed stay tracked.
 *
 * @example
 * const processes = new ProcessTable()
 * const outcome = await processes.run({ file: 'bash', args: ['-c', 'ls'], cwd, timeout: 10_000 })
 * await processes.dispose()
 */
export class ProcessTable {
  private entries = new Set<Entry>()
  private disposed = false
  private killGrace: number
  private killWait: number
  private control: GroupControl
  private setUpStep: ((step: SetUpStep) => unknown) | undefined

  constructor(options: ProcessTableOptions = {}) {
    this.killGrace = options.killGrace ?? 2000
    this.killWait = options.killWait ?? 2000
    this.control = options.control ?? groupControl
    this.setUpStep = options.setUpStep
  }

  /** Groups still owned: running ones and those whose kill was not confirmed. */
  list(): TrackedProcess[] {
    return [...this.entries].map(({ pid, label, state }) => ({ pid, label, state }))
  }

  get size(): number {
    return this.entries.size
  }

  /**
   * Runs a command to its end, draining both streams into bounded buffers. Throws
   * `ShellError` `SPAWN_FAILED` when it cannot start and `DISPOSED` after `dispose()`.
   */
  async run(request: RunRequest): Promise<ProcessOutcome> {
    if (this.disposed) throw new ShellError('DISPOSED', 'the shell was shut down; no new command can start')
    const t0 = performance.now()
    const stdout = new OutputBuffer(request.headBytes ?? 16384, request.tailBytes ?? 16384)
    const stderr = new OutputBuffer(request.headBytes ?? 16384, request.tailBytes ?? 16384)
    const unstarted = (): ProcessOutcome => ({
      status: 'cancelled', exitCode: null, signal: null, stdout: stdout.result(), stderr: stderr.result(),
      durationMs: Math.round(performance.now() - t0), leftovers: false,
    })
    if (request.signal?.aborted) return unstarted()
    const opened = await Promise.allSettled([
      openCapture((chunk) => {
        stdout.push(chunk)
        request.onOutput?.('stdout', chunk)
      }),
      openCapture((chunk) => {
        stderr.push(chunk)
        request.onOutput?.('stderr', chunk)
      }),
    ])
    const captures = opened.flatMap((result) => result.status === 'fulfilled' ? [result.value] : [])
    const failed = opened.find((result) => result.status === 'rejected')
    if (this.setUpStep && !failed) await this.setUpStep('opened')
    // Opening the captures awaited: an abort or a dispose in the meantime starts nothing.
    if (!failed && (request.signal?.aborted || this.disposed)) {
      for (const capture of captures) {
        capture.childEnd.destroy()
        capture.reader.destroy()
      }
      return unstarted()
    }
    let child: ChildProcess
    try {
      if (failed) throw (failed as PromiseRejectedResult).reason
      child = spawn(request.file, request.args, {
        cwd: request.cwd,
        env: request.env,
        // Its own process group, so one signal reaches everything the command starts.
        detached: true,
        stdio: ['ignore', captures[0].childEnd, captures[1].childEnd, ...request.fds ?? []],
      })
    } catch (error) {
      for (const capture of captures) capture.reader.destroy()
      throw spawnFailed(request.file, error)
    } finally {
      // The child has its own copies now; ours would keep the streams from ending.
      for (const capture of captures) capture.childEnd.destroy()
    }
    const readers = captures.map((capture) => capture.reader)
    for (const reader of readers) reader.on('error', () => {})
    const exited = new Promise<Exit>((resolve) => {
      child.once('exit', (code, signal) => resolve([code, signal]))
    })
    const closed = Promise.all(readers.map(streamClosed))
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve)
        child.once('error', reject)
      })
    } catch (error) {
      for (const reader of readers) reader.destroy()
      throw spawnFailed(request.file, error)
    }
    // Later errors (a failed kill) are handled by the termination path, not by a crash.
    child.on('error', () => {})
    if (this.setUpStep) await this.setUpStep('spawned')

    // The first reason to stop wins.
    let stop!: (reason: StopReason) => void
    const stopped = new Promise<StopReason>((resolve) => { stop = resolve })
    const entry: Entry = { pid: child.pid!, label: request.label ?? request.args.at(-1) ?? request.file, state: 'running', stop }
    const done = this.supervise(readers, entry, request, { exited, closed, stopped })
      .then(([status, exit, leftovers, limit]) => ({
        status,
        exitCode: exit?.[0] ?? null,
        signal: exit?.[1] ?? null,
        stdout: stdout.result(),
        stderr: stderr.result(),
        durationMs: Math.round(performance.now() - t0),
        pid: entry.pid,
        leftovers,
        ...limit ? { limit } : {},
      }) satisfies ProcessOutcome)
    entry.done = done
    this.track(entry)
    // dispose() only stops the entries it finds; one set up meanwhile is stopped here.
    if (this.disposed) entry.stop('dispose')
    return done
  }

  private async supervise(
    readers: Readable[],
    entry: Entry,
    request: RunRequest,
    state: { exited: Promise<Exit>; closed: Promise<unknown>; stopped: Promise<StopReason> },
  ): Promise<[ProcessStatus, Exit | undefined, boolean, string?]> {
    const timer = setTimeout(() => entry.stop('timeout'), request.timeout)
    let limit: string | undefined
    const watch = request.watch?.(entry.pid)
    const watcher = watch && setInterval(() => {
      limit ??= watch.check()
      if (limit) entry.stop('limit')
    }, watch.interval)
    const onAbort = () => entry.stop('signal')
    request.signal?.addEventListener('abort', onAbort, { once: true })
    // A listener added to an aborted signal never fires: an abort during set-up lands here.
    if (request.signal?.aborted) onAbort()
    let exit: Exit | undefined
    let reason: StopReason | void
    try {
      reason = await Promise.race([state.exited.then((value) => { exit = value }), state.stopped])
    } finally {
      clearTimeout(timer)
      if (watcher) clearInterval(watcher)
      request.signal?.removeEventListener('abort', onAbort)
    }
    let status: ProcessStatus = 'exited'
    // A limit the kernel enforced just before the shell exited (the OOM killer ended one of
    // its processes) is found once more here, so the result says why.
    if (exit && watch && !limit) limit = watch.check()
    if (limit) status = 'limit_exceeded'
    let leftovers = false
    let confirmed = true
    if (!exit) {
      status = reason === 'timeout' ? 'timed_out' : reason === 'limit' ? 'limit_exceeded' : 'cancelled'
      confirmed = await this.terminate(entry.pid, watch)
    } else if (this.control.alive(entry.pid)) {
      // The shell is gone but something it started still runs in its group: a call is
      // foreground, so it leaves nothing behind.
      leftovers = true
      confirmed = await this.terminate(entry.pid, watch)
    } else if (watch?.alive()) {
      confirmed = await this.vanished(entry.pid, this.killWait, watch)
    }
    if (!confirmed) {
      entry.state = 'unconfirmed'
      for (const reader of readers) reader.destroy()
      return ['outcome_unknown', exit, leftovers, limit]
    }
    this.untrack(entry)
    // The group is gone, so the pipes close once drained; a process that left the group
    // (setsid) may still hold them, which must not hang the call.
    const settled = await Promise.race([Promise.all([state.exited, state.closed]).then(() => true), sleep(CLOSE_WAIT, false, { ref: false })])
    if (!settled) for (const reader of readers) reader.destroy()
    exit ??= await Promise.race([state.exited, sleep(CLOSE_WAIT, undefined, { ref: false })])
    return [status, exit, leftovers, limit]
  }

  /** SIGTERM to the group, SIGKILL after the grace period; true once the group (and what `watch` follows) is gone. */
  private async terminate(pgid: number, watch?: RunWatch): Promise<boolean> {
    try {
      if (watch) await watch.kill()
      this.control.signal(pgid, 'SIGTERM')
      if (await this.vanished(pgid, this.killGrace, watch)) return true
      this.control.signal(pgid, 'SIGKILL')
      return await this.vanished(pgid, this.killWait, watch)
    } catch {
      return false
    }
  }

  private async vanished(pgid: number, within: number, watch?: RunWatch): Promise<boolean> {
    const until = performance.now() + within
    while (this.control.alive(pgid) || watch?.alive()) {
      if (performance.now() >= until) return false
      await sleep(POLL_INTERVAL)
    }
    return true
  }

  /**
   * Terminates every running group, waits for them, and retries the unconfirmed ones.
   * Later `run` calls throw `DISPOSED`. Calling it again is harmless.
   */
  async dispose(): Promise<void> {
    this.disposed = true
    const entries = [...this.entries]
    for (const entry of entries) entry.stop('dispose')
    await Promise.allSettled(entries.map((entry) => entry.done))
    for (const entry of [...this.entries]) {
      if (entry.state === 'unconfirmed' && await this.terminate(entry.pid)) this.untrack(entry)
    }
  }

  private track(entry: Entry) {
    if (!this.entries.size) process.on('exit', this.onExit)
    this.entries.add(entry)
  }

  private untrack(entry: Entry) {
    this.entries.delete(entry)
    if (!this.entries.size) process.off('exit', this.onExit)
  }

  // Last line of defence when the host exits without disposing: no orphans left behind.
  private onExit = () => {
    for (const entry of this.entries) {
      try {
        this.control.signal(entry.pid, 'SIGKILL')
      } catch {}
    }
  }
}

function spawnFailed(file: string, error: unknown) {
  const reason = error instanceof Error ? error.message : String(error)
  return new ShellError('SPAWN_FAILED', `could not start ${file}: ${reason}`, { cause: error })
}

function streamClosed(stream: Readable): Promise<void> {
  if (stream.closed || stream.destroyed) return Promise.resolve()
  return new Promise((resolve) => stream.once('close', () => resolve()))
}
