import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { McpClientConnection } from '../src'
import { EncryptedFileOAuthStore } from '../src/oauth-token-store'
import { startOAuthMcpServer } from './fixtures/oauth-mcp-server'
it('smoke', async () => {
  const server = await startOAuthMcpServer()
  const dir = mkdtempSync(join(tmpdir(), 'smoke-'))
  const defined: string[] = []
  const warns: string[] = []
  const c = new McpClientConnection({ name: 'o', server: { url: server.url, auth: 'oauth' }, define: (t) => { defined.push(t.name); return () => {} }, logger: { debug() {}, warn: (f: string, ...a: unknown[]) => warns.push(f + a.join(' ')) }, oauth: { store: new EncryptedFileOAuthStore({ path: join(dir, 't.json') }), redirectUrl: 'http://127.0.0.1:9/cb' } })
  c.start()
  for (let i = 0; i < 100 && c.status !== 'needs-authorization'; i++) await new Promise((r) => setTimeout(r, 50))
  console.log(c.status, c.lastError, warns)
  const url = await c.startAuthorization('op1')
  const r = await fetch(url, { redirect: 'manual' })
  const back = new URL(r.headers.get('location')!)
  await c.authorize(back.searchParams.get('code')!, back.searchParams.get('state')!, 'op1')
  await c.connected()
  console.log(c.status, c.tools, defined, server.counts)
  await c.close(); await server.close()
}, 30000)
