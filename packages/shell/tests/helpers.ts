import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'
import type { PermissionMode, ToolCall } from '@dogu/core'

/** Live processes (zombies excluded) whose command line contains `marker`, from `ps`. */
export function processesMatching(marker: string): string[] {
  const table = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' })
  return table.split('\n').filter((line) => line.includes(marker) && !/^\s*\d+\s+\d+\s+Z/.test(line))
}

/** A unique `sleep` duration, so a test can find exactly its own processes. */
let counter = 0
export function sleepMarker(): string {
  return `4242.${process.pid}${++counter}`
}

/** Safety net for a failed test: kills what this worker's markers left running. */
export function killMarkedProcesses(): void {
  for (const line of processesMatching(`4242.${process.pid}`)) {
    try {
      process.kill(Number(line.trim().split(/\s+/)[0]), 'SIGKILL')
    } catch {}
  }
}

export interface FakeCall extends ToolCall {
  controller: AbortController
  messages: string[]
}

/** A `call` as the pipeline would pass it, with its abort controller and progress log. */
export function fakeCall(session: ToolCall['session'], onProgress?: (message: string) => void, mode: PermissionMode = 'default'): FakeCall {
  const controller = new AbortController()
  const messages: string[] = []
  return {
    id: 'c1',
    name: 'bash',
    session,
    signal: controller.signal,
    deadline: Infinity,
    mode,
    progress(message) {
      messages.push(message)
      onProgress?.(message)
    },
    ask: async () => {},
    elicit: async () => ({ action: 'cancel', reason: 'no one to ask in this test' }),
    log() {},
    deny(reason): never {
      throw new Error(reason)
    },
    controller,
    messages,
  }
}

/**
 * Points `HOME` at a folder of the test's own for the file's tests, so attacks on the bot's
 * home plant their token files there and never in the real one. Under /var/tmp, not /tmp:
 * the sandbox's private /tmp would hide it for another reason than the home being emptied.
 */
export function useScratchHome(): void {
  const before = process.env.HOME
  let home: string | undefined
  beforeAll(() => {
    home = mkdtempSync('/var/tmp/dogu-test-home-')
    process.env.HOME = home
  })
  afterAll(() => {
    if (before === undefined) delete process.env.HOME
    else process.env.HOME = before
    if (home) rmSync(home, { recursive: true, force: true })
  })
}
