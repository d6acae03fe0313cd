// `requestTimeout` of an imported tool counts from the last progress (the SDK's
// `resetTimeoutOnProgress`), and Dogu's own `timeout` still bounds the call. The MCP server
// is in memory; its tool sends progress and returns only when the test says so, and the
// clock is vitest's fake one, so no assertion depends on the machine's speed.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CallInfo, ToolResult } from '@dogu/core'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { McpClientConnection } from '../src'
import { doguApp } from './client-harness'

const REQUEST_TIMEOUT = 1000
const session = { id: 'cli', userId: 'alice' }

type Command = 'progress' | 'done'

/** What the server's tool does next, one command at a time, as the test sends them. */
class Script {
  private queue: Command[] = []
  private waiting: ((command: Command) => void) | undefined
  /** Resolves when the tool starts running on the server. */
  started: Promise<void>
  /** Resolves with the reason when the server sees the call cancelled. */
  cancelled: Promise<unknown>
  markStarted!: () => void
  markCancelled!: (reason: unknown) => void

  constructor() {
    this.started = new Promise((resolve) => { this.markStarted = resolve })
    this.cancelled = new Promise((resolve) => { this.markCancelled = resolve })
  }

  send(command: Command) {
    const waiting = this.waiting
    this.waiting = undefined
    if (waiting) waiting(command)
    else this.queue.push(command)
  }

  next(signal: AbortSignal): Promise<Command> {
    const queued = this.queue.shift()
    if (queued) return Promise.resolve(queued)
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiting = undefined
        reject(signal.reason)
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting = (command) => {
        signal.removeEventListener('abort', onAbort)
        resolve(command)
      }
    })
  }
}

/** An MCP server with one tool, `work`, driven by `script`. */
function scriptedServer(script: Script): Server {
  const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'work', description: 'Works until told to stop', inputSchema: { type: 'object', properties: {} } }],
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken
    extra.signal.addEventListener('abort', () => script.markCancelled(extra.signal.reason), { once: true })
    script.markStarted()
    for (let step = 1; ; step++) {
      const command = await script.next(extra.signal)
      if (command === 'done') return { content: [{ type: 'text', text: `finished after ${step - 1} progress notifications` }] }
      if (progressToken === undefined) throw new Error('the client sent no progress token')
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step, message: `step ${step}` } })
    }
  })
  return server
}

describe('imported tools: requestTimeout restarts on progress; Dogu\'s timeout bounds the call', () => {
  let dir: string
  let ctx: Context
  let script: Script
  let server: Server
  let connection: McpClientConnection
  let progress: string[]
  let onProgress: (() => void) | undefined

  async function start(timeout?: number) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    server = scriptedServer(script)
    await server.connect(serverSide)
    connection = new McpClientConnection({
      name: 'slow',
      server: { command: 'unused', requestTimeout: REQUEST_TIMEOUT, ...(timeout ? { timeout } : {}) },
      define: (tool) => ctx.tools.define(tool),
      transport: () => clientSide,
    })
    connection.start()
    await connection.connected(AbortSignal.timeout(10_000))
    // From here on the clock is the test's: the SDK's request timer, Dogu's call timer and
    // `Date` only move when the test advances them.
    vi.useFakeTimers()
  }

  /**
   * Has the server send one progress notification; resolves when Dogu has passed it on as
   * `tools/call-progress`, and rejects if the call ends first.
   */
  function sendProgress(call: { result: Promise<ToolResult> }): Promise<void> {
    const heard = new Promise<void>((resolve) => { onProgress = resolve })
    script.send('progress')
    return Promise.race([heard, call.result.then((result) => {
      throw new Error(`the call ended before its progress arrived: ${result.status}: ${result.content}`)
    })])
  }

  /**
   * Starts a call of `slow_work` and resolves once the server runs it (rejects if the call
   * ends before); `settled()` tells whether its result is in yet.
   */
  async function callWork() {
    let done = false
    const result = ctx.tools.execute([{ id: 'c1', name: 'slow_work', arguments: {} }], { session }).then(([result]) => {
      done = true
      return result as ToolResult
    })
    await Promise.race([script.started, result.then((result) => {
      throw new Error(`the call ended before the server ran it: ${result.status}: ${result.content}`)
    })])
    return { result, settled: () => done }
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-timeout-'))
    ctx = await doguApp(dir, [{ permission: 'tool:slow_*', decision: 'allow' }])
    script = new Script()
    progress = []
    onProgress = undefined
    ctx.on('tools/call-progress', (_info: CallInfo, message: string) => {
      progress.push(message)
      onProgress?.()
    })
  })
  afterEach(async () => {
    vi.useRealTimers()
    await connection?.close()
    await server?.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('a call whose progress keeps coming outlives requestTimeout, and fails requestTimeout after the last one', async () => {
    await start()
    const call = await callWork()
    // Three times: 900 ms of silence (under the 1000 ms timeout), then a progress notification.
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(900)
      expect(call.settled()).toBe(false)
      await sendProgress(call)
    }
    // 2700 ms since the call began: alive, because each progress restarted the timer.
    expect(progress).toEqual(['step 1', 'step 2', 'step 3'])
    await vi.advanceTimersByTimeAsync(999)
    expect(call.settled()).toBe(false)
    // The test stops sending progress: 1000 ms after the last one, the call fails.
    await vi.advanceTimersByTimeAsync(1)
    expect(await call.result).toMatchObject({ status: 'error', code: 'tool_error', content: 'Error: the MCP server "slow" sent neither a result nor progress for 1000 ms' })
    // The SDK told the server to stop.
    expect(String(await script.cancelled)).toContain('Request timed out')
  })

  it('a call with progress returns its result long after requestTimeout', async () => {
    await start()
    const call = await callWork()
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(900)
      await sendProgress(call)
    }
    await vi.advanceTimersByTimeAsync(900)
    script.send('done')
    expect(await call.result).toMatchObject({ status: 'ok', content: 'finished after 5 progress notifications' })
    expect(call.settled()).toBe(true)
  })

  it('a call without progress fails exactly at requestTimeout', async () => {
    await start()
    const call = await callWork()
    await vi.advanceTimersByTimeAsync(999)
    expect(call.settled()).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(await call.result).toMatchObject({ status: 'error', code: 'tool_error', content: 'Error: the MCP server "slow" sent neither a result nor progress for 1000 ms' })
    expect(progress).toEqual([])
  })

  it('progress does not extend Dogu\'s own timeout: the call ends timed_out and the server is told to stop', async () => {
    await start(2500)
    const call = await callWork()
    for (let i = 0; i < 2; i++) {
      await vi.advanceTimersByTimeAsync(900)
      await sendProgress(call)
    }
    // 1800 ms: the SDK's timer was restarted at 1800, Dogu's runs out at 2500.
    await vi.advanceTimersByTimeAsync(699)
    expect(call.settled()).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(await call.result).toMatchObject({ status: 'timed_out', code: 'timed_out', content: 'Timed out: timed out after 2.5s. Last progress: step 2' })
    await script.cancelled
  })
})
