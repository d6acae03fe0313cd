import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  AuditLog,
  type AuditLogOptions,
  type AuditRecord,
  defineTool,
  JsonlAuditStore,
  MemoryAuditStore,
  PermissionEngine,
  type PermissionEngineOptions,
  type Session,
  ToolRegistry,
} from '../src'
import { canonicalJson } from '../src/audit'

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }
const admin: Session = { id: 's2', userId: 'a1', platform: 'discord', authority: 4 }

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-audit-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

/** A registry gated by a permission engine whose decisions, and whose calls' ends, feed an audit log. */
function setup(options: { permissions?: PermissionEngineOptions; audit?: AuditLogOptions } = {}) {
  const warnings: string[] = []
  const logger = { debug() {}, warn: (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' ')) } }
  const log = new AuditLog({ logger, ...options.audit })
  const engine = new PermissionEngine({ onDecision: (event) => log.onDecision(event), ...options.permissions })
  const registry = new ToolRegistry({ emit: (name, ...args: any[]) => { if (name === 'tools/call-end') log.onCallEnd(args[0], args[1]) } })
  registry.permissions = engine
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: Schema.object({ env: Schema.string().required(), token: Schema.string() }),
    permission: (args) => ({ name: 'deploy:run', target: args.env }),
    traits: { effect: 'exec' },
    run: async (args) => `deployed ${args.env}`,
  }))
  registry.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'read ok' }))
  registry.define(defineTool({ name: 'slow', description: 'Slow', traits: { effect: 'read' }, run: (_, call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve('stopped'))) }))
  const call = async (name: string, args: Record<string, unknown> = {}, session = user, signal?: AbortSignal) =>
    (await registry.toolset({ session }).execute([{ id: `c-${name}-${Math.random()}`, name, arguments: args }], signal ? { signal } : {}))[0]
  return { log, engine, registry, call, warnings }
}

