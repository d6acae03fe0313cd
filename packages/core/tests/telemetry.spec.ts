import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installOtel, type InstalledOtel } from '../../../test-support/otel'
import { defineTool, traceMeta, ToolRegistry, type ToolResult } from '../src'
import { BackgroundEngine } from '../src/background'
import { PermissionEngine } from '../src/permissions'
import { telemetry } from '../src/telemetry/call-telemetry'

const TIMEOUT_MS = 50

function setup() {
  const engine = new PermissionEngine({
    rules: [
      { permission: 'tool:write', decision: 'deny' },
      { permission: 'tool:deploy', decision: 'ask' },
    ],
  })
  engine.addAsker(async () => ({ decision: 'allow', by: 'u1' }))
  const registry = new ToolRegistry()
  registry.permissions = engine
  const seen: Array<string | undefined> = []
  registry.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'read ok' }))
  registry.define(defineTool({ name: 'write', description: 'Write', traits: { effect: 'write' }, run: () => 'write ok' }))
  registry.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
  registry.define(defineTool({
    name: 'traced',
    description: 'Reads the active span, as an HTTP client would',
    traits: { effect: 'read' },
    run: async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      seen.push(trace.getActiveSpan()?.spanContext().spanId)
      return 'traced'
    },
  }))
  registry.define(defineTool({
    name: 'hang',
    description: 'Never answers',
    traits: { effect: 'read', timeout: TIMEOUT_MS, background: false },
    run: (_, call) => new Promise((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason))),
  }))
  const toolset = registry.toolset({ session: { id: 's1', userId: 'u1' } })
  const call = async (name: string, id = `c-${name}`): Promise<ToolResult> => (await toolset.execute([{ id, name, arguments: {} }]))[0]
  return { registry, call, seen }
}

const ids = (span: ReadableSpan) => ({ trace: span.spanContext().traceId, span: span.spanContext().spanId, parent: span.parentSpanContext?.spanId })

