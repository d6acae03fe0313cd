import { type AuditFilter, type AuditRecord, defineTool, MemoryAuditStore, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { ConsoleApi, type ConsoleHost, MAX_AUDIT_PAGE } from '../src/console-api'
import { ConsoleAsker } from '../src/console-asker'
import { ConsoleError } from '../src/console-error'
import { ConsoleLog } from '../src/console-log'
import { startConsoleApp, until } from './console-app'

/** `n` records, oldest first, as the pipeline would have recorded them: tools, users and outcomes in turn. */
function records(n: number): AuditRecord[] {
  const tools = ['echo', 'deploy', 'read']
  const outcomes = ['ok', 'denied', 'error'] as const
  return Array.from({ length: n }, (_, i) => ({
    id: `aud_${String(i).padStart(4, '0')}`,
    // Several calls start in the same millisecond, and a later record may have started earlier.
    at: 1_000 + Math.floor(i / 3) * 10 - (i % 3 === 2 ? 15 : 0),
    endedAt: 1_000 + i * 10 + 5,
    tool: tools[i % 3],
    callId: `c${i}`,
    args: { i },
    caller: { sessionId: `s${i % 2}`, platform: 'discord', userId: i % 2 ? 'bob' : 'alice' },
    outcome: outcomes[i % 3],
    durationMs: 1,
  }))
}

/** A host-free console over `source`: nothing but the audit trail is used. */
async function api(source?: ConsoleHost['audit']) {
  return new ConsoleApi({
    registry: new ToolRegistry(),
    changeLogs: () => [],
    asker: new ConsoleAsker({ id: 'test', platform: 'test', authority: 4 }),
    log: new ConsoleLog(10),
    authority: 4,
    ...(source ? { audit: source } : {}),
  })
}

/** A memory store holding `n` records, and the filters it was asked with. */
async function store(n: number) {
  const memory = new MemoryAuditStore()
  await memory.append(records(n))
  const asked: AuditFilter[] = []
  return { asked, source: { query: (filter: AuditFilter) => (asked.push(filter), memory.query(filter)) } }
}

type Page = { records: AuditRecord[]; next?: string }
const ids = (page: Page) => page.records.map((record) => record.id)

/** The refusal `promise` ends with. */
async function refusal(promise: Promise<unknown>): Promise<ConsoleError> {
  const error = await promise.then(() => undefined, (error) => error)
  if (!ConsoleError.is(error)) throw new Error(`expected a ConsoleError, got ${error}`)
  return error
}

describe('audit.list', () => {
  it('is a read method: GET may call it', () => {
    expect(ConsoleApi.isRead('audit.list')).toBe(true)
    expect(ConsoleApi.methods()).toContain('audit.list')
  })

  it('answers the newest records first, 50 by default, with the cursor of the next page', async () => {
    const { source, asked } = await store(120)
    const page = await (await api(source)).handle('audit.list', {}) as Page
    expect(page.records).toHaveLength(50)
    expect(page.records[0].id).toBe('aud_0119')
    expect(page.records[49].id).toBe('aud_0070')
    expect(page.next).toBe('aud_0070')
    // One more than the page, to know whether there is a next one.
    expect(asked).toEqual([{ limit: 51 }])
  })

  it('pages through every record once, even when calls started out of order, and ends without a cursor', async () => {
    const { source } = await store(107)
    const console = await api(source)
    const seen: string[] = []
    let before: string | undefined
    let pages = 0
    do {
      const page = await console.handle('audit.list', { limit: 20, ...(before ? { before } : {}) }) as Page
      seen.push(...ids(page))
      before = page.next
      pages++
    } while (before)
    expect(pages).toBe(6)
    expect(seen).toEqual(records(107).reverse().map((record) => record.id))
  })

  it('keeps its place when new records come in between two pages', async () => {
    const memory = new MemoryAuditStore()
    const all = records(30)
    await memory.append(all.slice(0, 20))
    const console = await api(memory)
    const first = await console.handle('audit.list', { limit: 10 }) as Page
    await memory.append(all.slice(20))
    const second = await console.handle('audit.list', { limit: 10, before: first.next }) as Page
    expect(ids(second)).toEqual(all.slice(0, 10).reverse().map((record) => record.id))
    expect(second.next).toBeUndefined()
  })

  it('filters by user (id or platform:id), tool and outcome, one or several', async () => {
    const { source, asked } = await store(30)
    const console = await api(source)
    const bob = await console.handle('audit.list', { user: 'discord:bob', limit: 200 }) as Page
    expect(bob.records).toHaveLength(15)
    expect(bob.records.every((record) => record.caller.userId === 'bob')).toBe(true)
    expect(((await console.handle('audit.list', { user: 'alice' })) as Page).records).toHaveLength(15)
    expect(((await console.handle('audit.list', { user: 'telegram:alice' })) as Page).records).toEqual([])
    const deploys = await console.handle('audit.list', { tool: 'deploy', outcome: 'denied' }) as Page
    expect(deploys.records.map((record) => [record.tool, record.outcome])).toEqual(Array(10).fill(['deploy', 'denied']))
    expect(((await console.handle('audit.list', { tool: 'deploy', outcome: 'ok' })) as Page).records).toEqual([])
    const failed = await console.handle('audit.list', { outcome: ['denied', 'error'], user: 'bob', tool: 'read' }) as Page
    expect(ids(failed)).toEqual(['aud_0029', 'aud_0023', 'aud_0017', 'aud_0011', 'aud_0005'])
    expect(asked.at(-1)).toEqual({ outcome: ['denied', 'error'], user: 'bob', tool: 'read', limit: 51 })
    // A filtered page's cursor pages within the filter.
    const page = await console.handle('audit.list', { user: 'bob', limit: 4 }) as Page
    const next = await console.handle('audit.list', { user: 'bob', limit: 4, before: page.next }) as Page
    expect(ids(next)).toEqual(['aud_0021', 'aud_0019', 'aud_0017', 'aud_0015'])
  })

  it('refuses a bad filter with INVALID_PAYLOAD naming the field, before reading anything', async () => {
    const { source, asked } = await store(5)
    const console = await api(source)
    const bad: [unknown, RegExp][] = [
      [{ limit: MAX_AUDIT_PAGE + 1 }, /^audit\.list: \$\.limit expected number <= 200 but got 201$/],
      [{ limit: 0 }, /\$\.limit expected number >= 1/],
      [{ limit: 2.5 }, /\$\.limit/],
      [{ limit: '10' }, /\$\.limit expected number but got 10/],
      [{ outcome: 'failed' }, /\$\.outcome expected "ok" \| "error" \| "denied" \| "timed_out" \| "cancelled" \| "background" \| .* but got "failed"/],
      [{ outcome: [] }, /\$\.outcome/],
      [{ user: '' }, /\$\.user/],
      [{ user: 'x'.repeat(201) }, /\$\.user/],
      [{ tool: 42 }, /\$\.tool expected string but got 42/],
      [{ before: '' }, /\$\.before/],
    ]
    for (const [payload, message] of bad) {
      const error = await refusal(console.handle('audit.list', payload))
      expect(error.code, JSON.stringify(payload)).toBe('INVALID_PAYLOAD')
      expect(error.message).toMatch(message)
    }
    expect(asked).toEqual([])
  })

  it('says NOT_FOUND for a cursor that is not in the log (or not in the filter)', async () => {
    const { source } = await store(10)
    const console = await api(source)
    const error = await refusal(console.handle('audit.list', { before: 'aud_gone' }))
    expect(error.code).toBe('NOT_FOUND')
    expect(error.message).toBe('audit record aud_gone is not in the log for this filter (removed by retention?): load the newest records again')
    // aud_0001 is bob's: not a place in alice's records.
    expect((await refusal(console.handle('audit.list', { user: 'alice', before: 'aud_0001' }))).code).toBe('NOT_FOUND')
  })

  it('says UNAVAILABLE while no audit service is there, and reads it once it is (the host\'s getter)', async () => {
    let source: ConsoleHost['audit']
    const console = new ConsoleApi({
      registry: new ToolRegistry(),
      changeLogs: () => [],
      asker: new ConsoleAsker({ id: 'test', platform: 'test', authority: 4 }),
      log: new ConsoleLog(10),
      authority: 4,
      get audit() { return source },
    })
    const error = await refusal(console.handle('audit.list', {}))
    expect(error.code).toBe('UNAVAILABLE')
    expect(error.message).toBe('the audit service is not loaded')
    source = (await store(3)).source
    expect(ids(await console.handle('audit.list', {}) as Page)).toEqual(['aud_0002', 'aud_0001', 'aud_0000'])
  })
})

describe('audit.list on the Cordis console', () => {
  let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
  afterEach(async () => {
    await app?.dispose()
    app = undefined
  })

  it('reads ctx.audit: the console\'s own calls, newest first, with secret fields as ••••', async () => {
    app = await startConsoleApp()
    const TOKEN = 'sk-audit-1a2b3c4d'
    const args = Schema.object({ user: Schema.string().required(), token: Schema.string().role('secret').required() })
    app.ctx.plugin({
      name: 'secret-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'login',
          description: 'Log in with a token',
          args,
          traits: { effect: 'read' },
          run: ({ token }) => (token === TOKEN ? 'in' : 'wrong token'),
        }))
      },
    })
    await until(async () => (await app!.send('tools.list')).body.some((tool: any) => tool.name === 'login'), 'the tool')
    expect((await app.send('call', { tool: 'echo', args: { text: 'hi' }, sessionId: 's1', userId: 'alice' })).body.result.status).toBe('ok')
    expect((await app.send('call', { tool: 'login', args: { user: 'bob', token: TOKEN }, sessionId: 's1', userId: 'bob' })).body.result.content).toBe('in')
    const { status, body } = await app.send('audit.list', {})
    expect(status).toBe(200)
    expect(body.next).toBeUndefined()
    expect(body.records.map((record: AuditRecord) => [record.tool, record.caller.platform, record.caller.userId, record.outcome])).toEqual([
      ['login', 'webui', 'bob', 'ok'],
      ['echo', 'webui', 'alice', 'ok'],
    ])
    expect(body.records[0].args).toEqual({ user: 'bob', token: '••••' })
    expect(JSON.stringify(body)).not.toContain(TOKEN)
    expect((await app.send('audit.list', { user: 'webui:alice' })).body.records.map((record: AuditRecord) => record.tool)).toEqual(['echo'])
    const refused = await app.send('audit.list', { limit: 1000 })
    expect(refused).toEqual({ status: 400, body: { error: { code: 'INVALID_PAYLOAD', message: 'audit.list: $.limit expected number <= 200 but got 1000' } } })
  })
})
