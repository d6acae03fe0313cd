import type { Tracer } from '@opentelemetry/api'
import type { Tool } from '../tool'
import type { CallSpan, CallTelemetry } from './call-span'
import { type OtelApi, registered } from './otel-api'
import { type CallInstruments, OtelCallSpan } from './otel-call-span'

/**
 * Telemetry through `@opentelemetry/api`. The tracer and the instruments are made once per
 * registered provider: they are looked up again only when the registered object changes
 * (a provider set after Dogu loaded, or `trace.disable()` and a new one).
 */
export class OtelCallTelemetry implements CallTelemetry {
  private traceProvider: object | undefined
  private tracer: Tracer | undefined
  private meterProvider: object | undefined
  private instruments: CallInstruments | undefined

  constructor(private readonly api: OtelApi, private readonly version: string | undefined) {}

  start(call: { id: string; name: string; tool: Tool }): CallSpan | undefined {
    const global = registered()
    if (global === undefined || (global.trace === undefined && global.metrics === undefined)) return undefined
    const tracer = this.tracerFor(global.trace)
    const span = tracer.startSpan(`dogu.tool ${call.name}`, {
      kind: this.api.SpanKind.INTERNAL,
      attributes: { 'dogu.tool.name': call.name, 'dogu.tool.effect': call.tool.traits.effect },
    })
    return new OtelCallSpan(this.api, tracer, span, call.name, this.instrumentsFor(global.metrics))
  }

  // Without a tracer provider the API's tracer makes non-recording spans: metrics alone still work.
  private tracerFor(provider: object | undefined): Tracer {
    if (this.tracer === undefined || provider !== this.traceProvider) {
      this.traceProvider = provider
      this.tracer = this.api.trace.getTracer('dogu', this.version)
    }
    return this.tracer
  }

  private instrumentsFor(provider: object | undefined): CallInstruments | undefined {
    if (provider === undefined) return undefined
    if (this.instruments === undefined || provider !== this.meterProvider) {
      const meter = this.api.metrics.getMeter('dogu', this.version)
      this.meterProvider = provider
      this.instruments = {
        calls: meter.createCounter('dogu.calls', { description: 'Tool calls that ended, by tool and status' }),
        denials: meter.createCounter('dogu.denials', { description: 'Tool calls denied' }),
        asks: meter.createCounter('dogu.asks', { description: 'Tool calls that asked a person' }),
        approvalWait: meter.createHistogram('dogu.approval.wait', { unit: 'ms', description: 'Time a call waited for a person\'s answer' }),
      }
    }
    return this.instruments
  }
}
