// Issue 25, item 8: who an MCP connection is comes from what authenticated it (its token, the
// server's stdio user, or the one anonymous subject), never from the name the client gives
// itself. Every client here calls itself `claude-code` (or a name it wants to pass for).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import type { PermissionRule } from '@dogu/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer, type McpHttpEndpoint, McpError, type McpToken, serveHttp } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

const A = 'token-a-0123456789abcdef'
const B = 'token-b-0123456789abcdef'
const CI = 'token-ci-0123456789abcdef'
const CI_ROTATED = 'token-ci-rotated-0123456789'
const OWNER = 'token-owner-0123456789abcdef'

type Decision = 'once' | 'session' | 'always' | 'deny'

/** One app, MCP server and HTTP endpoint over a permission store that outlives it (a restart is a new Rig on the same file). */
class Rig {
  ctx!: Context
  server!: DoguMcpServer
  endpoint!: McpHttpEndpoint
  private clients: Client[] = []

  constructor(private store: string, private tokens: McpToken[], private rules: PermissionRule[] = [], private user?: string) {}

  async start() {
    this.ctx = new Context()
    guardLogs(this.ctx)
    await this.ctx.plugin(DoguPlugin, { audit: { storePath: `${this.store}.audit.jsonl` }, permissions: { storePath: this.store, rules: this.rules }, background: { storePath: `${this.store}.background.json` } })
    await this.ctx.plugin(demoTools as any)
    this.server = contextMcpServer(this.ctx as any, { user: this.user })
    this.endpoint = await serveHttp(this.server, { tokens: this.tokens })
    return this
  }

  /** A client that answers every approval with `answer`, and records what it was asked. */
  async connect(options: { name?: string; token?: string; answer: Decision; memory?: boolean }) {
    const asked: string[] = []
    const client = new Client({ name: options.name ?? 'claude-code', version: '1' }, { capabilities: { elicitation: { form: {} } } })
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message)
      return { action: 'accept', content: { decision: options.answer } }
    })
    if (options.memory) {
      // What stdio does: a transport connected without an identity.
      const [a, b] = InMemoryTransport.createLinkedPair()
      await this.server.connect(b)
      await client.connect(a)
    } else {
      const headers = options.token ? { authorization: `Bearer ${options.token}` } : undefined
      await client.connect(new StreamableHTTPClientTransport(this.endpoint.url, { requestInit: { headers } }))
    }
    this.clients.push(client)
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      return { status: (result._meta as any)['dogu.dev/result']?.status ?? 'ok', text: (result.content as any)[0]?.text as string, data: result.structuredContent as Record<string, unknown> }
    }
    return { client, asked, call, whoami: async () => (await call('whoami', {})).data }
  }

  async stop() {
    for (const client of this.clients.splice(0)) await client.close()
    await this.server?.close()
    await this.endpoint?.close()
    await this.ctx?.fiber.dispose()
  }
}