describe('AuditLog from the pipeline', () => {
  it('records an allowed call: the rule and its origin, the caller, the outcome and the time', async () => {
    const { log, call } = setup({ permissions: { rules: [{ permission: 'deploy:run', target: 'staging', decision: 'allow', name: 'staging ok' }] } })
    const result = await call('deploy', { env: 'staging' })
    expect(result.status).toBe('ok')
    const [record] = await log.query()
    expect(record).toMatchObject({
      tool: 'deploy',
      callId: result.id,
      args: { env: 'staging' },
      caller: { sessionId: 's1', userId: 'u1', platform: 'discord', authority: 1 },
      decided: { kind: 'rule', origin: 'config.rules[0]', decision: 'allow', permission: 'deploy:run', name: 'staging ok' },
      outcome: 'ok',
      durationMs: result.durationMs,
    })
    expect(record.id).toMatch(/^aud_/)
    expect(record.ask).toBeUndefined()
    expect(record.endedAt).toBeGreaterThanOrEqual(record.at)
  })

  it('records a denied call with the deny rule and the reason, and a read by its default', async () => {
    const { log, call } = setup({ permissions: { rules: [{ permission: 'deploy:run', target: 'prod', decision: 'deny' }] } })
    await call('deploy', { env: 'prod' })
    await call('read')
    const [read, denied] = await log.query()
    expect(denied).toMatchObject({ tool: 'deploy', outcome: 'denied', code: 'permission_denied', decided: { kind: 'rule', decision: 'deny', origin: 'config.rules[0]' } })
    expect(denied.reason).toMatch(/denies it/)
    expect(read).toMatchObject({ tool: 'read', outcome: 'ok', decided: { kind: 'default', effect: 'read' } })
  })

  it('records an answered ask: who could answer, who did, how, the scope, and the wait', async () => {
    const { log, engine, call } = setup()
    engine.addAsker(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      return { decision: 'allow', scope: 'session', by: { id: 'a1', platform: 'discord', authority: 4 }, via: 'button' }
    })
    const result = await call('deploy', { env: 'prod' })
    expect(result.status).toBe('ok')
    const [record] = await log.query()
    expect(record.decided).toEqual({ kind: 'default', effect: 'exec' })
    expect(record.ask).toMatchObject({
      ended: 'answer',
      decision: 'allow',
      by: { id: 'a1', platform: 'discord', authority: 4 },
      via: 'button',
      scope: 'session',
      approvers: { userId: 'u1', platform: 'discord', authority: 4 },
    })
    expect(record.ask!.requestId).toMatch(/^perm_/)
    expect(record.ask!.grantId).toBe(engine.grants()[0].id)
    expect(record.waitMs).toBe(result.waitMs)
    expect(record.waitMs).toBeGreaterThan(0)
    // The next call runs on the session grant: that grant decided it.
    await call('deploy', { env: 'prod' })
    const [next] = await log.query({ limit: 1 })
    expect(next.decided).toEqual({ kind: 'grant', id: engine.grants()[0].id, scope: 'session', by: 'discord:a1' })
    expect(next.ask).toBeUndefined()
  })

  it('records a declined ask, an ask that timed out, and one nobody could be asked', async () => {
    const declined = setup()
    declined.engine.addAsker(() => ({ decision: 'deny', by: 'u1', reason: 'not now', via: 'text' }))
    await declined.call('deploy', { env: 'prod' })
    expect((await declined.log.query())[0]).toMatchObject({ outcome: 'denied', ask: { ended: 'answer', decision: 'deny', by: { id: 'u1' }, via: 'text', scope: 'once' } })
    expect((await declined.log.query())[0].reason).toMatch(/not now/)

    const timed = setup({ permissions: { askTimeout: 20 } })
    timed.engine.addAsker(() => {})
    await timed.call('deploy', { env: 'prod' })
    const [record] = await timed.log.query()
    expect(record).toMatchObject({ outcome: 'denied', ask: { ended: 'timeout', decision: 'deny' } })
    expect(record.ask!.by).toBeUndefined()
    expect(record.ask!.approvers).toBeDefined()
    expect(record.reason).toMatch(/timed out/)

    const nobody = setup()
    await nobody.call('deploy', { env: 'prod' })
    expect((await nobody.log.query())[0]).toMatchObject({ outcome: 'denied', ask: { ended: 'no-asker', decision: 'deny' } })
  })

  it('records a call cancelled while it waited for an answer, and one cancelled while it ran', async () => {
    const { log, engine, call } = setup()
    engine.addAsker(() => {})
    const waiting = new AbortController()
    const asked = call('deploy', { env: 'prod' }, user, waiting.signal)
    await new Promise((resolve) => setTimeout(resolve, 5))
    waiting.abort()
    expect((await asked).status).toBe('cancelled')
    const running = new AbortController()
    const ran = call('slow', {}, user, running.signal)
    await new Promise((resolve) => setTimeout(resolve, 5))
    running.abort()
    expect((await ran).status).toBe('cancelled')
    const [slow, deploy] = await log.query()
    expect(deploy).toMatchObject({ tool: 'deploy', outcome: 'cancelled', ask: { ended: 'cancelled', decision: 'deny' } })
    expect(slow).toMatchObject({ tool: 'slow', outcome: 'cancelled', code: 'cancelled', decided: { kind: 'default', effect: 'read' } })
  })

  it('records calls that never reached the gate, and a denial no call carried', async () => {
    const { log, engine, call } = setup()
    await call('nope')
    engine.authorize({ session: admin, permission: { name: 'deploy:run', target: 'prod' }, effect: 'exec', tool: 'deploy', args: {} })
    engine.setMode(admin.id, 'readOnly')
    engine.authorize({ session: admin, permission: { name: 'deploy:run', target: 'prod' }, effect: 'exec', tool: 'deploy', args: { env: 'prod' } })
    const [probe, unknown] = await log.query()
    expect(unknown).toMatchObject({ tool: 'nope', outcome: 'error', code: 'unknown_tool' })
    expect(unknown.decided).toBeUndefined()
    // The ask above is a probe, not recorded; the mode's denial is.
    expect(probe).toMatchObject({ tool: 'deploy', callId: '', outcome: 'denied', decided: { kind: 'mode', mode: 'readOnly' }, caller: { userId: 'a1' }, args: { env: 'prod' } })
    expect(await log.query()).toHaveLength(2)
  })
})

