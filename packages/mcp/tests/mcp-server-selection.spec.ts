import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, createMcpServer, type DoguMcpServer } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

describe('the served toolset: include / exclude, groups, mode', () => {
  let dir: string
  let ctx: Context
  const servers: DoguMcpServer[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-select-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'tasks.json') } })
    await ctx.plugin(demoTools as any)
    ctx.tools.define({ name: 'ops_restart', description: 'Restart a service', groups: ['ops'], traits: { effect: 'exec' }, run: () => 'restarted' })
  })
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  async function names(options: Parameters<typeof contextMcpServer>[1]) {
    const server = contextMcpServer(ctx as any, options)
    servers.push(server)
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b)
    const client = new Client({ name: 'sel', version: '1' })
    await client.connect(a)
    const { tools } = await client.listTools()
    await client.close()
    return tools.map((tool) => tool.name)
  }

  it('include and exclude are name globs; a grouped tool is served only where its group is enabled', async () => {
    expect(await names({ include: ['lookup', 'notes', 'ops_*'] })).toEqual(['lookup', 'notes'])
    expect(await names({ include: ['lookup', 'notes', 'ops_*'], exclude: ['notes'], groups: ['ops'] })).toEqual(['lookup', 'ops_restart'])
  })

  it('search mode serves tool_search in place of the deferred tools, which stay callable', async () => {
    const server = contextMcpServer(ctx as any, { include: ['lookup', 'notes'], mode: 'search' })
    servers.push(server)
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b)
    const client = new Client({ name: 'sel', version: '1' })
    await client.connect(a)
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['tool_search'])
    expect(await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).toMatchObject({ content: [{ type: 'text', text: 'found tea' }] })
    await client.close()
  })

  it('bad options are a clear error', () => {
    expect(() => contextMcpServer(ctx as any, { authority: 'high' as any })).toThrow('authority must be a number, got "high"')
    expect(() => createMcpServer({} as any)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createMcpServer() needs a toolset(options) function (ctx.tools.toolset)' }))
  })
})
