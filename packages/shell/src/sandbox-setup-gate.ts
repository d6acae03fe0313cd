import { dirname } from 'node:path'
import { within } from './git-repository'
import { ShellError } from './shell-error'

/** A sandboxed command that runs (or is being set up): what it can write, and what it holds as mount points. */
export interface RunningSandbox {
  /** Real paths mounted writable: the workspace (unless read-only) and the writable paths. */
  roots: readonly string[]
  /** Real paths it mounted over (inside `roots`): it cannot rename or remove them. */
  mountPoints: ReadonlySet<string>
}

/**
 * Whether `running` could swap a folder on the way to `destination` for a link while
 * bubblewrap walks it: the destination lies below a path it can write, and is not a mount
 * point of its own right below that path (a mount point cannot be renamed or removed, and
 * the writable root itself is one).
 */
export function exposes(running: RunningSandbox, destination: string): boolean {
  return running.roots.some((root) => destination !== root && within(destination, root)
    && !(dirname(destination) === root && running.mountPoints.has(destination)))
}

/**
 * The sandboxed commands of this process, for what no path check can do alone. Set-ups
 * take turns, from the walk for protected paths until their command starts, so each walk
 * sees what the previous command's mounts hold, and:
 *
 * - on a bubblewrap that follows links while it makes its mount destinations (before 0.12,
 *   see detect-sandbox.ts), a set-up runs alone, and only once no running command could
 *   swap a folder on the way to one of its destinations: until its command starts, nothing
 *   that can write there runs.
 * - protected paths a command created are removed only when no other command can write the
 *   workspace, so nothing swaps a folder on the way while they are removed.
 */
export class SetupGate {
  private readonly running = new Set<RunningSandbox>()
  private waiters: (() => void)[] = []
  private tail: Promise<void> = Promise.resolve()

  /**
   * Waits for this process's turn to set up a sandbox; the returned function ends the turn
   * (again is a no-op). `wait` ends the wait early: a turn given up passes on when it comes.
   */
  async turn(wait?: SetupWait): Promise<() => void> {
    let release!: () => void
    const turn = new Promise<void>((resolve) => {
      release = resolve
    })
    const previous = this.tail
    this.tail = previous.then(() => turn)
    try {
      await bounded(previous, wait)
    } catch (error) {
      void previous.then(release)
      throw error
    }
    let done = false
    return () => {
      if (!done) {
        done = true
        release()
      }
    }
  }

  /** Whether another running command satisfies `blocks`. */
  runningMatch(blocks: (running: RunningSandbox) => boolean, self?: RunningSandbox): boolean {
    return [...this.running].some((r) => r !== self && blocks(r))
  }

  /** Waits until no other running command satisfies `blocks`, or `wait` ends the wait. */
  async waitUntilNone(blocks: (running: RunningSandbox) => boolean, self?: RunningSandbox, wait?: SetupWait): Promise<void> {
    while ([...this.running].some((r) => r !== self && blocks(r))) {
      let wake!: () => void
      const woken = new Promise<void>((resolve) => {
        wake = resolve
        this.waiters.push(resolve)
      })
      try {
        await bounded(woken, wait)
      } finally {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake)
      }
    }
  }

  /** Counts `sandbox` as running until the returned function is called. */
  add(sandbox: RunningSandbox): () => void {
    this.running.add(sandbox)
    return () => {
      if (!this.running.delete(sandbox)) return
      const waiters = this.waiters
      this.waiters = []
      for (const wake of waiters) wake()
    }
  }

  /** Whether another running command can write below `path` (or `path` itself). */
  othersWrite(path: string, self: RunningSandbox): boolean {
    return [...this.running].some((r) => r !== self && r.roots.some((root) => within(root, path) || within(path, root)))
  }
}

/** How long a set-up may wait for its turn, and what cancels it: the call's own timeout and signal. */
export interface SetupWait {
  signal?: AbortSignal
  /** When the wait gives up (`Date.now()` milliseconds). */
  deadline?: number
}

/**
 * `promise`, unless the signal aborts or the deadline passes first: then a refusal that says
 * nothing ran. A set-up that waits on another command never outlives its call.
 */
function bounded(promise: Promise<void>, wait: SetupWait | undefined): Promise<void> {
  const { signal, deadline } = wait ?? {}
  if (!signal && deadline === undefined) return promise
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined
    const done = () => {
      if (timer) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    const onAbort = () => {
      done()
      reject(new ShellError('SANDBOX_SETUP', 'the call was cancelled while its sandbox waited for another sandboxed command (bubblewrap here follows links while it sets up, so set-ups that could be raced take turns); nothing ran'))
    }
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    if (deadline !== undefined) {
      timer = setTimeout(() => {
        done()
        reject(new ShellError('SANDBOX_SETUP', 'its sandbox waited for another sandboxed command to end and the call\'s time ran out (bubblewrap here follows links while it sets up, so a set-up that another running command could race waits for it); nothing ran, try again when the other command ends'))
      }, Math.max(0, deadline - Date.now()))
    }
    promise.then(() => {
      done()
      resolve()
    }, (error) => {
      done()
      reject(error)
    })
  })
}

/** One gate per process: every `bash` tool's sandbox shares it, as they share the disk. */
export const setupGate = new SetupGate()
