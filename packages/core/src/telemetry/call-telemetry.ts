import { coreVersion, otelApi } from './otel-api'
import { OtelCallTelemetry } from './otel-call-telemetry'
import type { CallTelemetry } from './call-span'

export type { CallSpan, CallTelemetry } from './call-span'

/** `undefined` when `@opentelemetry/api` is not installed. */
export const telemetry: CallTelemetry | undefined = otelApi && new OtelCallTelemetry(otelApi, coreVersion)
