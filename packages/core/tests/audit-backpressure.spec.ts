// The audit queue under calls that never yield to the event loop (issue 44): records are
// written while the loop runs, and a store that cannot keep up does not grow the queue
// without end.
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AuditLog, type AuditRecord, type AuditStore, defineTool, JsonlAuditStore, PermissionEngine, ToolRegistry } from '../src'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-audit-pressure-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

function registryFor(log: AuditLog) {
  const registry = new ToolRegistry({ emit: (name, ...args: any[]) => { if (name === 'tools/call-end') log.onCallEnd(args[0], args[1]) } })
  registry.permissions = new PermissionEngine({ onDecision: (event) => log.onDecision(event) })
  registry.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'read ok' }))
  registry.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
  return registry
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean)

describe('the audit queue under a loop that never yields', () => {
  it('writes records to audit.jsonl while the loop runs, so the queue stays a batch or two deep', async () => {
    const file = join(dir, 'audit.jsonl')
    const log = new AuditLog({ store: new JsonlAuditStore(file), maxRecords: 100_000 })
    await log.ready
    const toolset = registryFor(log).toolset({ session: { id: 's1', userId: 'u1' } })
    let midway = 0
    for (let i = 0; i < 5_000; i++) {
      // Awaits settle in microtasks: timers and file callbacks never get a turn in here.
      await toolset.execute([{ id: `c${i}`, name: 'read', arguments: {} }])
      if (i === 2_499) midway = lines(file).length
    }
    expect(midway).toBeGreaterThanOrEqual(2_000)
    await log.stop()
    expect(lines(file)).toHaveLength(5_000)
  })

  it('keeps at most maxRecords queued for a store that cannot write meanwhile, early ones first, the approved deploy kept', async () => {
    const written: AuditRecord[] = []
    let release!: () => void
    const stalled = new Promise<void>((resolve) => { release = resolve })
    // A store whose writes wait for the event loop (a network database): none finishes in the loop.
    const store: AuditStore = { append: async (records) => { await stalled; written.push(...records) }, query: async () => written.slice().reverse(), prune: async () => 0 }
    const warnings: string[] = []
    const log = new AuditLog({ store, maxRecords: 500, logger: { debug() {}, warn: (...args: unknown[]) => { warnings.push(args.join(' ')) } } })
    await log.ready
    const engine = new PermissionEngine({ onDecision: (event) => log.onDecision(event) })
    engine.addAsker(() => ({ decision: 'allow', by: { id: 'ops', authority: 4 } }))
    const registry = registryFor(log)
    registry.permissions = engine
    const toolset = registry.toolset({ session: { id: 's1', userId: 'u1' } })
    await toolset.execute([{ id: 'd1', name: 'deploy', arguments: {} }])
    for (let i = 0; i < 3_000; i++) {
      await toolset.execute([{ id: `r${i}`, name: 'read', arguments: {} }])
      // A refusal nobody authorized: coalesced while it waits, and the first to go.
      await toolset.execute([{ id: `u${i}`, name: 'read', arguments: '{"broken' }])
    }
    release()
    await log.stop()
    // The first batch was taken before the store stalled; what waited behind it is bounded.
    expect(written.length).toBeLessThanOrEqual(500 + 200)
    expect(written.some((record) => record.callId === 'd1')).toBe(true)
    expect(written.filter((record) => record.early).length).toBeLessThan(written.length / 2)
    expect(warnings).toEqual([expect.stringMatching(/cannot keep up/)])
  })
})