describe('telemetry: one span per call', () => {
  let otel: InstalledOtel
  beforeEach(() => {
    otel = installOtel()
  })
  afterEach(async () => {
    await otel.uninstall()
  })

  it('a call allowed by default: its span, attributes and the calls counter', async () => {
    const { call } = setup()
    const result = await call('read')
    expect(result.status).toBe('ok')
    const span = otel.span('dogu.tool read')
    expect(span.kind).toBe(0)
    expect(span.instrumentationScope.name).toBe('dogu')
    expect(span.attributes).toEqual({
      'dogu.tool.name': 'read',
      'dogu.tool.effect': 'read',
      'dogu.decision': 'allow',
      'dogu.decision.source': 'default',
      'dogu.call.status': 'ok',
      'dogu.call.duration_ms': result.durationMs,
    })
    expect(span.status.code).toBe(SpanStatusCode.UNSET)
    expect(otel.spans().map((s) => s.name)).toEqual(['dogu.tool read'])
    expect(await otel.metric('dogu.calls')).toEqual([{ attributes: { 'dogu.tool.name': 'read', 'dogu.call.status': 'ok' }, value: 1 }])
    expect(await otel.metric('dogu.denials')).toEqual([])
    expect(await otel.metric('dogu.asks')).toEqual([])
  })

  it('a call denied by a rule: decision, status and the denials counter', async () => {
    const { call } = setup()
    expect((await call('write')).status).toBe('denied')
    expect(otel.span('dogu.tool write').attributes).toMatchObject({
      'dogu.tool.effect': 'write',
      'dogu.decision': 'deny',
      'dogu.decision.source': 'rule',
      'dogu.call.status': 'denied',
    })
    expect(await otel.metric('dogu.denials')).toEqual([{ attributes: { 'dogu.tool.name': 'write' }, value: 1 }])
    expect(await otel.metric('dogu.calls')).toEqual([{ attributes: { 'dogu.tool.name': 'write', 'dogu.call.status': 'denied' }, value: 1 }])
  })

  it('an ask a person answered: the approval child span, wait_ms, source answer, asks and the wait histogram', async () => {
    const { call } = setup()
    const result = await call('deploy')
    expect(result.status).toBe('ok')
    expect(result.waitMs).toBeTypeOf('number')
    const span = otel.span('dogu.tool deploy')
    expect(span.attributes).toMatchObject({
      'dogu.tool.effect': 'exec',
      'dogu.decision': 'ask',
      'dogu.decision.source': 'answer',
      'dogu.call.status': 'ok',
      'dogu.approval.wait_ms': result.waitMs,
    })
    const approval = otel.span('dogu.approval')
    expect(ids(approval)).toMatchObject({ trace: ids(span).trace, parent: ids(span).span })
    expect(await otel.metric('dogu.asks')).toEqual([{ attributes: { 'dogu.tool.name': 'deploy' }, value: 1 }])
    const [wait] = await otel.metric('dogu.approval.wait')
    expect(wait).toMatchObject({ attributes: { 'dogu.tool.name': 'deploy' }, value: { count: 1, sum: result.waitMs } })
  })

  it('a call that timed out: ERROR status with the first line of its content', async () => {
    const { call } = setup()
    const result = await call('hang')
    expect(result.status).toBe('timed_out')
    const span = otel.span('dogu.tool hang')
    expect(span.attributes['dogu.call.status']).toBe('timed_out')
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: result.content.split('\n')[0] })
  })

  it('a call handed to the background carries its task id', async () => {
    const { registry } = setup()
    const background = new BackgroundEngine()
    await background.load()
    registry.background = background
    let finish!: (text: string) => void
    registry.define(defineTool({
      name: 'slow',
      description: 'Takes its time',
      traits: { effect: 'read', timeout: TIMEOUT_MS, background: true },
      run: () => new Promise<string>((resolve) => { finish = resolve }),
    }))
    const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'c-slow', name: 'slow', arguments: {} }])
    expect(result).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
    expect(otel.span('dogu.tool slow').attributes).toMatchObject({ 'dogu.call.status': 'background', 'dogu.task.id': result.taskId })
    finish('done')
    await background.wait(result.taskId!, { timeout: 1_000 })
    await background.dispose()
  })

  it('the tool\'s run sees the call span as the active span; the call span joins the caller\'s trace', async () => {
    const { call, seen } = setup()
    const parent = trace.getTracer('test').startSpan('agent turn')
    await context.with(trace.setSpan(context.active(), parent), () => call('traced'))
    parent.end()
    const span = otel.span('dogu.tool traced')
    expect(seen).toEqual([ids(span).span])
    expect(ids(span)).toMatchObject({ trace: parent.spanContext().traceId, parent: parent.spanContext().spanId })
  })

  it('a middleware runs in its own child span; a middleware\'s denial is decided by the middleware', async () => {
    const { registry, call } = setup()
    registry.use((c, next) => next(), { name: 'outer', order: 0 })
    registry.use((c, next) => (c.tool.name === 'read' ? { status: 'denied', reason: 'no reading today' } : next()), { name: 'inner', order: 1 })
    expect((await call('read')).status).toBe('denied')
    const span = otel.span('dogu.tool read')
    expect(span.attributes).toMatchObject({ 'dogu.decision': 'deny', 'dogu.decision.source': 'middleware', 'dogu.call.status': 'denied' })
    const outer = otel.span('dogu.middleware outer')
    const inner = otel.span('dogu.middleware inner')
    expect(ids(outer).parent).toBe(ids(span).span)
    expect(ids(inner).parent).toBe(ids(outer).span)
  })

  it('traceMeta() inside a call: the registered propagator writes it, else traceparent is formatted from the span', async () => {
    const { registry } = setup()
    const metas: Array<Record<string, string> | undefined> = []
    registry.define(defineTool({ name: 'mcp', description: 'As an MCP import', traits: { effect: 'read' }, run: () => { metas.push(traceMeta()); return 'ok' } }))
    const call = (name: string, id: string) => registry.toolset({ session: { id: 's1' } }).execute([{ id, name, arguments: {} }])
    expect(traceMeta()).toBeUndefined()
    await call('mcp', 'c1')
    const { traceId, spanId } = otel.span('dogu.tool mcp').spanContext()
    expect(metas[0]).toEqual({ traceparent: `00-${traceId}-${spanId}-01` })

    propagation.setGlobalPropagator({
      inject: (_, carrier, setter) => {
        setter.set(carrier, 'traceparent', 'from-propagator')
        setter.set(carrier, 'baggage', 'k=v')
        setter.set(carrier, 'x-other', 'dropped')
      },
      extract: (ctx) => ctx,
      fields: () => ['traceparent', 'baggage', 'x-other'],
    })
    await call('mcp', 'c2')
    expect(metas[1]).toEqual({ traceparent: 'from-propagator', baggage: 'k=v' })
  })
})

describe('telemetry without a provider', () => {
  const call = { id: 'c1', name: 'read', tool: defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'ok' }) }

  it('the API is installed here, so telemetry exists; start() gives nothing until a provider is registered, and again after', async () => {
    expect(telemetry).toBeDefined()
    expect(telemetry!.start(call)).toBeUndefined()
    expect(traceMeta()).toBeUndefined()
    const otel = installOtel()
    const span = telemetry!.start(call)
    expect(span).toBeDefined()
    span!.end({ id: 'c1', name: 'read', status: 'ok', content: 'ok', durationMs: 3 })
    span!.end({ id: 'c1', name: 'read', status: 'error', content: 'late', durationMs: 4 })
    expect(otel.spans().map((s) => [s.name, s.attributes['dogu.call.status'], s.attributes['dogu.call.duration_ms']])).toEqual([['dogu.tool read', 'ok', 3]])
    expect(await otel.metric('dogu.calls')).toEqual([{ attributes: { 'dogu.tool.name': 'read', 'dogu.call.status': 'ok' }, value: 1 }])
    await otel.uninstall()
    expect(telemetry!.start(call)).toBeUndefined()
    // A second SDK, registered after the first went away, is picked up too.
    const again = installOtel()
    telemetry!.start(call)!.end({ id: 'c2', name: 'read', status: 'ok', content: 'ok', durationMs: 1 })
    expect(again.spans().map((s) => s.name)).toEqual(['dogu.tool read'])
    await again.uninstall()
  })

  it('a call runs as before', async () => {
    const registry = new ToolRegistry()
    registry.define(call.tool)
    const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'c1', name: 'read', arguments: {} }])
    expect(result).toMatchObject({ status: 'ok', content: 'ok' })
  })
})
