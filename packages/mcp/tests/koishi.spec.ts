// Both plugins in a Koishi 4 app (cordis 3), with koishi-plugin-dogu's services: they use
// only `ctx.tools`, Dogu's `ctx.permissions.asker`, events and effects.
import { resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { koishiApp, loadPlugin, settle } from '../../koishi/tests/koishi-app'
import { McpClientPlugin, McpServerPlugin } from '../src'
import { alive, childrenMatching } from './client-harness'
import * as demoTools from './fixtures/demo-tools.mjs'

const ODD = resolve(import.meta.dirname, 'fixtures/odd-server.mjs')

describe('@dogu/mcp in Koishi', () => {
  it('the server plugin serves Koishi\'s tools and asks the client through Dogu\'s asker', async () => {
    const { app } = await koishiApp()
    loadPlugin(app, demoTools)
    let listening: (url: string) => void
    const url = new Promise<string>((resolve) => { listening = resolve })
    app.on('dogu-mcp/listening' as any, (href: string) => listening(href))
    const scope = loadPlugin(app, McpServerPlugin, { http: {} })
    await settle(app)
    const client = new Client({ name: 'koishi-test', version: '1' }, { capabilities: { elicitation: { form: {} } } })
    const asked: string[] = []
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message)
      return { action: 'accept', content: { decision: 'once' } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(await url)))
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('lookup')
    expect(await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).toMatchObject({ content: [{ type: 'text', text: 'found tea' }] })
    expect(await client.callTool({ name: 'notes', arguments: { text: 'hi' } })).toMatchObject({ structuredContent: { saved: 'hi', length: 2 } })
    expect(asked).toEqual(['Allow notes(text=hi)? no rule matches; write tools need approval by default'])
    await client.close()
    scope.dispose()
  })

  it('the client plugin imports a server\'s tools into Koishi\'s ctx.tools, ready() waits for them; disposal ends the process', async () => {
    const { app, guard } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'tool:odd_*', decision: 'allow' }] } } })
    // On Koishi's logger, where its console and log files show it.
    guard.expect('[dogu-mcp] MCP server "odd": skipped tool refused: "if" has no schemastery form (at $.if)')
    const scope = loadPlugin(app, McpClientPlugin, { servers: { odd: { command: process.execPath, args: [ODD] } } })
    await settle(app)
    const tools = (app as any).tools
    // The same wait as on Cordis 4: Koishi's ctx.tools lists the server as a source.
    expect(await McpClientPlugin.ready(app as any, { timeout: 10_000 })).toContain('odd_toggle')
    const [result] = await tools.execute([{ id: '1', name: 'odd_toggle', arguments: {} }], { session: { id: 'k' } })
    expect(result).toMatchObject({ status: 'ok', content: 'added' })
    const pids = childrenMatching(ODD)
    expect(pids).toHaveLength(1)
    scope.dispose()
    await settle(app)
    expect(tools.get('odd_toggle')).toBeUndefined()
    // Koishi (cordis 3) does not wait for an effect's promise: wait for the exit, bounded.
    for (let i = 0; i < 200 && alive(pids[0]); i++) await new Promise((resolve) => setTimeout(resolve, 25))
    expect(alive(pids[0])).toBe(false)
  })
})
