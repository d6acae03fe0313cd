import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  AuditLog,
  type AuditRecord,
  type AuditStore,
  defineTool,
  JsonlAuditStore,
  MemoryAuditStore,
  type ModelToolCall,
  PermissionEngine,
  type PermissionEngineOptions,
  type Session,
  ToolRegistry,
} from '../src'

// Issue 43, item 4: calls that nobody authorized (an unknown tool, bad arguments, a
// permission() that throws) pass no permission check and no quota. Their records must not
// push out the record of a call that was authorized or asked about.

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-audit-evict-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

function setup(store: AuditStore, permissions: PermissionEngineOptions = {}, maxRecords = 50) {
  const log = new AuditLog({ store, maxRecords })
  const engine = new PermissionEngine({ onDecision: (event) => log.onDecision(event), ...permissions })
  const registry = new ToolRegistry({ emit: (name, ...args: any[]) => { if (name === 'tools/call-end') log.onCallEnd(args[0], args[1]) } })
  registry.permissions = engine
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: Schema.object({ env: Schema.string().required() }),
    permission: (args) => ({ name: 'deploy:run', target: args.env }),
    traits: { effect: 'exec' },
    run: async (args) => `deployed ${args.env}`,
  }))
  registry.define(defineTool({
    name: 'picky',
    description: 'A tool whose permission() refuses some arguments by throwing',
    args: Schema.object({ path: Schema.string().required() }),
    permission: (args) => {
      if (args.path.startsWith('/')) throw new Error(`${args.path} is outside the workspace`)
      return { name: 'picky', target: args.path }
    },
    traits: { effect: 'read' },
    run: () => 'ok',
  }))
  // Parallel: the calls of a batch are decided before the first has ended.
  registry.define(defineTool({
    name: 'ship',
    description: 'Ship',
    args: Schema.object({ env: Schema.string().required(), early: Schema.boolean() }),
    permission: (args) => ({ name: 'deploy:run', target: args.env }),
    traits: { effect: 'exec', parallel: true },
    run: async (args) => `shipped ${args.env}`,
  }))
  engine.addAsker(() => ({ decision: 'allow', by: { id: 'a1', platform: 'discord', authority: 4 }, via: 'button' }))
  const toolset = registry.toolset({ session: user })
  const batch = (calls: ModelToolCall[]) => toolset.execute(calls)
  return { log, engine, batch }
}

const unknownCalls = (n: number, name = (i: number) => `nope_${i}`): ModelToolCall[] =>
  Array.from({ length: n }, (_, i) => ({ id: `u${i}`, name: name(i), arguments: {} }))

const stores: Record<string, () => AuditStore> = {
  memory: () => new MemoryAuditStore(),
  jsonl: () => new JsonlAuditStore(join(dir, 'audit.jsonl')),
}

const approvedDeploy = (records: AuditRecord[]) => records.find((record) => record.tool === 'deploy' && record.ask?.decision === 'allow')

for (const [kind, make] of Object.entries(stores)) {
  describe(`audit evidence on the ${kind} store`, () => {
    it('keeps an approved deploy\'s record through one batch of 120 calls to unknown tools, which is one record with its count', async () => {
      const { log, batch } = setup(make())
      expect((await batch([{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }]))[0].status).toBe('ok')
      await log.flush()
      const results = await batch(unknownCalls(120))
      expect(results.every((result) => result.code === 'unknown_tool')).toBe(true)
      const records = await log.query()
      expect(approvedDeploy(records)).toMatchObject({ callId: 'd1', decided: { kind: 'default', effect: 'exec' }, ask: { ended: 'answer', decision: 'allow', via: 'button' } })
      // 120 calls to 120 different names: one record, the first call's, with the count.
      const early = records.filter((record) => record.code === 'unknown_tool')
      expect(early).toHaveLength(1)
      expect(early[0]).toMatchObject({ tool: 'nope_0', callId: 'u0', early: true, count: 120, outcome: 'error', caller: { sessionId: 's1', userId: 'u1' } })
      expect(early[0].decided).toBeUndefined()
      await log.stop()
    })

    it('keeps it when the refusals come in many writes (no coalescing to lean on): they are pruned first', async () => {
      const { log, batch } = setup(make())
      await batch([{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }])
      // Each round is written on its own, so each is a record of its own: 130 records for 50 places.
      for (let round = 0; round < 130; round++) {
        const kind = round % 3
        await batch(kind === 0 ? unknownCalls(1) : kind === 1 ? [{ id: `b${round}`, name: 'deploy', arguments: '{"env":' }] : [{ id: `p${round}`, name: 'picky', arguments: { path: '/etc/shadow' } }])
        await log.flush()
      }
      const records = await log.query()
      expect(approvedDeploy(records)).toMatchObject({ callId: 'd1' })
      // The newest refusals are what is kept beside it; every kind of refusal before authorization counts.
      expect(new Set(records.filter((record) => record.early).map((record) => record.code))).toEqual(new Set(['unknown_tool', 'invalid_arguments', 'tool_error']))
      await log.stop()
    })

    it('drops an authorized record only once no refusal is left, oldest first', async () => {
      const { log, batch } = setup(make(), { mode: 'trust' }, 5)
      await batch(unknownCalls(3))
      await log.flush()
      for (let i = 0; i < 7; i++) {
        await batch([{ id: `d${i}`, name: 'deploy', arguments: { env: `e${i}` } }])
        await log.flush()
      }
      const records = await log.query()
      expect(records.map((record) => record.callId)).toEqual(['d6', 'd5', 'd4', 'd3', 'd2'])
      await log.stop()
    })
  })
}

