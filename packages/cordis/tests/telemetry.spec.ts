import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool } from '@dogu/core'
import { trace } from '@opentelemetry/api'
import { Context, type Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { installOtel, type InstalledOtel } from '../../../test-support/otel'
import Dogu from '../src'

const session = { id: 's1', userId: 'u1' }

let dir: string
let otel: InstalledOtel
const loaded: Fiber[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-telemetry-'))
  otel = installOtel()
})
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await otel.uninstall()
  await rm(dir, { recursive: true, force: true })
})

describe('telemetry on Cordis 4', () => {
  it('a call through ctx.tools is one span with Dogu\'s attributes; the tool runs inside it', async () => {
    const ctx = new Context()
    guardLogs(ctx)
    loaded.push(await ctx.plugin(Dogu, {
      permissions: { storePath: join(dir, 'permissions.json'), rules: [{ permission: 'tool:wipe', decision: 'deny' }] },
      background: { storePath: join(dir, 'tasks.json') },
      audit: { storePath: join(dir, 'audit.jsonl') },
    }))
    const active: Array<string | undefined> = []
    ctx.tools.define(defineTool({ name: 'look', description: 'Look', traits: { effect: 'read' }, run: () => { active.push(trace.getActiveSpan()?.spanContext().spanId); return 'seen' } }))
    ctx.tools.define(defineTool({ name: 'wipe', description: 'Wipe', traits: { effect: 'exec' }, run: () => 'wiped' }))
    const [look, wipe] = await ctx.tools.execute([{ id: 'c1', name: 'look', arguments: {} }, { id: 'c2', name: 'wipe', arguments: {} }], { session })
    expect([look.status, wipe.status]).toEqual(['ok', 'denied'])

    const span = otel.span('dogu.tool look')
    expect(span.attributes).toEqual({
      'dogu.tool.name': 'look',
      'dogu.tool.effect': 'read',
      'dogu.decision': 'allow',
      'dogu.decision.source': 'default',
      'dogu.call.status': 'ok',
      'dogu.call.duration_ms': look.durationMs,
    })
    expect(active).toEqual([span.spanContext().spanId])
    expect(otel.span('dogu.tool wipe').attributes).toMatchObject({ 'dogu.tool.effect': 'exec', 'dogu.decision': 'deny', 'dogu.decision.source': 'rule', 'dogu.call.status': 'denied' })
    expect(await otel.metric('dogu.denials')).toEqual([{ attributes: { 'dogu.tool.name': 'wipe' }, value: 1 }])
  })
})
