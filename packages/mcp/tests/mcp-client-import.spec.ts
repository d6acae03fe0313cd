// What Dogu makes of an imported server's elicitation, log messages, rich results and output
// schemas. The server is the SDK's low-level `Server`, in memory; each tool waits for what the
// test says (an answer, a log line heard) rather than for time to pass.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AskAnswer, CallInfo, LogLevel, PermissionRequest, ToolCall, ToolResult } from '@dogu/core'
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, type CallToolResult, ElicitResultSchema, ListToolsRequestSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { McpClientConnection, McpClientPlugin } from '../src'
import { IdleDeadline } from '../src/idle-deadline'
import { answerElicitation } from '../src/imported-elicitation'
import { doguApp } from './client-harness'

const session = { id: 'cli', userId: 'alice' }

/** Every form field kind MCP has (SEP-1330's five enums among them), each with a default (SEP-1034) but `name`. */
const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1 },
    age: { type: 'integer', default: 30, minimum: 0 },
    score: { type: 'number', default: 95.5 },
    verified: { type: 'boolean', default: true },
    email: { type: 'string', format: 'email', default: 'a@example.com' },
    untitledSingle: { type: 'string', enum: ['a', 'b', 'c'], default: 'b' },
    titledSingle: { type: 'string', oneOf: [{ const: 'v1', title: 'First' }, { const: 'v2', title: 'Second' }], default: 'v2' },
    legacyEnum: { type: 'string', enum: ['x', 'y'], enumNames: ['Ex', 'Why'], default: 'y' },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['r', 'g', 'b'] }, minItems: 1, maxItems: 2, default: ['g'] },
    titledMulti: { type: 'array', items: { anyOf: [{ const: 'p', title: 'Pear' }, { const: 'q', title: 'Quince' }] }, default: ['q'] },
  },
  required: ['name'],
} as const

const OUTPUT = { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] } as const

/** The server's tools and what it saw: elicitation results, the log level it was asked for. */
class Fixture {
  elicited: unknown[] = []
  levels: string[] = []
  /** Resolved by the test once Dogu has heard the log line the `log` tool sent. */
  heard!: () => void
  server: Server

  constructor(logs: boolean, odd: boolean) {
    this.server = new Server({ name: 'features', version: '1.0.0' }, { capabilities: { tools: {}, ...(logs ? { logging: {} } : {}) } })
    if (logs) this.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      this.levels.push(request.params.level)
      return {}
    })
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: 'ask', description: 'Asks for a form', inputSchema: { type: 'object', properties: {} } },
        { name: 'log', description: 'Logs while it runs', inputSchema: { type: 'object', properties: {} } },
        { name: 'rich', description: 'Returns every kind of content', inputSchema: { type: 'object', properties: {} }, outputSchema: OUTPUT },
        ...(odd ? [{ name: 'odd_output', description: 'Has an output schema Dogu cannot read', inputSchema: { type: 'object' as const, properties: {} }, outputSchema: { type: 'object' as const, if: { required: ['a'] }, then: { required: ['b'] } } }] : []),
      ],
    }))
    this.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name
      if (name === 'ask') {
        const result = await extra.sendRequest({ method: 'elicitation/create', params: { message: 'Who are you?', requestedSchema: FORM as any } }, ElicitResultSchema)
        this.elicited.push(result)
        return { content: [{ type: 'text', text: `answered ${result.action}` }] }
      }
      if (name === 'log') {
        const heard = new Promise<void>((resolve) => { this.heard = resolve })
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'warning', logger: 'brewer', data: { step: 'boiling' } } })
        await heard
        return { content: [{ type: 'text', text: 'logged' }] }
      }
      if (name === 'rich') {
        return {
          content: [
            { type: 'text', text: 'the sum is 5' },
            { type: 'image', data: 'aW1n', mimeType: 'image/png' },
            { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
            { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'the notes' } },
            { type: 'resource', resource: { uri: 'file:///data.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
            { type: 'resource_link', uri: 'file:///report.pdf', name: 'report', title: 'The report', description: 'Monthly', mimeType: 'application/pdf' },
          ],
          structuredContent: { sum: 5 },
        }
      }
      return { content: [{ type: 'text', text: 'odd' }], structuredContent: { a: 1, b: 2 } }
    })
  }
}

