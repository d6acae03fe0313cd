// A Koishi instance that Koishi's own worker runs (what `koishi start` forks), driven by the
// test over the worker's IPC channel through the probe plugin (loader-instance/probe: its
// header has the protocol), and over Koishi's console as a browser page talks to it
// (`ConsoleClient`). Used by loader.spec.ts, loader-mcp-oauth.spec.ts, loader-restart*.spec.ts
// and install.tarball.spec.ts.
import { type ChildProcess, fork } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterEach } from 'vitest'
import WebSocket from 'ws'
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

  /** What the bot replies when `userId` says `text` in 'room'. */
  receive(text: string, userId = 'alice') {
    return this.op<string[]>('receive', { userId, text })
  }

  /** The next message the bot posts on its own once `count` were posted. */
  async posted(count: number, what: string) {
    await this.until(() => this.sent.length > count, what)
    return this.sent[count]
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

const require = createRequire(import.meta.url)
const KOISHI_PACKAGE = resolve(__dirname, '..')
const FIXTURES = resolve(__dirname, 'loader-instance')
/** Koishi's worker: the process `koishi start` runs, with the loader. */
const WORKER = require.resolve('koishi/lib/worker', { paths: [KOISHI_PACKAGE] })

/** The instance's packages, by name, and where they are in this workspace. */
export const LINKS: Record<string, string> = {
  'koishi-plugin-dogu': KOISHI_PACKAGE,
  'koishi-plugin-notes': join(FIXTURES, 'notes'),
  'koishi-plugin-owner-probe': join(FIXTURES, 'probe'),
  '@koishijs/plugin-database-sqlite': join(FIXTURES, 'database-sqlite'),
  '@koishijs/plugin-mock': dirname(require.resolve('@koishijs/plugin-mock/package.json', { paths: [KOISHI_PACKAGE] })),
}

/** What an instance needs for Koishi's console, by name, for `instanceDir`'s `more`. */
export const CONSOLE_LINKS: Record<string, string> = Object.fromEntries(['@koishijs/plugin-server', '@koishijs/plugin-console', '@koishijs/plugin-auth']
  .map((name) => [name, dirname(require.resolve(`${name}/package.json`, { paths: [KOISHI_PACKAGE] }))]))

/** What a console listener refused with: the console's own words ('unauthorized', 'not implemented') or the error it threw. */
export class ConsoleRefusal extends Error {}

/**
 * Koishi's console as its page in a browser talks to it: one WebSocket on the console's
 * `apiPath` (default `/status`), each listener called by name with its arguments
 * (`{ type, args, id }`, answered `{ type: 'response', body: { id, value | error } }`).
 * With @koishijs/plugin-auth, `login/password` first; the console checks every later call
 * against that login.
 */
export class ConsoleClient {
  private next = 0
  private readonly waiting = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>()

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data))
      if (message?.type !== 'response') return
      const { id, value, error } = message.body
      const waiter = this.waiting.get(id)
      this.waiting.delete(id)
      if (error !== undefined) waiter?.reject(new ConsoleRefusal(typeof error === 'string' ? error : JSON.stringify(error)))
      else waiter?.resolve(value)
    })
    socket.on('close', () => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error('the console closed its socket before answering'))
      this.waiting.clear()
    })
  }

  static async open(base: string, apiPath = '/status') {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}${apiPath}`)
    clients.push(socket)
    await within(new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('error', reject)
    }), `the console's socket at ${base}${apiPath} opening`)
    return new ConsoleClient(socket)
  }

  call<T = unknown>(name: string, ...args: unknown[]): Promise<T> {
    const id = ++this.next
    return within(new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.socket.send(JSON.stringify({ type: name, args, id }))
    }), `the console's answer to ${name}`)
  }

  close() {
    this.socket.close()
  }
}

const clients: WebSocket[] = []
const instances: Instance[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const socket of clients.splice(0)) socket.terminate()
  for (const instance of instances.splice(0)) await instance.stop('SIGKILL')
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A Koishi instance folder: package.json, koishi.yml with `plugins` in this order, and node_modules links (`LINKS` and `more`). */
export async function instanceDir(plugins: string, more: Record<string, string> = {}) {
  const links = { ...LINKS, ...more }
  const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-instance-'))
  dirs.push(dir)
  for (const [name, target] of Object.entries(links)) {
    const link = join(dir, 'node_modules', name)
    await mkdir(dirname(link), { recursive: true })
    await symlink(target, link, 'dir')
  }
  await writeFile(join(dir, 'package.json'), JSON.stringify({
    name: 'owner-bot',
    private: true,
    dependencies: Object.fromEntries(Object.keys(links).map((name) => [name, '*'])),
  }, null, 2))
  await writeFile(join(dir, 'koishi.yml'), plugins)
  // A new instance has it (create-koishi makes it); the SQLite driver does not create it.
  await mkdir(join(dir, 'data'))
  return dir
}

export interface InstanceStatus {
  database: boolean
  background: boolean
  tools: string[]
}

/**
 * Starts Koishi's worker in `dir`, as `koishi start` would; resolves once `ready` holds of the
 * probe's status. Stopped after the test. `env` adds to the worker's environment.
 */
export async function startInstance(dir: string, ready: (status: InstanceStatus) => boolean, what: string, env: Record<string, string> = {}) {
  const child = fork(WORKER, [], {
    cwd: dir,
    // Only NODE_PATH differs from an installed instance: the loader resolves plugins from its own folder.
    env: { ...process.env, NODE_PATH: join(dir, 'node_modules'), KOISHI_LOG_LEVEL: '2', ...env },
    // Not the test runner's flags (its `--conditions source` would load TypeScript sources).
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const instance = new Instance(child)
  instances.push(instance)
  await within(new Promise<void>((resolve, reject) => {
    child.on('message', (message: any) => { if (message?.type === 'start') resolve() })
    child.once('exit', (code) => reject(new Error(`the instance exited (${code}) while starting\n${instance.output.join('')}`)))
  }), 'the instance starting')
  await instance.until(async () => ready(await instance.op<InstanceStatus>('status')), what)
  return instance
}
