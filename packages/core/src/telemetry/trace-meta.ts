import type { SpanContext } from '@opentelemetry/api'
import { type OtelApi, otelApi as api, registered } from './otel-api'

// What SEP-414 reserves in an MCP request's `_meta` for W3C Trace Context and Baggage.
const KEYS = ['traceparent', 'tracestate', 'baggage'] as const

/**
 * The active trace context as W3C `traceparent` (and `tracestate`, `baggage` when there are
 * any), for an outgoing request's metadata (an MCP call's `_meta`); `undefined` outside a
 * trace or without `@opentelemetry/api`. The registered propagator writes it when there is
 * one (NodeSDK registers W3C); without one, `traceparent` is formatted from the active span.
 */
export function traceMeta(): Record<string, string> | undefined {
  // No context manager registered: nothing is ever active.
  if (!api || registered()?.context === undefined) return undefined
  const active = api.context.active()
  const carrier: Record<string, string> = {}
  api.propagation.inject(active, carrier)
  const meta: Record<string, string> = {}
  for (const key of KEYS) if (typeof carrier[key] === 'string') meta[key] = carrier[key]
  if (meta.traceparent) return meta
  const span = api.trace.getSpanContext(active)
  if (!span || !api.trace.isSpanContextValid(span)) return undefined
  const traceState = span.traceState?.serialize()
  meta.traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`
  if (traceState) meta.tracestate = traceState
  return meta
}

// W3C `traceparent`: version 00, trace id, parent span id, flags (a later version may add fields).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/**
 * Runs `fn` with the trace context an incoming request carries in `meta` (an MCP call's
 * `_meta`: `traceparent`, `tracestate`, `baggage`) as its parent, so the spans it starts join
 * the caller's trace. The registered propagator reads it when there is one; without one, a
 * valid `traceparent` is parsed here. Anything else (no trace context, a malformed one, no
 * `@opentelemetry/api`) runs `fn` as it is: a bad `traceparent` never fails a request.
 */
export function withTraceMeta<T>(meta: unknown, fn: () => T): T {
  if (!api || registered()?.context === undefined || typeof meta !== 'object' || meta === null) return fn()
  const carrier: Record<string, string> = {}
  for (const key of KEYS) {
    const value = (meta as Record<string, unknown>)[key]
    if (typeof value === 'string') carrier[key] = value
  }
  if (carrier.traceparent === undefined) return fn()
  const active = api.context.active()
  let parent = api.propagation.extract(active, carrier)
  // No propagator registered (or one that reads baggage alone): the span context is the active one still.
  if (api.trace.getSpanContext(parent) === api.trace.getSpanContext(active)) {
    const remote = parseTraceparent(api, carrier.traceparent, carrier.tracestate)
    if (remote) parent = api.trace.setSpanContext(parent, remote)
  }
  return api.context.with(parent, fn)
}

function parseTraceparent(api: OtelApi, traceparent: string, tracestate: string | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec(traceparent)
  // Version ff is invalid; version 00 has exactly four fields.
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return undefined
  const span: SpanContext = { traceId: match[2], spanId: match[3], traceFlags: Number.parseInt(match[4], 16), isRemote: true }
  if (tracestate) span.traceState = api.createTraceState(tracestate)
  return api.trace.isSpanContextValid(span) ? span : undefined
}
