// An OpenTelemetry SDK for tests, registered globally as an app would: spans go to the SDK's
// in-memory exporter, metrics to its in-memory metric exporter, and the context follows
// async calls (AsyncLocalStorage). `uninstall()` unregisters every global again, so a later
// test (or file) starts with nothing registered.
import { type Attributes, context, metrics, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

export interface MetricPoint {
  attributes: Attributes
  /** A counter's sum; a histogram's `{ count, sum, … }`. */
  value: unknown
}

export function installOtel() {
  const spanExporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] })
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  // Exports when the test asks (forceFlush); the interval is never reached in a test.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })
  const meterProvider = new MeterProvider({ readers: [reader] })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)

  return {
    /** The spans that ended, in the order they ended. */
    spans: (): ReadableSpan[] => spanExporter.getFinishedSpans(),
    /** The one ended span named `name`; throws when there is none or several. */
    span(name: string): ReadableSpan {
      const found = spanExporter.getFinishedSpans().filter((span) => span.name === name)
      if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length} among ${spanExporter.getFinishedSpans().map((span) => span.name).join(', ') || 'none'}`)
      return found[0]
    },
    /** The data points of Dogu's metric `name` so far (cumulative). */
    async metric(name: string): Promise<MetricPoint[]> {
      await reader.forceFlush()
      const latest = metricExporter.getMetrics().at(-1)
      const found = latest?.scopeMetrics.filter(({ scope }) => scope.name === 'dogu').flatMap(({ metrics }) => metrics).find(({ descriptor }) => descriptor.name === name)
      return (found?.dataPoints ?? []).map(({ attributes, value }) => ({ attributes, value }))
    },
    async uninstall() {
      trace.disable()
      metrics.disable()
      propagation.disable()
      context.disable()
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}

export type InstalledOtel = ReturnType<typeof installOtel>
