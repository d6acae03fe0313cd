import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer, type McpHttpEndpoint, McpServerPlugin, serveHttp } from '../src'
import { SessionEventStore } from '../src/event-store'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

/** A deferred: a promise and what settles it. */
function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((done) => { resolve = done })
  return { promise, resolve }
}

describe('Streamable HTTP resumability (SEP-1699): priming events, sseCloseAfter, Last-Event-ID', () => {
  let dir: string
  let ctx: Context
  let server: DoguMcpServer
  let endpoint: McpHttpEndpoint | undefined
  const clients: Client[] = []
  /** Per `wait` call id: what lets it finish. */
  const releases = new Map<string, () => void>()
  let waiting = deferred()

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-sse-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    ctx.tools.define({
      name: 'wait',
      description: 'Waits until the test releases it, reports a step, then answers',
      args: Schema.object({ id: Schema.string().required() }),
      traits: { effect: 'read' },
      run: async ({ id }: { id: string }, call) => {
        await new Promise<void>((resolve, reject) => {
          releases.set(id, resolve)
          waiting.resolve()
          call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true })
        })
        call.progress(`${id} released`)
        return `done ${id}`
      },
    })
    ctx.tools.define({ name: 'quick', description: 'Answers at once', traits: { effect: 'read' }, run: () => 'quick' })
    server = contextMcpServer(ctx as any, {})
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    await endpoint?.close()
    endpoint = undefined
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
    releases.clear()
    waiting = deferred()
  })

  /**
   * An SDK client whose resuming GETs (`Last-Event-ID`) are held until `hold` settles, so
   * what the server sends meanwhile has no stream to go to and must come from its store.
   */
  async function connect(hold: (lastEventId: string) => Promise<void>, url = endpoint!.url) {
    const resumed: string[] = []
    const transport = new StreamableHTTPClientTransport(url, {
      fetch: async (url, init) => {
        const lastEventId = new Headers(init?.headers).get('last-event-id')
        if (init?.method === 'GET' && lastEventId) {
          resumed.push(lastEventId)
          await hold(lastEventId)
        }
        return fetch(url, init)
      },
    })
    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(transport)
    clients.push(client)
    return { client, resumed }
  }

  it('a POST stream opens with a priming event: an id, the retry interval, no data', async () => {
    endpoint = await serveHttp(server, {})
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const init = await fetch(endpoint.url, { method: 'POST', headers, body: JSON.stringify(INIT) })
    const session = init.headers.get('mcp-session-id')!
    await init.text()
    const call = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'quick', arguments: {} } }),
    })
    const events = (await call.text()).trim().split('\n\n')
    expect(events[0]).toMatch(/^id: \S+\nretry: 1000\ndata: $/)
    expect(events[1]).toMatch(/^event: message\nid: \S+\ndata: \{.*"text":"quick"/)
  })

  it('with sseCloseAfter, a call still running loses its stream; the client resumes with Last-Event-ID and gets what was sent meanwhile, and the result', async () => {
    endpoint = await serveHttp(server, { sseCloseAfter: 50 })
    let ended!: () => void
    const callEnded = new Promise<void>((resolve) => { ended = resolve })
    ctx.on('tools/call-end', (info) => { if (info.name === 'wait') ended() })
    const { client, resumed } = await connect(async () => {
      // The stream is gone: the tool reports and ends with nobody connected.
      await waiting.promise
      releases.get('a')!()
      await callEnded
    })
    const progress: string[] = []
    const result = await client.callTool({ name: 'wait', arguments: { id: 'a' } }, undefined, { onprogress: ({ message }) => { progress.push(message!) } })
    expect(result.content).toEqual([{ type: 'text', text: 'done a' }])
    expect(progress).toEqual(['a released'])
    expect(resumed).toHaveLength(1)
  })

  it('several calls\' streams close and resume side by side, each with its own result', async () => {
    endpoint = await serveHttp(server, { sseCloseAfter: 50 })
    const all = deferred()
    let held = 0
    const { client, resumed } = await connect(async () => {
      if (++held === 3) all.resolve()
      await all.promise
    })
    const calls = ['a', 'b', 'c'].map((id) => client.callTool({ name: 'wait', arguments: { id } }))
    // Every call's stream is being resumed at once; then they may finish.
    await all.promise
    await expect.poll(() => releases.size).toBe(3)
    for (const release of releases.values()) release()
    const results = await Promise.all(calls)
    expect(results.map((result) => (result.content as any)[0].text)).toEqual(['done a', 'done b', 'done c'])
    // Three streams, each resumed from its own last event.
    expect(new Set(resumed.map((id) => id.slice(0, id.lastIndexOf(':')))).size).toBe(3)
  })

  it('without sseCloseAfter, a stream stays open until its call ends', async () => {
    endpoint = await serveHttp(server, {})
    const { client, resumed } = await connect(async () => {})
    const call = client.callTool({ name: 'wait', arguments: { id: 'a' } })
    await waiting.promise
    await client.callTool({ name: 'quick', arguments: {} })
    releases.get('a')!()
    expect((await call).content).toEqual([{ type: 'text', text: 'done a' }])
    expect(resumed).toEqual([])
  })

  it('McpServerPlugin takes http.sseCloseAfter from its config', async () => {
    let announced!: (url: string) => void
    const listening = new Promise<string>((resolve) => { announced = resolve })
    ctx.on('dogu-mcp/listening', (href) => announced(href))
    const fiber = ctx.plugin(McpServerPlugin as any, { http: { sseCloseAfter: 50 } })
    await fiber
    const url = new URL(await listening)
    const { client, resumed } = await connect(async () => {
      await waiting.promise
      releases.get('a')!()
    }, url)
    expect((await client.callTool({ name: 'wait', arguments: { id: 'a' } })).content).toEqual([{ type: 'text', text: 'done a' }])
    expect(resumed).toHaveLength(1)
    await client.close()
    clients.length = 0
    await fiber.dispose()
  })

  it('refuses an sseCloseAfter that is not a number of milliseconds', async () => {
    await expect(serveHttp(server, { sseCloseAfter: -1 })).rejects.toThrow('http.sseCloseAfter must be a number of milliseconds (0: never), got -1')
  })
})

