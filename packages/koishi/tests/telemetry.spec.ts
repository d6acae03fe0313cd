import { defineTool } from '@dogu/core'
import { trace } from '@opentelemetry/api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installOtel, type InstalledOtel } from '../../../test-support/otel'
import { koishiApp } from './koishi-app'

let otel: InstalledOtel
beforeEach(() => {
  otel = installOtel()
})
afterEach(async () => {
  await otel.uninstall()
})

describe('telemetry on Koishi', () => {
  it('a call through app.tools is one span with Dogu\'s attributes; the tool runs inside it', async () => {
    const { app } = await koishiApp()
    const active: Array<string | undefined> = []
    app.tools.define(defineTool({ name: 'look', description: 'Look', traits: { effect: 'read' }, run: () => { active.push(trace.getActiveSpan()?.spanContext().spanId); return 'seen' } }))
    const [result] = await app.tools.execute([{ id: 'c1', name: 'look', arguments: {} }], { session: { id: 's1', userId: 'u1' } })
    expect(result).toMatchObject({ status: 'ok', content: 'seen' })

    const span = otel.span('dogu.tool look')
    expect(span.attributes).toEqual({
      'dogu.tool.name': 'look',
      'dogu.tool.effect': 'read',
      'dogu.decision': 'allow',
      'dogu.decision.source': 'default',
      'dogu.call.status': 'ok',
      'dogu.call.duration_ms': result.durationMs,
    })
    expect(active).toEqual([span.spanContext().spanId])
    expect(await otel.metric('dogu.calls')).toEqual([{ attributes: { 'dogu.tool.name': 'look', 'dogu.call.status': 'ok' }, value: 1 }])
  })
})