describe('imported servers: elicitation, logging, rich results, output schemas', () => {
  let dir: string
  let ctx: Context
  let fixture: Fixture
  let connection: McpClientConnection
  let lines: string[]

  async function start(options: { logs?: boolean; odd?: boolean; logLevel?: LogLevel; requestTimeout?: number } = {}) {
    fixture = new Fixture(options.logs ?? true, options.odd ?? false)
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await fixture.server.connect(serverSide)
    const log = (level: string) => (format: string, ...args: unknown[]) => lines.push(`${level}: ${format.replace(/%s/g, () => String(args.shift()))}`)
    connection = new McpClientConnection({
      name: 'feat',
      server: { command: 'unused', ...(options.logLevel ? { logLevel: options.logLevel } : {}), ...(options.requestTimeout ? { requestTimeout: options.requestTimeout } : {}) },
      define: (tool) => ctx.tools.define(tool),
      transport: () => clientSide,
      logger: { debug: log('debug'), info: log('info'), warn: log('warn') },
    })
    connection.start()
    await connection.connected(AbortSignal.timeout(10_000))
  }

  async function call(name: string): Promise<ToolResult> {
    const [result] = await ctx.tools.execute([{ id: 'c1', name, arguments: {} }], { session })
    return result
  }

  /** Registers an asker that answers forms with `answer` and records what it was shown. */
  function answerForms(answer: (request: PermissionRequest) => Omit<AskAnswer, 'by'> | Promise<Omit<AskAnswer, 'by'>>) {
    const shown: PermissionRequest[] = []
    ctx.permissions.asker(async (request) => {
      if (request.kind !== 'elicitation') return
      shown.push(request)
      return { ...(await answer(request)), by: 'alice' }
    })
    return shown
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-import-'))
    ctx = await doguApp(dir, [{ permission: 'tool:feat_*', decision: 'allow' }])
    lines = []
  })
  afterEach(async () => {
    vi.useRealTimers()
    await connection?.close()
    await fixture?.server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  describe('elicitation: the server\'s form is the call\'s call.elicit', () => {
    it('the askers see the server\'s form as it sent it; an accepted answer goes back with every default applied', async () => {
      await start()
      const shown = answerForms(() => ({ decision: 'allow', value: { name: 'Ada', untitledMulti: ['r', 'b'] } }))
      expect(await call('feat_ask')).toMatchObject({ status: 'ok', content: 'answered accept' })
      expect(shown).toHaveLength(1)
      expect(shown[0]).toMatchObject({ kind: 'elicitation', tool: 'feat_ask', reason: 'MCP server "feat" asks: Who are you?' })
      expect(shown[0]!.input!.requestedSchema).toEqual(FORM)
      expect(fixture.elicited).toEqual([{
        action: 'accept',
        content: { name: 'Ada', age: 30, score: 95.5, verified: true, email: 'a@example.com', untitledSingle: 'b', titledSingle: 'v2', legacyEnum: 'y', untitledMulti: ['r', 'b'], titledMulti: ['q'] },
      }])
    })

    it('an answer outside the form (a choice it does not list) is refused and the question keeps waiting for a valid one', async () => {
      await start()
      let asked!: (asked: { request: PermissionRequest; respond: (answer: AskAnswer) => string }) => void
      const question = new Promise<{ request: PermissionRequest; respond: (answer: AskAnswer) => string }>((resolve) => { asked = resolve })
      ctx.permissions.asker((request, { respond }) => {
        if (request.kind === 'elicitation') asked({ request, respond })
      })
      const result = call('feat_ask')
      const { request, respond } = await question
      expect(request.input!.check({ name: 'Ada', titledSingle: 'v3' })).toContain('titledSingle')
      expect(respond({ decision: 'allow', value: { name: 'Ada', titledSingle: 'v3' }, by: 'alice' })).toBe('invalid')
      expect(respond({ decision: 'allow', value: { name: 'Ada' }, by: 'alice' })).toBe('accepted')
      expect(await result).toMatchObject({ status: 'ok', content: 'answered accept' })
      expect(fixture.elicited).toEqual([{ action: 'accept', content: expect.objectContaining({ name: 'Ada', titledSingle: 'v2' }) }])
    })

    it('a no is decline; a dismissal is cancel; with nobody to ask it is cancel', async () => {
      await start()
      const answers: Omit<AskAnswer, 'by'>[] = [{ decision: 'deny' }, { decision: 'deny', dismissed: true }]
      const off = ctx.permissions.asker(async (request) => request.kind === 'elicitation' ? { ...answers.shift()!, by: 'alice' } : undefined)
      expect(await call('feat_ask')).toMatchObject({ status: 'ok', content: 'answered decline' })
      expect(await call('feat_ask')).toMatchObject({ status: 'ok', content: 'answered cancel' })
      off()
      expect(await call('feat_ask')).toMatchObject({ status: 'ok', content: 'answered cancel' })
      expect(fixture.elicited).toEqual([{ action: 'decline' }, { action: 'cancel' }, { action: 'cancel' }])
    })

    it('a person slower than requestTimeout: the call waits for the answer', async () => {
      await start({ requestTimeout: 1000 })
      let answer!: () => void
      const asked = new Promise<void>((resolve) => {
        answerForms(() => {
          resolve()
          return new Promise((done) => { answer = () => done({ decision: 'allow', value: { name: 'Ada' } }) })
        })
      })
      vi.useFakeTimers()
      let settled = false
      const result = call('feat_ask').then((result) => { settled = true; return result })
      await asked
      await vi.advanceTimersByTimeAsync(5000)
      expect(settled).toBe(false)
      answer()
      expect(await result).toMatchObject({ status: 'ok', content: 'answered accept' })
    })
  })

  it('answerElicitation: URL mode, no call running, and a form call.elicit refuses are declined with a warning', async () => {
    const warnings: string[] = []
    const logger = { debug() {}, warn: (format: string, ...args: unknown[]) => warnings.push([format, ...args].join(' | ')) }
    const form = { mode: 'form' as const, message: 'Fill', requestedSchema: { type: 'object' as const, properties: {} } }
    const refusing = { signal: new AbortController().signal, elicit: () => Promise.reject(new Error('call.elicit: the requested schema cannot be read')) } as unknown as ToolCall
    expect(await answerElicitation(refusing, { mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e1' }, { server: 's', logger })).toEqual({ action: 'decline' })
    expect(await answerElicitation(undefined, form, { server: 's', logger })).toEqual({ action: 'decline' })
    expect(await answerElicitation(refusing, form, { server: 's', logger })).toEqual({ action: 'decline' })
    expect(warnings).toEqual([
      'MCP server "%s": declined an elicitation (%s): %s | s | Sign in | Dogu answers form elicitations only, not URL mode',
      'MCP server "%s": declined an elicitation (%s): %s | s | Fill | no call of this server is running',
      'MCP server "%s": declined an elicitation (%s): %s | s | Fill | call.elicit: the requested schema cannot be read',
    ])
  })

  it('IdleDeadline: passes after ms without a touch; a hold stops it until released, then it counts from the release', async () => {
    vi.useFakeTimers()
    const deadline = new IdleDeadline(1000, () => 'silent')
    await vi.advanceTimersByTimeAsync(900)
    deadline.touch()
    await vi.advanceTimersByTimeAsync(900)
    const release = deadline.hold()
    deadline.touch()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(deadline.expired).toBe(false)
    release()
    release()
    await vi.advanceTimersByTimeAsync(999)
    expect(deadline.expired).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(deadline.signal.reason).toBe('silent')
    deadline.dispose()
  })

  it('IdleDeadline: its signal also aborts with the call\'s, with that reason, without counting as passed; disposed, it no longer follows it', async () => {
    vi.useFakeTimers()
    const call = new AbortController()
    const deadline = new IdleDeadline(1000, () => 'silent', call.signal)
    call.abort('cancelled by the user')
    expect(deadline.signal.reason).toBe('cancelled by the user')
    expect(deadline.expired).toBe(false)
    await vi.advanceTimersByTimeAsync(2000)
    expect(deadline.signal.reason).toBe('cancelled by the user')

    const aborted = new AbortController()
    aborted.abort('gone already')
    expect(new IdleDeadline(1000, () => 'silent', aborted.signal).signal.reason).toBe('gone already')

    const later = new AbortController()
    const done = new IdleDeadline(1000, () => 'silent', later.signal)
    done.dispose()
    later.abort('after the result')
    expect(done.signal.aborted).toBe(false)
  })

  describe('logging', () => {
    it('sets the server\'s level (info unless configured); a line during a call is the call\'s log', async () => {
      await start()
      expect(fixture.levels).toEqual(['info'])
      const logged: [string, LogLevel, unknown][] = []
      ctx.on('tools/call-log', (info: CallInfo, level: LogLevel, data: unknown) => {
        logged.push([info.name, level, data])
        fixture.heard()
      })
      expect(await call('feat_log')).toMatchObject({ status: 'ok', content: 'logged' })
      expect(logged).toEqual([['feat_log', 'warning', { step: 'boiling' }]])
      expect(lines).toEqual([])
    })

    it('a configured level is sent; a server that does not log is not asked', async () => {
      await start({ logLevel: 'debug' })
      expect(fixture.levels).toEqual(['debug'])
      await connection.close()
      await start({ logs: false })
      expect(fixture.levels).toEqual([])
    })

    it('outside a call, a line is the host\'s, at the matching severity, with the server\'s logger name', async () => {
      await start()
      await fixture.server.sendLoggingMessage({ level: 'notice', data: 'warming up' })
      await fixture.server.sendLoggingMessage({ level: 'error', logger: 'brewer', data: { failed: true } })
      await fixture.server.sendLoggingMessage({ level: 'debug', data: 'below info, sent anyway' })
      await vi.waitFor(() => expect(lines).toHaveLength(3))
      expect(lines).toEqual([
        'info: MCP server "feat" notice: warming up',
        'warn: MCP server "feat" (brewer) error: {"failed":true}',
        'debug: MCP server "feat" debug: below info, sent anyway',
      ])
    })

    it('the plugin\'s config: logLevel is info unless set, one of MCP\'s levels; a bad one is a clear error', () => {
      expect(McpClientPlugin.Config({ servers: { a: { url: 'http://localhost/mcp' } } }).servers.a!.logLevel).toBe('info')
      expect(McpClientPlugin.Config({ servers: { a: { command: 'x', logLevel: 'debug' } } }).servers.a!.logLevel).toBe('debug')
      expect(() => McpClientPlugin.Config({ servers: { a: { command: 'x', logLevel: 'loud' as LogLevel } } })).toThrow()
      expect(() => new McpClientConnection({ name: 'x', server: { command: 'x', logLevel: 'loud' as LogLevel }, define: () => () => {} }))
        .toThrow('servers.x.logLevel must be one of debug, info, notice, warning, error, critical, alert, emergency, not "loud"')
    })
  })

  describe('results and output schemas', () => {
    it('audio, embedded resources (text and blob) and links are kept beside images; the model reads a line for each; structuredContent is data', async () => {
      await start()
      const result = await call('feat_rich')
      expect(result).toMatchObject({
        status: 'ok',
        content: 'the sum is 5\n[audio audio/wav]\nthe notes\n[resource file:///data.bin]\n[resource report: file:///report.pdf]',
        images: [{ mimeType: 'image/png', data: 'aW1n' }],
        audio: [{ mimeType: 'audio/wav', data: 'UklGRg==' }],
        resources: [
          { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'the notes' },
          { uri: 'file:///data.bin', mimeType: 'application/octet-stream', blob: 'AAEC' },
          { uri: 'file:///report.pdf', name: 'report', title: 'The report', description: 'Monthly', mimeType: 'application/pdf' },
        ],
        data: { sum: 5 },
      })
    })

    it('a tool\'s outputSchema is its output; one Dogu cannot read leaves the tool without it, with a warning', async () => {
      await start({ odd: true })
      const rich = ctx.tools.get('feat_rich')!
      expect(rich.output).toBeDefined()
      expect(rich.output!({ sum: 5 })).toEqual({ sum: 5 })
      expect(() => rich.output!({})).toThrow('sum')
      expect(ctx.tools.get('feat_odd_output')!.output).toBeUndefined()
      expect(lines).toEqual(['warn: MCP server "feat": tool odd_output is imported without its output schema: "if" has no schemastery form (at $.if)'])
      expect(await call('feat_odd_output')).toMatchObject({ status: 'ok', data: { a: 1, b: 2 } })
    })
  })
})

describe('imported servers: task mode', () => {
  /** A task server with `required` (status messages, finished by the test) and `optional` (done at once). */
  function taskServer(store: InMemoryTaskStore, created: (taskId: string) => void) {
    const server = new McpServer({ name: 'brewery', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore: store })
    const handlers = (finish: boolean) => ({
      createTask: async (extra: any) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 20 })
        if (finish) await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: 'at once' }] })
        else created(task.taskId)
        return { task }
      },
      getTask: (extra: any) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (extra: any) => extra.taskStore.getTaskResult(extra.taskId),
    })
    server.experimental.tasks.registerToolTask('required', { description: 'Only as a task', execution: { taskSupport: 'required' } }, handlers(false))
    server.experimental.tasks.registerToolTask('optional', { description: 'Either way', execution: { taskSupport: 'optional' } }, handlers(true))
    return server
  }

  it('a tool that requires task mode is polled as a task; one that only allows it is one plain tools/call', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-import-tasks-'))
    const ctx = await doguApp(dir, [{ permission: 'tool:brewery_*', decision: 'allow' }])
    const store = new InMemoryTaskStore()
    let onCreated: (taskId: string) => void = () => {}
    const server = taskServer(store, (taskId) => onCreated(taskId))
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    // What the client sends, by method, and whether a tools/call asked for a task.
    const sent: string[] = []
    const send = clientSide.send.bind(clientSide)
    clientSide.send = (message, options) => {
      if ('method' in message) sent.push(message.method === 'tools/call' && (message.params as any)?.task ? 'tools/call (task)' : message.method)
      return send(message, options)
    }
    const connection = new McpClientConnection({ name: 'brewery', server: { command: 'unused' }, define: (tool) => ctx.tools.define(tool), transport: () => clientSide })
    try {
      connection.start()
      await connection.connected(AbortSignal.timeout(10_000))
      const progress: string[] = []
      ctx.on('tools/call-progress', (_info: CallInfo, message: string) => { progress.push(message) })
      const next = new Promise<string>((resolve) => { onCreated = resolve })
      sent.length = 0
      const pending = ctx.tools.execute([{ id: 'c1', name: 'brewery_required', arguments: {} }], { session })
      const taskId = await next
      // A status message reaches the call only through tasks/get: the call polls the task.
      await store.updateTaskStatus(taskId, 'working', 'grinding beans')
      await expect.poll(() => progress).toEqual(['grinding beans'])
      await store.storeTaskResult(taskId, 'completed', { content: [{ type: 'text', text: 'coffee' }] })
      expect((await pending)[0]).toMatchObject({ status: 'ok', content: 'coffee' })
      expect(sent[0]).toBe('tools/call (task)')
      expect(sent).toContain('tasks/get')
      sent.length = 0
      expect((await ctx.tools.execute([{ id: 'c2', name: 'brewery_optional', arguments: {} }], { session }))[0]).toMatchObject({ status: 'ok', content: 'at once' })
      expect(sent).toEqual(['tools/call'])
    } finally {
      await connection.close()
      await server.close()
      store.cleanup()
      await ctx.fiber.dispose()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
