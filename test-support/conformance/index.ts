// One suite, two hosts: each host's spec (packages/cordis and packages/koishi,
// tests/conformance.spec.ts) runs it with its own factory.
import { backgroundConformance } from './background'
import type { ConformanceHost } from './host'
import { middlewareConformance } from './middleware'
import { permissionsConformance } from './permissions'
import { quotasConformance } from './quotas'
import { toolsConformance } from './tools'

export type * from './host'

/** Runs the contract of `ctx.tools` (with its quotas), `ctx.permissions` and `ctx.background` against `host`. */
export function runConformance(host: ConformanceHost): void {
  toolsConformance(host)
  middlewareConformance(host)
  permissionsConformance(host)
  backgroundConformance(host)
  quotasConformance(host)
}
