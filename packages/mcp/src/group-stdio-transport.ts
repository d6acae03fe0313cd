import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '@dogu/core'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export interface GroupStdioOptions {
  /** The server's name, for the log. */
  name: string
  command: string
  args?: string[]
  env: Record<string, string>
  cwd?: string
  /** Milliseconds for the server to exit once its stdin is closed, and again after SIGTERM. @default 2000 */
  grace?: number
  logger?: Logger
}

const POLL = 10

/** Groups still running, for the last line of defence when the host exits without disposing. */
const running = new Set<number>()

function onExit() {
  for (const pgid of running) signalGroup(pgid, 'SIGKILL')
}

/**
 * A stdio MCP server in a process group of its own (POSIX): the command is the group's leader,
 * so whatever it starts (`sh -c …`, `npx …` and the server behind them, the server's own
 * children) is in the group, and ending the connection ends all of it. Closing ends stdin,
 * gives the server `grace` ms to exit, then signals the group with SIGTERM and, if anything
 * is left after `grace` ms more, SIGKILL; it resolves once the group is gone. The leader
 * exiting on its own ends what it left in the group as well, before `onclose` is called.
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private child: ChildProcess | undefined
  private pgid: number | undefined
  private readBuffer = new ReadBuffer()
  private exited: Promise<void> | undefined
  /** Whether the command started: close waits for it, so a process spawned meanwhile is ended too. */
  private spawned: Promise<boolean> | undefined
  private ending: Promise<void> | undefined
  private closing: Promise<void> | undefined
  private closed = false
  private readonly grace: number

  constructor(private options: GroupStdioOptions) {
    this.grace = options.grace ?? 2000
  }

  /** The leader's pid, which is also the group's id; kept after it exits, until the group is gone. */
  get pid(): number | undefined {
    return this.pgid
  }

  start(): Promise<void> {
    if (this.child) throw new Error('GroupStdioTransport already started')
    const { command, args = [], env, cwd } = this.options
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'ignore'],
        // Its own process group (setsid), so one signal reaches everything it starts.
        detached: true,
      })
      this.child = child
      this.spawned = new Promise((settle) => {
        // Not once: a later error must not go unhandled (settle and reject are no-ops by then).
        child.on('error', (error) => {
          settle(this.pgid !== undefined)
          reject(error)
          this.onerror?.(error)
        })
        child.once('spawn', () => {
          this.pgid = child.pid!
          if (!running.size) process.on('exit', onExit)
          running.add(this.pgid)
          settle(true)
          resolve()
        })
      })
      this.exited = new Promise((resolveExit) => child.once('exit', () => resolveExit()))
      // Whatever the leader left in its group is ended with it.
      child.once('exit', () => void this.end())
      // The pipes are drained; the connection is over once the group is gone too.
      child.once('close', () => {
        void (this.ending ?? Promise.resolve()).then(() => this.finish())
      })
      child.stdin!.on('error', (error) => this.onerror?.(error))
      child.stdout!.on('error', (error) => this.onerror?.(error))
      child.stdout!.on('data', (chunk: Buffer) => {
        try {
          this.readBuffer.append(chunk)
        } catch (error) {
          this.onerror?.(error as Error)
          void this.close()
          return
        }
        for (;;) {
          let message: JSONRPCMessage | null
          try {
            message = this.readBuffer.readMessage()
          } catch (error) {
            this.onerror?.(error as Error)
            continue
          }
          if (message === null) break
          this.onmessage?.(message)
        }
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (!stdin || this.closing || !stdin.writable) return reject(new Error('Not connected'))
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  /** Ends the server and everything in its group; resolves once the group is gone. Idempotent. */
  close(): Promise<void> {
    return this.closing ??= (async () => {
      const child = this.child
      if (!child || !await this.spawned) return this.finish()
      try {
        child.stdin?.end()
      } catch {
        // already closed
      }
      // A server ends on EOF: its own shutdown first.
      await settledWithin(this.exited!, this.grace)
      await this.end()
      // The leader is ours to reap: once its exit is seen, not even a zombie of it is left.
      await settledWithin(this.exited!, this.grace)
      this.readBuffer.clear()
      this.finish()
    })()
  }

  /** SIGTERM to what is left of the group, SIGKILL after the grace period; resolves once it is gone. */
  private end(): Promise<void> {
    return this.ending ??= (async () => {
      const pgid = this.pgid
      if (pgid === undefined) return
      // Gone, or only zombies left: an init that does not reap orphans keeps those forever.
      const gone = () => !exists(pgid) || !hasLiveMember(pgid)
      if (!gone()) {
        signalGroup(pgid, 'SIGTERM')
        if (!await until(gone, this.grace)) {
          signalGroup(pgid, 'SIGKILL')
          if (!await until(gone, this.grace)) {
            this.options.logger?.warn('MCP server "%s": its process group %d (%s) survived SIGKILL', this.options.name, pgid, this.options.command)
          }
        }
      }
      running.delete(pgid)
      if (!running.size) process.off('exit', onExit)
    })()
  }

  private finish() {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pgid, signal)
  } catch {
    // gone already (ESRCH)
  }
}

/** Whether any process of group `pgid` exists (a zombie too): `kill(-pgid, 0)` does not fail with ESRCH. */
function exists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Whether a member of group `pgid` is not a zombie (Linux /proc; elsewhere, any member counts). */
function hasLiveMember(pgid: number): boolean {
  if (process.platform !== 'linux') return exists(pgid)
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return exists(pgid)
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1')
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp …": comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([promise, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms) })])
  clearTimeout(timer)
}

async function until(check: () => boolean, within: number): Promise<boolean> {
  const deadline = performance.now() + within
  while (!check()) {
    if (performance.now() >= deadline) return false
    await sleep(POLL)
  }
  return true
}