describe('audit evidence in a JSON Lines file across rotations and restarts', () => {
  it('carries an authorized record over a rotation that a flood of refusals triggers, and a new log reads it back', async () => {
    const file = join(dir, 'audit.jsonl')
    const { log, batch } = setup(new JsonlAuditStore(file), {}, 10)
    await batch([{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }])
    await log.flush()
    // 45 separate writes of one refusal each: the file rotates several times.
    for (let round = 0; round < 45; round++) {
      await batch(unknownCalls(1))
      await log.flush()
    }
    expect(approvedDeploy(await log.query())).toMatchObject({ callId: 'd1' })
    await log.stop()
    const reader = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 10 })
    const records = await reader.query()
    expect(records).toHaveLength(10)
    expect(approvedDeploy(records)).toMatchObject({ callId: 'd1' })
    await reader.stop()
  })

  it('does not take a model\'s argument named "early" for the mark, in the file or in a new log reading it', async () => {
    const file = join(dir, 'audit.jsonl')
    const { log, batch } = setup(new JsonlAuditStore(file), { mode: 'trust' }, 4)
    const marked = { id: 'x', name: 'ship', arguments: { env: 'prod', early: true } }
    await batch([marked])
    await log.flush()
    for (let round = 0; round < 12; round++) {
      await batch(unknownCalls(1))
      await log.flush()
    }
    await log.stop()
    const reader = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 4 })
    expect((await reader.query()).find((record) => record.callId === 'x')).toBeDefined()
    await reader.stop()
  })
})

describe('audit records keyed by the pipeline\'s own call, not the model\'s id', () => {
  it('gives two calls of one batch with the same id a record each, with its own decision', async () => {
    const { log, batch } = setup(new MemoryAuditStore(), { rules: [{ permission: 'deploy:run', target: 'staging', decision: 'allow', name: 'staging ok' }] })
    const results = await batch([
      { id: 'dup', name: 'ship', arguments: { env: 'staging' } },
      { id: 'dup', name: 'ship', arguments: { env: 'prod' } },
    ])
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok'])
    const records = await log.query()
    expect(records).toHaveLength(2)
    const staging = records.find((record) => (record.args as { env: string }).env === 'staging')!
    const prod = records.find((record) => (record.args as { env: string }).env === 'prod')!
    expect(staging).toMatchObject({ callId: 'dup', decided: { kind: 'rule', name: 'staging ok', decision: 'allow' } })
    expect(staging.ask).toBeUndefined()
    expect(prod).toMatchObject({ callId: 'dup', decided: { kind: 'default', effect: 'exec' }, ask: { ended: 'answer', decision: 'allow' } })
    await log.stop()
  })

  it('keeps a denial apart from an allowed call of the same id', async () => {
    const { log, batch } = setup(new MemoryAuditStore(), { rules: [
      { permission: 'deploy:run', target: 'staging', decision: 'allow' },
      { permission: 'deploy:run', target: 'prod', decision: 'deny', name: 'no prod' },
    ] })
    await batch([
      { id: 'dup', name: 'ship', arguments: { env: 'prod' } },
      { id: 'dup', name: 'ship', arguments: { env: 'staging' } },
    ])
    const records = await log.query()
    expect(records.map((record) => [record.outcome, record.decided?.kind === 'rule' ? record.decided.decision : undefined]).sort()).toEqual([['denied', 'deny'], ['ok', 'allow']])
    await log.stop()
  })
})
