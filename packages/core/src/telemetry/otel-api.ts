import type * as Api from '@opentelemetry/api'

/** The `@opentelemetry/api` module, as Dogu loads it. */
export type OtelApi = typeof Api

/**
 * Requires `id` when it is installed, else `undefined`. `@opentelemetry/api` is an optional
 * peer, so it is required rather than imported, and synchronously: whether telemetry exists
 * is known as the core loads, and koishi loads the core through `require(esm)`, which allows
 * no top-level await. `node:module` comes from `process.getBuiltinModule` (Node ≥ 20.16), not
 * a static import, so the core still loads in a browser, where telemetry is simply absent.
 */
function optional<T>(id: string): T | undefined {
  try {
    return globalThis.process?.getBuiltinModule?.('node:module')?.createRequire(import.meta.url)(id) as T | undefined
  } catch {
    return undefined
  }
}

/**
 * The API, or `undefined`. A copy other than the app's is fine: the API keeps its providers
 * in a global keyed by `Symbol.for`, which every copy of major version 1 shares.
 */
export const otelApi = optional<OtelApi>('@opentelemetry/api')

/** The core's version, for the tracer and meter. */
export const coreVersion = otelApi && optional<{ version?: string }>('@dogu/core/package.json')?.version

// Where every copy of API major version 1 registers its providers (`registerGlobal`).
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1')

interface Registered {
  trace?: object
  metrics?: object
  context?: object
}

// Held once: a missing key is looked up faster on the object than through `globalThis` each time.
const GLOBAL = globalThis as { [GLOBAL_KEY]?: Registered }

/**
 * What the app registered with OpenTelemetry: `trace`, `metrics`, `context` (each the
 * registered object, or `undefined`). One property read, so the pipeline can ask it on every
 * call. The API's own `trace.getTracerProvider()` gives no answer to "is anything registered"
 * (it hands back its proxy either way), and each of its global lookups runs a version check
 * (a Set lookup in 1.9); reading the global it writes is the cheap way, and it also sees a
 * provider registered after Dogu loaded, and one unregistered by `trace.disable()`. A
 * global of a version the API finds incompatible counts as registered here: the API then
 * hands out no-op tracers and meters, which is correct, only not free.
 */
export function registered(): Registered | undefined {
  return GLOBAL[GLOBAL_KEY]
}