describe('MCP identity: the subject is what was authenticated, the client name only a label', () => {
  let dir: string
  let store: string
  const rigs: Rig[] = []
  const rig = async (...args: ConstructorParameters<typeof Rig> extends [string, ...infer R] ? R : never) => {
    const made = await new Rig(store, ...args).start()
    rigs.push(made)
    return made
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-identity-'))
    store = join(dir, 'permissions.json')
  })
  afterEach(async () => {
    for (const made of rigs.splice(0).reverse()) await made.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('who each connection is: a token\'s user, token:<name>, token:<fingerprint>, anonymous, the stdio user', async () => {
    const app = await rig([{ token: A }, { token: CI, name: 'ci' }, { token: OWNER, user: 'owner', authority: 4 }], [], 'me')
    const fingerprinted = await (await app.connect({ token: A, answer: 'deny' })).whoami()
    expect(fingerprinted.userId).toMatch(/^token:[0-9a-f]{16}$/)
    expect(String(fingerprinted.userId)).not.toContain(A.slice(0, 8))
    expect(fingerprinted.id).toMatch(/^mcp:claude-code:[0-9a-f-]{36}$/)
    expect(await (await app.connect({ token: CI, answer: 'deny' })).whoami()).toMatchObject({ userId: 'token:ci', authority: 1 })
    expect(await (await app.connect({ token: OWNER, name: 'anything', answer: 'deny' })).whoami()).toMatchObject({ userId: 'owner', authority: 4 })
    expect(await (await app.connect({ name: 'owner', answer: 'deny' })).whoami()).toMatchObject({ userId: 'anonymous', authority: 1 })
    expect(await (await app.connect({ name: 'owner', answer: 'deny', memory: true })).whoami()).toMatchObject({ userId: 'me', authority: 1 })
    // The fingerprint is the token's, whatever the client: another connection of A has the same.
    expect((await (await app.connect({ token: A, name: 'cursor', answer: 'deny' })).whoami()).userId).toBe(fingerprinted.userId)
  })

  it('an always answer on token A\'s claude-code: token B\'s claude-code and a tokenless claude-code are still asked; A is not, even after a restart', async () => {
    let app = await rig([{ token: A }, { token: B }])
    const a1 = await app.connect({ token: A, answer: 'always' })
    expect(await a1.call('notes', { text: 'first' })).toMatchObject({ status: 'ok', text: 'saved first' })
    expect(a1.asked).toHaveLength(1)

    const a2 = await app.connect({ token: A, answer: 'deny' })
    expect(await a2.call('notes', { text: 'again' })).toMatchObject({ status: 'ok', text: 'saved again' })
    expect(a2.asked).toEqual([])

    const b = await app.connect({ token: B, answer: 'deny' })
    expect(await b.call('notes', { text: 'spoof' })).toMatchObject({ status: 'denied' })
    expect(b.asked).toHaveLength(1)
    const anonymous = await app.connect({ answer: 'deny' })
    expect(await anonymous.call('notes', { text: 'spoof' })).toMatchObject({ status: 'denied' })
    expect(anonymous.asked).toHaveLength(1)
    const stdio = await app.connect({ answer: 'deny', memory: true })
    expect(await stdio.call('notes', { text: 'spoof' })).toMatchObject({ status: 'denied' })
    expect(stdio.asked).toHaveLength(1)

    // The grant is kept for A's subject, which a restart does not change: always means always.
    expect(JSON.parse(await readFile(store, 'utf8'))).toMatchObject({ grants: [{ scope: 'always', subject: { userId: expect.stringMatching(/^token:[0-9a-f]{16}$/), platform: 'mcp' } }] })
    await app.stop()
    rigs.splice(0)
    app = await rig([{ token: A }, { token: B }])
    const a3 = await app.connect({ token: A, name: 'another-client', answer: 'deny' })
    expect(await a3.call('notes', { text: 'after restart' })).toMatchObject({ status: 'ok' })
    expect(a3.asked).toEqual([])
    const b2 = await app.connect({ token: B, answer: 'deny' })
    expect(await b2.call('notes', { text: 'spoof' })).toMatchObject({ status: 'denied' })
    expect(b2.asked).toHaveLength(1)
  })

  it('a named token keeps its grants when its secret is rotated; the old secret is refused', async () => {
    let app = await rig([{ token: CI, name: 'ci' }])
    const ci = await app.connect({ token: CI, answer: 'always' })
    expect(await ci.call('notes', { text: 'x' })).toMatchObject({ status: 'ok' })
    await app.stop()
    rigs.splice(0)
    app = await rig([{ token: CI_ROTATED, name: 'ci' }])
    const rotated = await app.connect({ token: CI_ROTATED, answer: 'deny' })
    expect(await rotated.call('notes', { text: 'y' })).toMatchObject({ status: 'ok' })
    expect(rotated.asked).toEqual([])
    await expect(app.connect({ token: CI, answer: 'always' })).rejects.toThrow()
  })

  it('the anonymous subject is one, and shares grants with no named one', async () => {
    const app = await rig([{ token: A }], [], 'stdio')
    const first = await app.connect({ name: 'claude-code', answer: 'always' })
    expect(await first.call('notes', { text: 'x' })).toMatchObject({ status: 'ok' })
    // Every tokenless connection is that same subject, whatever it calls itself.
    const second = await app.connect({ name: 'cursor', answer: 'deny' })
    expect(await second.call('notes', { text: 'y' })).toMatchObject({ status: 'ok' })
    expect(second.asked).toEqual([])
    // Named ones are not covered by it.
    const token = await app.connect({ token: A, answer: 'deny' })
    expect(await token.call('notes', { text: 'z' })).toMatchObject({ status: 'denied' })
    expect(token.asked).toHaveLength(1)
    const stdio = await app.connect({ answer: 'deny', memory: true })
    expect(await stdio.call('notes', { text: 'z' })).toMatchObject({ status: 'denied' })
    expect(stdio.asked).toHaveLength(1)
  })

  it('users: rules match what was authenticated; a client naming itself after a user matches nothing', async () => {
    const rules: PermissionRule[] = [
      { permission: 'tool:notes', decision: 'allow', users: ['claude-code', 'mcp:claude-code'] },
      { permission: 'tool:deploy', decision: 'allow', users: ['mcp:owner'] },
    ]
    const app = await rig([{ token: A }, { token: OWNER, user: 'owner' }], rules)
    for (const options of [{ name: 'claude-code' }, { name: 'claude-code', token: A }, { name: 'claude-code', memory: true }]) {
      const spoof = await app.connect({ ...options, answer: 'deny' })
      expect(await spoof.call('notes', { text: 'x' }), JSON.stringify(options)).toMatchObject({ status: 'denied' })
      expect(spoof.asked).toHaveLength(1)
    }
    for (const options of [{ name: 'owner' }, { name: 'owner', token: A }, { name: 'owner', memory: true }]) {
      const spoof = await app.connect({ ...options, answer: 'deny' })
      expect(await spoof.call('deploy', { env: 'prod' }), JSON.stringify(options)).toMatchObject({ status: 'denied' })
      expect(spoof.asked).toHaveLength(1)
    }
    const owner = await app.connect({ token: OWNER, name: 'some-client', answer: 'deny' })
    expect(await owner.call('deploy', { env: 'prod' })).toMatchObject({ status: 'ok', text: 'deployed prod' })
    expect(owner.asked).toEqual([])
  })

  it('configurations that would blur subjects are refused', async () => {
    const ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: `${store}.audit.jsonl` }, permissions: { storePath: store }, background: { storePath: `${store}.background.json` } })
    const server = contextMcpServer(ctx as any, {})
    try {
      const refused = async (tokens: McpToken[], message: string) => {
        await expect(serveHttp(server, { tokens })).rejects.toSatisfy((error) => McpError.is(error, 'INVALID_OPTIONS') && (error as Error).message === message)
      }
      await refused([{ token: A, user: 'anonymous' }], 'http.tokens[0].user cannot be "anonymous": that is the connections without a token')
      await refused([{ token: A, name: 'ci' }, { token: B, name: 'ci' }], 'http.tokens[1].name "ci" is taken by another token')
      await refused([{ token: A, user: 'x' }, { token: A, user: 'y' }], 'http.tokens[1].token is listed twice')
      await refused([{ token: A, name: 'has space' }], 'http.tokens[0].name must match /^[a-zA-Z0-9._-]{1,64}$/')
      await refused([{ token: A, user: '' }], 'http.tokens[0].user must be a non-empty string')
      expect(() => contextMcpServer(ctx as any, { user: 'anonymous' })).toThrow('user cannot be "anonymous": that is the HTTP connections without a token')
    } finally {
      await server.close()
      await ctx.fiber.dispose()
    }
  })
})
