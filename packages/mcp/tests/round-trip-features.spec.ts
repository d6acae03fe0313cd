// Dogu → MCP → Dogu for what issue 33 adds: a tool's `call.elicit` served over Streamable
// HTTP and imported by another Dogu app is answered by that app's askers; its `call.log` is
// the importing call's log; `output`, audio and resources come back as they were returned.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin, PermissionService, ToolService } from '@dogu/cordis'
import type { AskAnswer, CallInfo, LogLevel, PermissionRequest, ToolResult } from '@dogu/core'
import { Context } from 'cordis'
import Schema from 'schemastery'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer, McpClientConnection, type McpHttpEndpoint, serveHttp } from '../src'

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='
const FORM = Schema.object({
  username: Schema.string().required().description('Your name'),
  plan: Schema.union(['free', 'pro']).default('free').description('The plan'),
  seats: Schema.natural().default(1),
})

describe('Dogu → MCP → Dogu: elicitation, logging, output, audio and resources', () => {
  let dir: string
  let inner: Context
  let outer: Context
  let server: DoguMcpServer
  let endpoint: McpHttpEndpoint
  let connection: McpClientConnection
  let answer: (request: PermissionRequest) => Omit<AskAnswer, 'by'> | undefined = () => undefined
  const shown: PermissionRequest[] = []
  /** Resolved when the outer app has heard the inner tool's log line. */
  let heard: () => void = () => {}

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-round-features-'))
    inner = new Context()
    guardLogs(inner)
    await inner.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, background: { storePath: join(dir, 'inner-background.json') }, permissions: { storePath: join(dir, 'inner.json'), rules: [{ permission: 'tool:*', decision: 'allow' }] } })
    inner.tools.define({
      name: 'signup',
      description: 'Signs someone up',
      args: Schema.object({}),
      traits: { effect: 'read' },
      run: async (_args, call) => {
        const result = await call.elicit(FORM, 'Who is signing up?')
        return { text: result.action, data: result.action === 'accept' ? result.value : {} }
      },
    })
    inner.tools.define({
      name: 'chatty',
      description: 'Logs as it works',
      args: Schema.object({}),
      traits: { effect: 'read' },
      run: async (_args, call) => {
        const done = new Promise<void>((resolve) => { heard = resolve })
        call.log('notice', { step: 'warming up' })
        await done
        return 'done'
      },
    })
    inner.tools.define({
      name: 'media',
      description: 'Returns typed data, audio and resources',
      args: Schema.object({}),
      traits: { effect: 'read' },
      output: Schema.object({ sum: Schema.number().required() }),
      run: () => ({
        text: 'the sum is 5',
        data: { sum: 5 },
        images: [{ mimeType: 'image/png', data: PIXEL }],
        audio: [{ mimeType: 'audio/wav', data: 'UklGRg==' }],
        resources: [
          { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'the notes' },
          { uri: 'file:///report.pdf', name: 'report', mimeType: 'application/pdf' },
        ],
      }),
    })
    server = contextMcpServer(inner as any, {})
    endpoint = await serveHttp(server, {})

    outer = new Context()
    guardLogs(outer)
    await outer.plugin(ToolService)
    await outer.plugin(PermissionService, { storePath: join(dir, 'outer.json'), rules: [{ permission: 'tool:inner_*', decision: 'allow' }] })
    outer.permissions.asker((request) => {
      if (request.kind !== 'elicitation') return
      shown.push(request)
      const given = answer(request)
      return given && { ...given, by: 'alice' }
    })
    connection = new McpClientConnection({ name: 'inner', server: { url: endpoint.url.href, trusted: true }, define: (tool) => outer.tools.define(tool), reconnect: { initialDelay: 10, maxDelay: 100 } })
    connection.start()
    await connection.connected(AbortSignal.timeout(20_000))
  })
  afterAll(async () => {
    await connection?.close()
    await server?.close()
    await endpoint?.close()
    await outer?.fiber.dispose()
    await inner?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const call = async (name: string): Promise<ToolResult> => (await outer.tools.execute([{ id: 'c', name: `inner_${name}`, arguments: {} }], { session: { id: 'chat', userId: 'alice' } }))[0]

  it('the inner tool\'s form reaches the outer app\'s askers; accept carries the values with the defaults', async () => {
    shown.length = 0
    answer = () => ({ decision: 'allow', value: { username: 'ada', plan: 'pro' } })
    expect(await call('signup')).toMatchObject({ status: 'ok', content: 'accept', data: { username: 'ada', plan: 'pro', seats: 1 } })
    expect(shown).toHaveLength(1)
    expect(shown[0]).toMatchObject({ kind: 'elicitation', tool: 'inner_signup', reason: expect.stringMatching(/^MCP server "inner" asks: .*Who is signing up\?/) })
    expect(shown[0]!.input!.requestedSchema!.properties).toMatchObject({
      username: { type: 'string', description: 'Your name' },
      plan: { enum: ['free', 'pro'], default: 'free' },
      seats: { default: 1 },
    })
  })

  it('a no is decline and a dismissal cancel, on both sides', async () => {
    answer = () => ({ decision: 'deny' })
    expect(await call('signup')).toMatchObject({ status: 'ok', content: 'decline' })
    answer = () => ({ decision: 'deny', dismissed: true })
    expect(await call('signup')).toMatchObject({ status: 'ok', content: 'cancel' })
  })

  it('the inner tool\'s log line is the outer call\'s log', async () => {
    const logged: [string, LogLevel, unknown][] = []
    const off = outer.on('tools/call-log', (info: CallInfo, level: LogLevel, data: unknown) => {
      logged.push([info.name, level, data])
      heard()
    })
    expect(await call('chatty')).toMatchObject({ status: 'ok', content: 'done' })
    off()
    // The serving side also sends its own call events at `info` (the level Dogu asks for).
    expect(logged.filter(([, level]) => level !== 'info')).toEqual([['inner_chatty', 'notice', { step: 'warming up' }]])
  })

  it('output, images, audio and resources come back as the inner tool returned them', async () => {
    expect(outer.tools.get('inner_media')!.output).toBeDefined()
    const direct = (await inner.tools.execute([{ id: 'd', name: 'media', arguments: {} }], { session: { id: 'direct' } }))[0]!
    const bridged = await call('media')
    expect(bridged).toMatchObject({ status: 'ok', data: { sum: 5 }, images: direct.images, audio: direct.audio, resources: direct.resources })
    expect(bridged.content).toContain('the sum is 5')
  })
})
