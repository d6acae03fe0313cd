// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// packages/mcp) as its CLI, in a child process with the Node 20 glob shim, and reads what it
// wrote: each scenario's checks.json, in a temporary results directory removed afterwards.
// A scenario passes when none of its checks is a FAILURE (the suite's own rule).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const requireFromMcp = createRequire(resolve(import.meta.dirname, '../../packages/mcp/package.json'))

/** The suite's CLI entry, as installed for @dogu/mcp. */
export const SUITE_CLI = join(dirname(requireFromMcp.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js')
/** The `--import` module that gives the suite (and only it) `fs.globSync` on Node 20. */
export const GLOB_SHIM = resolve(import.meta.dirname, 'glob-shim.mjs')

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'

/** One check as the suite records it in checks.json. */
export interface SuiteCheck {
  id: string
  name: string
  description: string
  status: CheckStatus
  errorMessage?: string
  details?: unknown
}

export interface ScenarioOutcome {
  scenario: string
  /** No check of the scenario is a FAILURE. */
  passed: boolean
  /** How many checks ended in each status. */
  counts: Record<CheckStatus, number>
  /** The failed checks, each as `<id>: <errorMessage>`. */
  failures: string[]
  checks: SuiteCheck[]
}

export interface SuiteRun {
  /** One outcome per scenario the suite ran, by scenario name. */
  scenarios: Map<string, ScenarioOutcome>
  /** What the CLI printed (stdout, then stderr), for a failure message. */
  output: string
}

export interface RunSuiteOptions {
  /** Only these scenarios (one `--scenario` run each, four at a time). @default every scenario of `suite` in one run */
  scenarios?: string[]
  /** @default 'all' (the active scenarios and the pending ones) */
  suite?: 'all' | 'active' | 'pending'
  /** Milliseconds before the run is stopped and rejected. @default 120_000 */
  timeout?: number
  signal?: AbortSignal
}

/** Runs the suite's server scenarios against the Streamable HTTP endpoint at `url`. */
export function runServerSuite(url: string | URL, options: RunSuiteOptions = {}): Promise<SuiteRun> {
  const { scenarios, suite = 'all' } = options
  if (scenarios?.length) return runEach(scenarios, (scenario) => ['server', '--url', String(url), '--scenario', scenario], options)
  return runOnce(['server', '--url', String(url), '--suite', suite], options)
}

/**
 * Runs client scenarios against `command`: the suite starts it once per scenario with the
 * scenario's server URL as its last argument (a shell command line).
 */
export function runClientSuite(command: string, scenarios: string[], options: Omit<RunSuiteOptions, 'scenarios' | 'suite'> = {}): Promise<SuiteRun> {
  return runEach(scenarios, (scenario) => ['client', '--command', command, '--scenario', scenario], options)
}

// Scenario runs at once: each is the suite's CLI and the client it starts, two Node processes.
const PARALLEL_RUNS = 4

async function runEach(scenarios: string[], args: (scenario: string) => string[], options: RunSuiteOptions): Promise<SuiteRun> {
  const runs: SuiteRun[] = []
  const queue = [...scenarios]
  await Promise.all(Array.from({ length: Math.min(PARALLEL_RUNS, queue.length) }, async () => {
    for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) runs.push(await runOnce(args(scenario), options))
  }))
  return { scenarios: new Map(runs.flatMap((run) => [...run.scenarios])), output: runs.map((run) => run.output).join('\n') }
}

async function runOnce(args: string[], options: RunSuiteOptions): Promise<SuiteRun> {
  const { timeout = 120_000, signal } = options
  const dir = await mkdtemp(join(tmpdir(), 'dogu-conformance-results-'))
  try {
    const output = await runCli([...args, '--output-dir', dir], dir, AbortSignal.any([AbortSignal.timeout(timeout), ...signal ? [signal] : []]))
    const scenarios = new Map<string, ScenarioOutcome>()
    // A scenario named `auth/basic-cimd` writes to `auth/basic-cimd-<time>`.
    const walk = async (path: string, prefix: string): Promise<void> => {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue
        const outcome = await readScenario(join(path, entry.name), prefix + entry.name, args[0]!)
        if (outcome) scenarios.set(outcome.scenario, outcome)
        else await walk(join(path, entry.name), `${prefix}${entry.name}/`)
      }
    }
    await walk(dir, '')
    if (!scenarios.size) throw new Error(`the conformance suite recorded no scenario (conformance ${args.join(' ')}):\n${output}`)
    return { scenarios, output }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The directory the suite writes a scenario's results to: `server-<scenario>-<time>` for a
 * server scenario, `<scenario>-<time>` for a client one (the time an ISO string with dashes).
 */
const RESULT_DIR = /^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

async function readScenario(path: string, name: string, mode: string): Promise<ScenarioOutcome | undefined> {
  const scenario = RESULT_DIR.exec(name)?.[1]?.replace(mode === 'server' ? /^server-/ : /^/, '')
  if (!scenario || !existsSync(join(path, 'checks.json'))) return
  const checks = JSON.parse(await readFile(join(path, 'checks.json'), 'utf8')) as SuiteCheck[]
  const counts: Record<CheckStatus, number> = { SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0, SKIPPED: 0 }
  for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1
  const failures = checks.filter((check) => check.status === 'FAILURE').map((check) => `${check.id}: ${check.errorMessage ?? check.description}`)
  return { scenario, passed: !failures.length, counts, failures, checks }
}

/** The CLI exits 1 when a scenario failed: that is a result, not an error. Anything else is. */
function runCli(args: string[], cwd: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', GLOB_SHIM, SUITE_CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } })
    const chunks: Buffer[] = []
    const errors: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => errors.push(chunk))
    const output = () => `${Buffer.concat(chunks).toString()}${Buffer.concat(errors).toString()}`
    const abort = () => child.kill('SIGKILL')
    signal.addEventListener('abort', abort, { once: true })
    child.once('error', (error) => {
      signal.removeEventListener('abort', abort)
      reject(error)
    })
    child.once('close', (code, killed) => {
      signal.removeEventListener('abort', abort)
      if (signal.aborted) reject(new Error(`the conformance suite was stopped (${signal.reason instanceof Error ? signal.reason.message : String(signal.reason)}):\n${output()}`))
      else if (code === 0 || code === 1) resolve(output())
      else reject(new Error(`the conformance suite exited with ${killed ?? code}:\n${output()}`))
    })
  })
}