describe('AuditLog arguments', () => {
  const hash = (value: unknown) => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`

  it('hashes the canonical JSON of the arguments of the tools named, or of all', async () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"f":2}]},"b":1}')
    const named = setup({ audit: { hashArguments: ['deploy'] }, permissions: { mode: 'trust' } })
    await named.call('deploy', { token: 'hunter2', env: 'prod' })
    await named.call('read')
    const [read, deploy] = await named.log.query()
    expect(deploy.args).toBeUndefined()
    expect(deploy.argsHash).toBe(hash({ env: 'prod', token: 'hunter2' }))
    expect(JSON.stringify(deploy)).not.toContain('hunter2')
    expect(read.args).toEqual({})
    const all = setup({ audit: { hashArguments: true } })
    await all.call('read')
    expect((await all.log.query())[0]).toMatchObject({ argsHash: hash({}) })
  })

  it('hashes arguments longer than maxArgumentsLength, and refuses a bad hashArguments', async () => {
    const { log, call } = setup({ audit: { maxArgumentsLength: 20 }, permissions: { mode: 'trust' } })
    await call('deploy', { env: 'x'.repeat(40) })
    expect((await log.query())[0].argsHash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(() => new AuditLog({ hashArguments: 'yes' as never })).toThrow(/hashArguments/)
  })
})

const record = (i: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  id: `aud_${i}`, at: 1_000 + i, endedAt: 1_000 + i, tool: i % 2 ? 'odd' : 'even', callId: `c${i}`,
  caller: { sessionId: `s${i % 3}`, userId: `u${i % 3}`, platform: 'discord' }, outcome: i % 4 ? 'ok' : 'denied', durationMs: 1, ...extra,
})

describe('AuditLog queries, batching and retention', () => {
  it('filters by user, tool, outcome and time, newest first, with a limit', async () => {
    const log = new AuditLog()
    for (let i = 0; i < 12; i++) log.record(record(i))
    expect((await log.query()).map((r) => r.id).slice(0, 3)).toEqual(['aud_11', 'aud_10', 'aud_9'])
    expect((await log.query({ user: 'u1' })).map((r) => r.id)).toEqual(['aud_10', 'aud_7', 'aud_4', 'aud_1'])
    expect((await log.query({ user: 'discord:u1', tool: 'odd' })).map((r) => r.id)).toEqual(['aud_7', 'aud_1'])
    expect((await log.query({ user: 'qq:u1' }))).toEqual([])
    expect((await log.query({ outcome: 'denied' })).map((r) => r.id)).toEqual(['aud_8', 'aud_4', 'aud_0'])
    expect((await log.query({ outcome: ['denied'], since: 1_004, limit: 1 })).map((r) => r.id)).toEqual(['aud_8'])
    expect((await log.query({ since: 1_010 })).map((r) => r.id)).toEqual(['aud_11', 'aud_10'])
    expect((await log.export({ tool: 'even', since: 1_006 })).map((r) => r.id)).toEqual(['aud_6', 'aud_8', 'aud_10'])
    await log.stop()
  })

  it('writes in batches off the call\'s path, by time and by count, and everything on stop', async () => {
    const appends: number[] = []
    const store = new MemoryAuditStore()
    const append = store.append.bind(store)
    store.append = async (records) => { appends.push(records.length); return append(records) }
    const log = new AuditLog({ store, flushInterval: 30, batchSize: 5 })
    await log.ready
    log.record(record(1))
    log.record(record(2))
    expect(appends).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(appends).toEqual([2])
    for (let i = 0; i < 5; i++) log.record(record(10 + i))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(appends).toEqual([2, 5])
    log.record(record(20))
    await log.stop()
    expect(appends).toEqual([2, 5, 1])
    log.record(record(21))
    expect(await store.query({})).toHaveLength(8)
  })

  it('keeps records a failed write could not store, and writes them with the next', async () => {
    const store = new MemoryAuditStore()
    const append = store.append.bind(store)
    let fail = true
    store.append = async (records) => { if (fail) throw new Error('disk full'); return append(records) }
    const warnings: string[] = []
    const log = new AuditLog({ store, logger: { debug() {}, warn: (...args: unknown[]) => { warnings.push(args.join(' ')) } } })
    log.record(record(1))
    await log.flush()
    expect(warnings).toEqual([expect.stringMatching(/could not write .*disk full/)])
    fail = false
    log.record(record(2))
    expect((await log.query()).map((r) => r.id)).toEqual(['aud_2', 'aud_1'])
    expect(warnings[1]).toMatch(/written again/)
    await log.stop()
  })

  it('prunes beyond maxRecords and maxAgeMs, in the store', async () => {
    const store = new MemoryAuditStore()
    const now = Date.now()
    await store.append([record(1, { at: now - 10_000 }), record(2, { at: now - 10 }), record(3, { at: now - 5 })])
    const log = new AuditLog({ store, maxAgeMs: 1_000, maxRecords: 10 })
    await log.ready
    expect((await log.query()).map((r) => r.id)).toEqual(['aud_3', 'aud_2'])
    const few = new AuditLog({ store: new MemoryAuditStore(), maxRecords: 3 })
    for (let i = 0; i < 7; i++) few.record(record(i, { at: now }))
    await few.flush()
    expect((await few.query()).map((r) => r.id)).toEqual(['aud_6', 'aud_5', 'aud_4'])
    await log.stop()
    await few.stop()
  })

  it('switches stores under the living log: queued records go to the new one', async () => {
    const first = new MemoryAuditStore()
    const second = new MemoryAuditStore()
    const log = new AuditLog({ store: first })
    log.record(record(1))
    await log.flush()
    log.record(record(2))
    await log.useStore(second)
    expect((await first.query({})).map((r) => r.id)).toEqual(['aud_1'])
    expect((await log.query()).map((r) => r.id)).toEqual(['aud_2'])
    expect(() => log.useStore({} as never)).toThrow(/append/)
    await log.stop()
  })
})

describe('JsonlAuditStore', () => {
  it('appends lines, survives a new log on the same file, and rotates the file at maxRecords', async () => {
    const file = join(dir, 'nested', 'audit.jsonl')
    const lines = async (path: string) => (await readFile(path, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).length
    const log = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 4 })
    for (let i = 0; i < 3; i++) log.record(record(i, { at: Date.now() }))
    await log.stop()
    expect(await lines(file)).toBe(3)
    const again = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 4 })
    expect((await again.query()).map((r) => r.id)).toEqual(['aud_2', 'aud_1', 'aud_0'])
    for (let i = 3; i < 6; i++) again.record(record(i, { at: Date.now() }))
    await again.stop()
    // Past maxRecords after the write, the file was renamed audit.jsonl.1 (nothing rewritten),
    // and a new one begins; readers see the four the retention keeps.
    expect(await lines(`${file}.1`)).toBe(6)
    expect(await lines(file)).toBe(0)
    const reader = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 4 })
    expect((await reader.query()).map((r) => r.id)).toEqual(['aud_5', 'aud_4', 'aud_3', 'aud_2'])
    for (let i = 6; i < 8; i++) reader.record(record(i, { at: Date.now() }))
    expect((await reader.query()).map((r) => r.id)).toEqual(['aud_7', 'aud_6', 'aud_5', 'aud_4'])
    expect((await reader.export()).map((r) => r.id)).toEqual(['aud_4', 'aud_5', 'aud_6', 'aud_7'])
    await reader.stop()
  })

  it('rotating over a full .1 replaces it whole, and the replaced file is deleted in the background', async () => {
    const folder = join(dir, 'rotations')
    const file = join(folder, 'audit.jsonl')
    const log = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 2 })
    // Three rotations: the second and third replace a .1 that holds records.
    for (let i = 0; i < 9; i++) {
      log.record(record(i, { at: Date.now() }))
      await log.flush()
    }
    await log.stop()
    await expect.poll(async () => (await readdir(folder)).sort()).toEqual(['audit.jsonl', 'audit.jsonl.1'])
    const reader = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 2 })
    expect((await reader.query()).map((r) => r.id)).toEqual(['aud_8', 'aud_7'])
    await reader.stop()
  })

  it('a replaced .1 that a stop left behind is deleted when the file is next opened, and only that', async () => {
    const folder = join(dir, 'left-behind')
    const file = join(folder, 'audit.jsonl')
    await mkdir(folder, { recursive: true })
    await writeFile(`${file}.discarded.0`, '{"id":"old"}\n')
    await writeFile(`${file}.discarded.7`, '{"id":"old"}\n')
    await writeFile(join(folder, 'other.jsonl.discarded.0'), 'not ours\n')
    const log = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 2 })
    await log.ready
    await expect.poll(async () => (await readdir(folder)).sort()).toEqual(['other.jsonl.discarded.0'])
    await log.stop()
  })

  it('writes each record as exactly its JSON, shared caller and decider objects included', async () => {
    const file = join(dir, 'audit.jsonl')
    const store = new JsonlAuditStore(file)
    const caller = { sessionId: 's "1"', platform: 'discord', userId: 'u\n1' }
    const decided = { kind: 'rule' as const, id: 'r1', origin: 'config.rules[0]', decision: 'allow' as const, permission: 'tool:x', name: '上线' }
    const records = [
      { ...record(1, { at: 1 }), caller, decided, args: { a: [1, null, 'x'], b: { c: true } }, waitMs: 0, durationMs: Number.NaN, code: undefined },
      { ...record(2, { at: 2 }), caller, decided, args: '••••', reason: 'line\u2028sep' },
    ] as unknown as AuditRecord[]
    await store.append(records)
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean)).toEqual(records.map((r) => JSON.stringify(r)))
  })

  it('deletes a rotated file wholly past maxAgeMs, and rewrites the live one only when far past it', async () => {
    const file = join(dir, 'audit.jsonl')
    const day = 86_400_000
    const now = Date.now()
    const store = new JsonlAuditStore(file)
    await store.append([record(1, { at: now - 10 * day }), record(2, { at: now - 9 * day })])
    // Rotated at 2 records; nothing is old yet by a 30-day retention.
    expect(await store.prune({ maxRecords: 2, maxAgeMs: 30 * day }, now)).toBe(0)
    await store.append([record(3, { at: now - 5 * day }), record(4, { at: now })])
    // By a 7-day retention the rotated file is wholly past it: deleted. The live file's oldest
    // is 5 days old, within it: kept as it is.
    expect(await store.prune({ maxRecords: 10, maxAgeMs: 7 * day }, now)).toBe(2)
    expect((await store.query({})).map((r) => r.id)).toEqual(['aud_4', 'aud_3'])
    // By a 2-day retention, 5 days is more than a tenth past: the live file is rewritten.
    expect(await store.prune({ maxRecords: 10, maxAgeMs: 2 * day }, now)).toBe(1)
    expect((await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['aud_4'])
  })

  it('skips and reports a torn last line, and appends after it on a fresh line', async () => {
    const file = join(dir, 'audit.jsonl')
    await writeFile(file, JSON.stringify(record(1, { at: Date.now() })) + '\n' + '{"id":"aud_2","at":')
    const warnings: string[] = []
    const store = new JsonlAuditStore(file, { logger: { debug() {}, warn: (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' ')) } } })
    expect((await store.query({})).map((r) => r.id)).toEqual(['aud_1'])
    expect(warnings).toEqual([expect.stringMatching(/torn last line/)])
    await store.append([record(3, { at: Date.now() })])
    expect((await store.query({})).map((r) => r.id)).toEqual(['aud_3', 'aud_1'])
    // The same bad line is reported once; pruning drops it.
    expect(warnings).toHaveLength(1)
    await store.prune({ maxRecords: 10, maxAgeMs: 60_000 })
    expect((await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['aud_1', 'aud_3'])
  })

  it('takes appends from two stores on one file (O_APPEND)', async () => {
    const file = join(dir, 'audit.jsonl')
    const a = new JsonlAuditStore(file)
    const b = new JsonlAuditStore(file)
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).append([record(i, { at: Date.now() }), record(100 + i, { at: Date.now() })])))
    expect(await a.query({})).toHaveLength(40)
    await appendFile(file, '')
  })
})