describe('SessionEventStore: one session\'s events, bounded', () => {
  const message = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: id } })
  async function replay(store: SessionEventStore, after: string) {
    const sent: [string, JSONRPCMessage][] = []
    const stream = await store.replayEventsAfter(after, { send: async (id, event) => { sent.push([id, event]) } })
    return { stream, sent }
  }

  it('replays a stream\'s events after the last one seen, not other streams\' nor priming events', async () => {
    const store = new SessionEventStore()
    const priming = await store.storeEvent('s1', {} as JSONRPCMessage)
    const first = await store.storeEvent('s1', message(1))
    await store.storeEvent('s2', message(2))
    const third = await store.storeEvent('s1', message(3))
    expect(await store.getStreamIdForEventId(first)).toBe('s1')
    expect(await replay(store, priming)).toEqual({ stream: 's1', sent: [[first, message(1)], [third, message(3)]] })
    expect((await replay(store, first)).sent).toEqual([[third, message(3)]])
  })

  it('keeps at most maxEvents and maxBytes, the oldest dropped first, the newest always', async () => {
    const store = new SessionEventStore({ maxEvents: 3 })
    const ids = []
    for (let i = 1; i <= 5; i++) ids.push(await store.storeEvent('s', message(i)))
    expect(store.size).toBe(3)
    // The event last seen is gone: what is kept after it still comes.
    expect((await replay(store, ids[0])).sent.map(([id]) => id)).toEqual(ids.slice(2))

    const small = new SessionEventStore({ maxBytes: 10 })
    await small.storeEvent('s', message(1))
    const big = await small.storeEvent('s', message(2))
    expect(small.size).toBe(1)
    expect(await small.getStreamIdForEventId(big)).toBe('s')
  })

  it('an id it never gave, or of a stream it no longer holds, is unknown', async () => {
    const store = new SessionEventStore({ maxEvents: 1 })
    const gone = await store.storeEvent('old', message(1))
    await store.storeEvent('new', message(2))
    expect(await store.getStreamIdForEventId(gone)).toBeUndefined()
    expect(await store.getStreamIdForEventId('new:99')).toBeUndefined()
    expect(await store.getStreamIdForEventId('garbage')).toBeUndefined()
    await expect(replay(store, 'garbage')).rejects.toThrow('unknown event id "garbage"')
    store.clear()
    expect(store.size).toBe(0)
  })
})
