import { execFileSync } from 'node:child_process'
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
