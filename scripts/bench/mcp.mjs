// The added cost of a tool call through the MCP bridge, against a direct `execute()` of the
// same trivial read tool measured in the same run:
// - server side: the official SDK client calling Dogu's MCP server, in memory and over stdio
//   (`dogu-mcp` in a child process);
// - both sides: Dogu → MCP → Dogu, an imported tool whose server is Dogu, in memory and over stdio.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { createMcpServer, McpClientConnection } from '../../packages/mcp/lib/index.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { compareAll, formatNs, printTable, root, writeResults } from './harness.mjs'

const session = { id: 'bench', userId: 'u1' }
const ping = defineTool({ name: 'ping', description: 'Answers pong', traits: { effect: 'read' }, run: () => 'pong' })

// The yardstick: one call of the tool through the whole pipeline.
const inner = new ToolRegistry()
inner.define(ping)
const toolset = inner.toolset({ session })
const direct = () => toolset.execute([{ id: 'c1', name: 'ping', arguments: {} }])

// SDK client → Dogu's server, in memory.
const server = createMcpServer({ toolset: (options) => inner.toolset(options) })
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
await server.connect(serverSide)
const memoryClient = new Client({ name: 'bench', version: '1' })
await memoryClient.connect(clientSide)
const sdkMemory = () => memoryClient.callTool({ name: 'ping', arguments: {} })

// SDK client → `dogu-mcp` over stdio.
const dir = mkdtempSync(join(tmpdir(), 'dogu-bench-mcp-'))
const plugin = join(dir, 'ping.mjs')
writeFileSync(plugin, `export const name = 'ping'
export const inject = ['tools']
export function apply(ctx) { ctx.tools.define({ name: 'ping', description: 'Answers pong', traits: { effect: 'read' }, run: () => 'pong' }) }
`)
const config = join(dir, 'dogu-mcp.json')
writeFileSync(config, JSON.stringify({ dogu: { permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'tasks.json') } }, plugins: { [plugin]: {} } }))
const stdioCommand = { command: process.execPath, args: [join(root, 'packages/mcp/bin/dogu-mcp.js'), config] }
const stdioClient = new Client({ name: 'bench', version: '1' })
await stdioClient.connect(new StdioClientTransport(stdioCommand))
const sdkStdio = () => stdioClient.callTool({ name: 'ping', arguments: {} })

// Dogu → MCP → Dogu: the tool imported from a trusted Dogu server, in memory and over stdio.
async function imported(name, options) {
  const outer = new ToolRegistry()
  const connection = new McpClientConnection({ name, server: { trusted: true, ...options.server }, define: (tool) => outer.define(tool), transport: options.transport })
  connection.start()
  await connection.connected(AbortSignal.timeout(30_000))
  const outerToolset = outer.toolset({ session })
  return { connection, call: () => outerToolset.execute([{ id: 'c1', name: `${name}_ping`, arguments: {} }]) }
}
const bridgedMemory = await imported('mem', {
  server: {},
  transport: () => {
    const [a, b] = InMemoryTransport.createLinkedPair()
    void server.connect(b)
    return a
  },
})
const bridgedStdio = await imported('stdio', { server: stdioCommand })

// Every path must answer pong before it is timed.
for (const [label, fn] of [['sdk in memory', sdkMemory], ['sdk stdio', sdkStdio]]) {
  const result = await fn()
  if (result.content?.[0]?.text !== 'pong') throw new Error(`${label}: unexpected result ${JSON.stringify(result)}`)
}
for (const [label, { call }] of [['bridge in memory', bridgedMemory], ['bridge stdio', bridgedStdio]]) {
  const [result] = await call()
  if (result.status !== 'ok' || result.content !== 'pong') throw new Error(`${label}: unexpected result ${JSON.stringify(result)}`)
}

const figures = await compareAll({
  direct,
  sdkMemory,
  bridgeMemory: bridgedMemory.call,
  sdkStdio,
  bridgeStdio: bridgedStdio.call,
}, { iterations: 300, rounds: 7 })

const rows = [
  ['direct execute()', 'direct'],
  ['SDK client → Dogu server, in memory', 'sdkMemory'],
  ['Dogu → MCP → Dogu, in memory', 'bridgeMemory'],
  ['SDK client → dogu-mcp, stdio', 'sdkStdio'],
  ['Dogu → MCP → Dogu, stdio', 'bridgeStdio'],
].map(([path, key]) => ({
  path,
  'per call': formatNs(figures[key]),
  'added': key === 'direct' ? '—' : formatNs(figures[key] - figures.direct),
  'vs direct': `${(figures[key] / figures.direct).toFixed(1)}×`,
}))
printTable('One call of a trivial read tool (median of 7 alternating rounds × 300 calls)', rows)
writeResults('mcp', {
  perCallNs: figures,
  addedNs: Object.fromEntries(Object.entries(figures).filter(([key]) => key !== 'direct').map(([key, ns]) => [key, ns - figures.direct])),
})

await bridgedMemory.connection.close()
await bridgedStdio.connection.close()
await memoryClient.close()
await stdioClient.close()
await server.close()
rmSync(dir, { recursive: true, force: true })
