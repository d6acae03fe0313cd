// `yarn bench core`: a policy point that is not configured costs nothing (issue 44).
//
// There is no build of the pipeline without a point to compare with, so each pair stands one
// in: the same default plugin (auditing off on both sides: the audit log's batched writes are
// the noisiest part of a call, and no point's cost depends on them), once as loaded, with the
// point unconfigured, and once with the point's object on the registry replaced by the least
// a pipeline without that point could hold: a constant "inactive" (`{ active: false }`), or a
// middleware stack that has no chain for any tool. A call path that touched more of an
// unconfigured point than its flag (a method, a per-call object) would show as a ratio above
// 1.03×, or, calling what the stand-in lacks, stop the bench with an error naming the point.
// Telemetry has a real absence to compare with: a copy of the core that cannot find
// `@opentelemetry/api` (measured in core.mjs; passed in as `telemetry`).
import { formatNs, pairedDelta } from '../harness.mjs'

const INACTIVE = Object.freeze({ active: false })
const NO_MIDDLEWARE = Object.freeze({ chainFor: () => undefined })

/** The point's stand-in, put on a registry: what a build without the point would leave. */
const points = {
  quotas: { label: 'no quotas (and no maxRunning caps)', strip: (registry) => { registry.quotas = INACTIVE; registry.caps = INACTIVE } },
  middleware: { label: 'no middleware', strip: (registry) => { registry.middleware = NO_MIDDLEWARE } },
  redaction: { label: 'no redaction (nothing to redact)', strip: (registry) => { registry.redactor = INACTIVE } },
}

function ratioOf({ baselineNs, subjectNs, medianDeltaNs }) {
  return { fastest: subjectNs / baselineNs, median: (baselineNs + medianDeltaNs) / baselineNs }
}

export async function unconfiguredPairs({ defaultPluginApp, checked, session, telemetry, rounds = 25 }) {
  const figures = {}
  const rows = []
  const apps = []
  const row = (key, label, result, against) => {
    const ratio = ratioOf(result)
    figures[key] = { ...result, ratio: ratio.fastest, medianRatio: ratio.median }
    rows.push({
      point: label,
      ratio: `${ratio.fastest.toFixed(3)}× (median of pairs ${ratio.median.toFixed(3)}×)`,
      added: `${result.deltaNs >= 0 ? '+' : ''}${formatNs(result.deltaNs)}`,
      against: `${against} ${formatNs(result.baselineNs)}`,
      target: '1.00–1.03×',
    })
  }
  for (const [key, { label, strip }] of Object.entries(points)) {
    const loaded = await defaultPluginApp({ enabled: false })
    const stripped = await defaultPluginApp({ enabled: false })
    apps.push(loaded, stripped)
    const { registry } = stripped.tools
    if (!registry) throw new Error('ctx.tools.registry is gone: the unconfigured pairs need the registry to stand a point in')
    strip(registry)
    let result
    try {
      result = await pairedDelta(await checked(stripped.tools.toolset({ session })), await checked(loaded.tools.toolset({ session })), { rounds })
    } catch (error) {
      throw new Error(`${label}: the call path uses more of the unconfigured point than its flag (${error.message})`, { cause: error })
    }
    row(key, label, result, 'the point stood in')
  }
  row('telemetry', 'no telemetry (@opentelemetry/api installed, no SDK; bare core)', telemetry, 'core without the API')
  for (const app of apps) await app.fiber.dispose()
  return { figures, rows }
}
