// The Koishi host's events: Dogu's own audit log takes every call through a tap, so cordis 3
// dispatches `tools/call-end` and `permissions/decision` only when a plugin listens; a
// plugin that listens still gets every event, with the same payloads, in the same order.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DecisionEvent, Session as DoguSession, ToolResult } from '@dogu/core'
import { App } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as Dogu from '../src'
import { eventEmitter, listenerTable, tapEvent, unproxiedLifecycle } from '../src/koishi-events'
import { echoTool } from './echo-tool'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const alice: DoguSession = { id: 'mock:room', platform: 'mock', channelId: 'room', userId: 'alice' }

async function bot() {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-events-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const app = new App()
  app.baseDir = dir
  const guard = guardLogs(app)
  await app.start()
  app.plugin(Dogu, {
    approvals: { enabled: false },
    notices: { enabled: false },
    permissions: { syncInterval: 3_600_000 },
    background: { syncInterval: 3_600_000 },
  })
  echoTool(app)
  await app.lifecycle.flush()
  cleanups.push(() => app.stop())
  return Object.assign(app, { guard })
}

describe('Koishi events: the audit log taps, plugins listen', () => {
  it('records a call while no plugin listens, without cordis 3 dispatching its events', async () => {
    const app = await bot()
    const table = listenerTable(unproxiedLifecycle(app))!
    // Nobody but Dogu's audit log wants them: the lifecycle has no listener to run.
    expect(table['tools/call-end'] ?? []).toHaveLength(0)
    expect(table['permissions/decision'] ?? []).toHaveLength(0)
    const [result] = await app.tools.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }], { session: alice })
    expect(result.status).toBe('ok')
    const [record] = await app.audit.query({ tool: 'echo' })
    expect(record).toMatchObject({ callId: 'c1', outcome: 'ok', decided: { kind: 'default' } })
  })

  it('a plugin listening gets call-start, the decision and call-end in order, with the call and its result', async () => {
    const app = await bot()
    const seen: string[] = []
    let ended: ToolResult | undefined
    let decision: DecisionEvent | undefined
    app.on('tools/call-start', (info) => { seen.push(`start ${info.id}`) })
    app.on('permissions/decision', (event) => { seen.push(`decision ${event.phase} ${event.decision}`); decision = event })
    app.on('tools/call-end', (info, result) => { seen.push(`end ${info.id} ${result.status}`); ended = result })
    const [result] = await app.tools.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }], { session: alice })
    expect(seen).toEqual(['start c1', 'decision authorize allow', 'end c1 ok'])
    expect(ended).toEqual(result)
    expect(decision).toMatchObject({ request: { tool: 'echo', callId: 'c1', session: alice }, source: { kind: 'default' } })
    // The audit log still has the call, decided by the same source.
    const [record] = await app.audit.query({ tool: 'echo' })
    expect(record).toMatchObject({ callId: 'c1', decided: { kind: 'default' } })
  })

  it('a tap gets what a listener gets, goes with its remover, and a throwing one breaks no emit', async () => {
    const app = await bot()
    app.guard.expect('[app] Error: tap failed')
    const emit = eventEmitter(app)
    const seen: unknown[][] = []
    const errors: unknown[] = []
    app.on('internal/error', (error) => { errors.push(error) })
    const untap = tapEvent(app, 'dogu/test', (...args: unknown[]) => { seen.push(['tap', ...args]) })
    const bad = tapEvent(app, 'dogu/test', () => { throw new Error('tap failed') })
    expect(emit.listens('dogu/test')).toBe(true)
    app.on('dogu/test' as any, (...args: unknown[]) => { seen.push(['listener', ...args]) })
    emit('dogu/test', { id: 'a' }, 2)
    expect(seen).toEqual([['tap', { id: 'a' }, 2], ['listener', { id: 'a' }, 2]])
    expect(errors).toHaveLength(1)
    untap()
    bad()
    emit('dogu/test', 3)
    expect(seen.at(-1)).toEqual(['listener', 3])
    expect(seen).toHaveLength(3)
  })
})
