import fc from 'fast-check'
import type { InstalledOtel } from '../../test-support/otel'
import { fileScenarioArb, hostArb, sandboxArb, scenarioArb, type ScenarioOptions } from './arbitraries'
import { checkInvariants, type Violation } from './invariants'
import { cleanUp, runScenario } from './run-scenario'
import { describeScenario, type HostName, type HostSpec, type SandboxSpec, type Scenario } from './scenario'

// The properties, parameterized by host. In the suite they run a fixed seed and a bounded
// number of runs; `yarn fuzz` (scripts/fuzz.mjs) passes a random seed and more runs through
// the environment. A failure shrinks to the smallest scenario and reports it readably.

export interface RunSettings {
  seed: number
  numRuns: number
  /** `yarn fuzz --survey`: record every violation instead of stopping at the first. */
  survey: boolean
  /** `yarn fuzz --only I2,I5`: check only these invariants (each shrinks to its own counterexample). */
  only?: string[]
  /** The test's time bound: the suite's, or none to speak of under `yarn fuzz`. */
  timeout: number
}

const int = (value: string | undefined) => value === undefined || value === '' ? undefined : Number.parseInt(value, 10)

/** The suite's fixed seed and bounded runs, or what `yarn fuzz` asked for. */
export function settings(defaults: { seed: number; numRuns: number }): RunSettings {
  const scale = int(process.env.DOGU_FUZZ_SCALE) ?? 1
  return {
    seed: int(process.env.DOGU_FUZZ_SEED) ?? defaults.seed,
    numRuns: int(process.env.DOGU_FUZZ_RUNS) ?? defaults.numRuns * scale,
    survey: process.env.DOGU_FUZZ_SURVEY === '1',
    only: process.env.DOGU_FUZZ_ONLY ? process.env.DOGU_FUZZ_ONLY.split(',') : undefined,
    timeout: process.env.DOGU_FUZZ_RUNS ? 24 * 3_600_000 : 120_000,
  }
}

export class InvariantViolation extends Error {
  constructor(readonly violations: Violation[], scenario: Scenario, sandbox?: SandboxSpec, host?: HostSpec) {
    super(`${violations.length} invariant violation(s):\n${violations.map((item) => `  ${item.invariant}: ${item.message}`).join('\n')}\nscenario:\n${describeScenario(scenario, sandbox, host)}`)
    this.name = 'InvariantViolation'
  }
}

/** Violations seen by a survey, one example per invariant and first words. */
export const surveyed = new Map<string, { count: number; example: string }>()

async function check(host: HostSpec, otel: InstalledOtel, scenario: Scenario, sandbox: SandboxSpec | undefined, { survey, only }: RunSettings) {
  const outcome = await runScenario(host, scenario, otel, sandbox)
  try {
    const violations = checkInvariants(outcome).filter((violation) => !only || only.includes(violation.invariant))
    if (!violations.length) return
    if (!survey) throw new InvariantViolation(violations, scenario, sandbox, host)
    for (const violation of violations) {
      // Grouped by what was found, not by which call or channel number found it.
      const kind = violation.message.replace(/[sp]k-live-\w+/g, '<secret>').replace(/#\d+/g, '#n').replace(/\bc\d+\b/g, 'cN').replace(/\b\d+\b/g, 'N').replace(/…[^]*$/, '')
      const key = `${host.name}${host.approver === 'asker' ? '' : ` (${host.approver})`}${host.console ? ' (console)' : ''} ${violation.invariant}: ${kind.slice(0, 90)}`
      const seen = surveyed.get(key)
      if (seen) seen.count++
      else surveyed.set(key, { count: 1, example: `${violation.message}\n${describeScenario(scenario, sandbox, host)}` })
    }
  } finally {
    await cleanUp(outcome)
  }
}

async function assertProperty<T>(property: fc.IAsyncPropertyWithHooks<T>, run: RunSettings) {
  await fc.assert(property, { seed: run.seed, numRuns: run.numRuns })
  // A survey never stops early; it fails at the end instead, its findings printed by printSurvey.
  if (run.survey && surveyed.size) throw new Error(`the survey found ${surveyed.size} kind(s) of violation (printed after the test)`)
}

/** Every feature with every other, on one host (its approver and console a dimension too), without the sandbox's real bubblewrap. */
export function assertInvariants(host: HostName, otel: InstalledOtel, run: RunSettings, options: ScenarioOptions = {}) {
  return assertProperty(fc.asyncProperty(hostArb(host), scenarioArb(options), (spec, scenario) => check(spec, otel, scenario, undefined, run)), run)
}

/**
 * Writes and edits of the workspace's files, a third party between question and answer, and
 * undo (issue 43 items 11 and 6). Not by a framework's user: its approval request shows the
 * arguments, not Dogu's preview of the file, so item 11 has nothing to hold the write to.
 */
export function assertFileInvariants(host: HostName, otel: InstalledOtel, run: RunSettings) {
  return assertProperty(fc.asyncProperty(hostArb(host, { framework: false }), fileScenarioArb(), (spec, scenario) => check(spec, otel, scenario, undefined, run)), run)
}

/** The same with `bash` and the sandbox's dimensions: real bubblewrap is slow, so fewer runs. */
export function assertSandboxInvariants(host: HostName, otel: InstalledOtel, run: RunSettings) {
  const spec: HostSpec = { name: host, approver: 'asker', console: false }
  return assertProperty(fc.asyncProperty(scenarioArb({ bash: true, maxCalls: 3 }), sandboxArb, (scenario, sandbox) => check(spec, otel, scenario, sandbox, run)), run)
}

/** Prints what a survey found (nothing outside one). */
export function printSurvey(): void {
  if (!surveyed.size) return
  const lines = [...surveyed].sort(([a], [b]) => a.localeCompare(b)).map(([key, { count, example }]) => `\n[${count}×] ${key}\n${example}`)
  console.log(`survey: ${surveyed.size} kinds of violation${lines.join('\n')}`)
}
