// The test's side of ./instance.ts: bundles it, starts it as a child process, sends it
// commands and keeps what it reported (messages it posted, log lines, anything else it
// wrote). See instance.ts' header for the protocol.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { createRequire, isBuiltin } from 'node:module'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { BackgroundTask, Grant, QuotaStatus, ToolResult } from '@dogu/core'
import { build, type Plugin } from 'esbuild'
import type { CommandBody, InstanceConfig, Message, PendingRequest } from './protocol'

/** How long a command, a message or an exit is waited for before the test fails. */
export const WAIT_MS = 20_000

/**
 * Bundles instance.ts with the workspace sources (the `source` condition, as vitest runs
 * them) into `dir`. Everything from node_modules stays a `require` of the file Node itself
 * would load from the importing source, so Koishi comes through its CommonJS entry.
 */
export async function bundleInstance(dir: string): Promise<string> {
  const outfile = join(dir, 'instance.cjs')
  const nodeModules: Plugin = {
    name: 'node-modules-external',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return { path: args.path, external: true }
        if (/^@dogu(-external)?\//.test(args.path)) return undefined
        try {
          return { path: createRequire(args.importer).resolve(args.path), external: true }
        } catch {
          // No CommonJS entry (an ESM-only package): bundled.
          return undefined
        }
      })
    },
  }
  await build({
    entryPoints: [resolve(import.meta.dirname, 'instance.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    conditions: ['source'],
    // @dogu/webui finds its page files from import.meta.url, which CommonJS does not have.
    define: { 'import.meta.url': '__importMetaUrl' },
    banner: { js: 'var __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [nodeModules],
    logLevel: 'error',
  })
  return outfile
}

export interface LogLine {
  level: string
  name: string
  text: string
}

/** Resolves with `probe()`'s first truthy value, probing every 20 ms, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false | null> | T | undefined | false | null, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (performance.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** One running instance. */
export class Instance {
  /** Messages the bot posted on its own, in order. */
  readonly sent: { channelId: string; text: string }[] = []
  /** Koishi logger lines, internal errors and warnings, uncaught errors. */
  readonly logs: LogLine[] = []
  /** What the child wrote outside the protocol: stray stdout lines, stderr. */
  readonly stray: string[] = []
  /** Milliseconds from spawn to `ready`. */
  startupMs = 0
  /** The MySQL driver lacked getIndexes and was patched (instance.ts' patchIndexes). */
  patchedDriver = false
  private readonly replies = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  private nextId = 0
  private read = 0
  private readonly exited: Promise<[number | null, NodeJS.Signals | null]>

  private constructor(readonly name: string, private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve([code, signal]))
      // Not started at all (no such program, no such folder): no 'exit' follows.
      child.once('error', (error) => {
        this.stray.push(`could not run: ${error.message}`)
        resolve([null, null])
      })
    })
    void this.exited.then(([code, signal]) => {
      for (const { reject } of this.replies.values()) reject(new Error(`instance ${name} exited (${code ?? signal ?? 'not started'}) before it answered`))
      this.replies.clear()
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { this.stray.push(`stderr: ${chunk.trimEnd()}`) })
  }

  /**
   * Spawns the bundled instance and resolves once it is `ready` on the database.
   * `spawned` gets it at once, so that a test that ends meanwhile can still kill it.
   */
  static async start(entry: string, config: InstanceConfig, spawned?: (instance: Instance) => void): Promise<Instance> {
    const started = performance.now()
    await mkdir(config.dir, { recursive: true })
    const child = spawn(process.execPath, [entry, JSON.stringify(config)], { cwd: config.dir, stdio: ['pipe', 'pipe', 'pipe'] })
    const instance = new Instance(config.instanceId, child)
    spawned?.(instance)
    let ready!: () => void
    const isReady = new Promise<void>((resolve) => { ready = resolve })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let message: Message
      try {
        message = JSON.parse(line)
      } catch {
        instance.stray.push(`stdout: ${line}`)
        return
      }
      instance.receive(message, ready)
    })
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        isReady,
        instance.exited.then(([code, signal]) => { throw new Error(`instance ${config.instanceId} exited (${code ?? signal}) before it was ready`) }),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`instance ${config.instanceId} was not ready within ${config.readyTimeoutMs + WAIT_MS} ms`)), config.readyTimeoutMs + WAIT_MS) }),
      ])
    } catch (error) {
      await instance.kill()
      throw new Error(`${(error as Error).message}\n${instance.report()}`)
    } finally {
      clearTimeout(timer)
    }
    instance.startupMs = performance.now() - started
    return instance
  }

  private receive(message: Message, ready: () => void) {
    if ('id' in message) {
      const reply = this.replies.get(message.id)
      if (!reply) return void this.stray.push(`reply to no command: ${JSON.stringify(message)}`)
      this.replies.delete(message.id)
      if (message.ok) reply.resolve(message.value)
      else reply.reject(new Error(`instance ${this.name}: ${message.error}`))
    } else if (message.event === 'ready') {
      this.patchedDriver = message.patchedDriver
      ready()
    } else if (message.event === 'sent') {
      this.sent.push({ channelId: message.channelId, text: message.text })
    } else if (message.event === 'log') {
      this.logs.push({ level: message.level, name: message.name, text: message.text })
    }
  }

  /** Sends a command and resolves with its value; fails after WAIT_MS or when the instance exits. */
  private command<T>(command: CommandBody): Promise<T> {
    const id = ++this.nextId
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(id)
        reject(new Error(`instance ${this.name} did not answer ${command.cmd} within ${WAIT_MS} ms`))
      }, WAIT_MS)
      const done = <A extends unknown[]>(settle: (...args: A) => void) => (...args: A) => {
        clearTimeout(timer)
        settle(...args)
      }
      this.replies.set(id, { resolve: done(resolve as (value: unknown) => void), reject: done(reject) })
      this.child.stdin!.write(`${JSON.stringify({ id, ...command })}\n`)
    })
  }

  /** Runs a tool as `user` in the room, as an agent would; resolves when the call ends. */
  call(tool: string, user: string, args?: Record<string, unknown>): Promise<ToolResult> {
    return this.command({ cmd: 'call', tool, user, args })
  }

  /** `user` says `text` in the room; resolves with the bot's replies. */
  say(user: string, text: string, options: { refreshWhileRead?: boolean } = {}): Promise<string[]> {
    return this.command({ cmd: 'say', user, text, ...options })
  }

  /** Reads the pending table again now, as the poll does (`refreshPending`). */
  refresh(): Promise<void> {
    return this.command({ cmd: 'refresh' })
  }

  grants(): Promise<Grant[]> {
    return this.command({ cmd: 'grants' })
  }

  revoke(grant: string): Promise<boolean> {
    return this.command({ cmd: 'revoke', grant })
  }

  tasks(): Promise<BackgroundTask[]> {
    return this.command({ cmd: 'tasks' })
  }

  /** The pending `slow` run of call `callId` returns `text`. */
  finish(callId: string, text: string): Promise<boolean> {
    return this.command({ cmd: 'finish', callId, text })
  }

  /** How many times the `probe` tool ran in this instance. */
  probes(): Promise<number> {
    return this.command({ cmd: 'probes' })
  }

  /** The notes the `save` tool saved in this instance, in order: one per run. */
  saves(): Promise<string[]> {
    return this.command({ cmd: 'saves' })
  }

  /** The requests open in this instance (`ctx.permissions.pending()`): asked here, before a restart, or on another instance. */
  pending(): Promise<PendingRequest[]> {
    return this.command({ cmd: 'pending' })
  }

  /** Where each quota that applies to `user` in the room stands (`ctx.tools.registry.quotas.status`). */
  quota(user: string): Promise<QuotaStatus[]> {
    return this.command({ cmd: 'quota', user })
  }

  /** The next message the bot posts on its own after the last one read: at once, or when it is posted. */
  async nextSent(): Promise<{ channelId: string; text: string }> {
    await waitFor(`instance ${this.name} to post a message`, () => this.read < this.sent.length)
    return this.sent[this.read++]
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined
  }

  /** Stops the app gracefully and waits for the process to end on its own. */
  async stop(): Promise<void> {
    await this.command({ cmd: 'stop' })
    this.child.stdin!.end()
    let timer: NodeJS.Timeout | undefined
    const [code, signal] = await Promise.race([
      this.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`instance ${this.name} did not exit within ${WAIT_MS} ms of stopping: something was left running`)), WAIT_MS)
      }),
    ]).finally(() => clearTimeout(timer))
    if (code !== 0) throw new Error(`instance ${this.name} exited with ${code ?? signal} after stopping\n${this.report()}`)
  }

  /** SIGKILL: the process dies at once, as in a crash. Resolves once it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return
    this.child.kill('SIGKILL')
    await this.exited
  }

  /** Warnings, errors and stray output, one per line. */
  problems(): string[] {
    return [
      ...this.logs.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => `[${line.level}] ${line.name}: ${line.text}`),
      ...this.stray,
    ].map((line) => `instance ${this.name}: ${line}`)
  }

  /** Everything it logged, for a failure message. */
  report(): string {
    return [...this.logs.map((line) => `[${line.level}] ${line.name}: ${line.text}`), ...this.stray].map((line) => `  ${this.name}| ${line}`).join('\n')
  }
}

/**
 * Kills every instance in `instances` (emptying it), then fails if any logged a warning or an
 * error or wrote outside the protocol: nothing of the kind is expected by the SQL specs.
 */
export async function killAndCheck(instances: Instance[]): Promise<void> {
  const all = instances.splice(0)
  await Promise.all(all.map((instance) => instance.kill()))
  const problems = all.flatMap((instance) => instance.problems())
  if (problems.length) throw new Error(`the instances reported what no test expected:\n${problems.join('\n')}\n\nfull logs:\n${all.map((instance) => instance.report()).join('\n')}`)
}
