// A Koishi instance that Koishi's own worker runs (what `koishi start` forks), driven by the
// test over the worker's IPC channel through the probe plugin (loader-instance/probe: its
// header has the protocol). Used by loader.spec.ts and install.tarball.spec.ts.
import type { ChildProcess } from 'node:child_process'
import { within as withinMs } from '../../../test-support/within'

/** How long any one wait on the instance may take. */
export const WAIT = 30_000

/** Waits on the instance at most `WAIT`. */
export const within = <T>(promise: Promise<T>, what: string, ms = WAIT) => withinMs(promise, what, ms)

export interface Line {
  type: string
  name: string
  content: string
}

/** The running instance: ops over the worker's IPC channel, what the bot sent on its own, error and warning lines. */
export class Instance {
  readonly sent: string[] = []
  readonly lines: Line[] = []
  readonly output: string[] = []
  readonly stderr: string[] = []
  private next = 0
  private readonly waiting = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>()
  private readonly watchers = new Set<() => void>()
  readonly exited: Promise<number | null>

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: any) => {
      const probe = message?.probe
      if (!probe) return
      if (probe.event === 'sent') this.sent.push(probe.text)
      else if (probe.event === 'log') this.lines.push({ type: probe.type, name: probe.name, content: probe.content })
      else {
        const waiter = this.waiting.get(probe.id)
        this.waiting.delete(probe.id)
        if (probe.error) waiter?.reject(new Error(probe.error))
        else waiter?.resolve(probe.result)
      }
      for (const watcher of this.watchers) watcher()
    })
    child.stdout?.on('data', (chunk) => this.output.push(String(chunk)))
    child.stderr?.on('data', (chunk) => {
      this.output.push(String(chunk))
      this.stderr.push(String(chunk))
    })
    this.exited = new Promise((done) => child.once('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`the instance exited (${code}) before answering\n${this.output.join('')}`))
      this.waiting.clear()
      done(code)
    }))
  }

  /** Koishi's own error and warning lines on its console (`[E]`, `[W]`), and anything on stderr. */
  problems() {
    const logged = this.output.join('').split('\n').filter((line) => /^\S+ \S+ \[[EW]\] /.test(line))
    const stderr = this.stderr.join('').split('\n').filter((line) => line.trim())
    return [...this.lines.map((line) => `[${line.type}] ${line.name}: ${line.content}`), ...logged, ...stderr]
  }

  op<T = unknown>(op: string, args: object = {}): Promise<T> {
    const id = ++this.next
    return within(new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.child.send({ probe: { id, op, ...args } })
    }), `the instance's answer to ${op}`)
  }

  /** Resolves once `done()` holds, checked on every message from the instance and every 50 ms. */
  async until(done: () => Promise<boolean> | boolean, what: string) {
    const end = Date.now() + WAIT
    while (!await done()) {
      if (Date.now() > end) throw new Error(`${what} did not happen within ${WAIT} ms\n${this.output.join('')}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, 50)
        const watchers = this.watchers
        function finish() {
          clearTimeout(timer)
          watchers.delete(finish)
          resolve()
        }
        watchers.add(finish)
      })
    }
  }

  /** SIGINT, as Ctrl-C on `koishi start` (the daemon lets plugins stop); SIGKILL when it does not go. */
  async stop(signal: NodeJS.Signals = 'SIGINT') {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    this.child.kill(signal)
    try {
      await within(this.exited, 'the instance exiting')
    } catch (error) {
      this.child.kill('SIGKILL')
      throw error
    }
  }
}
