// `yarn conformance` (scripts/conformance.mjs bundles this file): every server scenario of the
// conformance suite against Dogu's server and, when DOGU_CONFORMANCE_REFERENCE names a command
// that starts the suite's reference everything-server, against it in the same run. Writes the
// counts to a JSON file and prints a table.
import { spawn } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { freePort } from '../free-port'
import { startConformanceServer } from '../../packages/mcp/tests/fixtures/conformance-server'
import { type ScenarioOutcome, runServerSuite, SUITE_CLI, type SuiteRun } from './run-suite'

export interface ReportOptions {
  /** Where the counts are written. */
  out: string
  /**
   * A shell command that starts the reference server. It gets a free port as `PORT` (and in
   * place of `{port}`); its URL is the first `…/mcp` URL it prints, or `referenceUrl`.
   */
  reference?: string
  referenceUrl?: string
  /** Milliseconds the reference server may take to start. @default 60_000 */
  startTimeout?: number
}

/** What the JSON file holds for one server. */
export interface ServerCounts {
  url: string
  passed: number
  total: number
  scenarios: Record<string, { passed: boolean; checks: ScenarioOutcome['counts']; failures: string[] }>
}

export async function conformanceReport(options: ReportOptions): Promise<Record<string, ServerCounts>> {
  const servers: Record<string, ServerCounts> = {}
  const dogu = await startConformanceServer()
  try {
    servers.dogu = counts(dogu.url.href, await runServerSuite(dogu.url))
  } finally {
    await dogu.close()
  }
  if (options.reference) {
    const reference = await startReference(options.reference, options.referenceUrl, options.startTimeout ?? 60_000)
    try {
      servers.reference = counts(reference.url, await runServerSuite(reference.url))
    } finally {
      await reference.stop()
    }
  }
  const suite = JSON.parse(await readFile(join(dirname(SUITE_CLI), '../package.json'), 'utf8')) as { name: string; version: string }
  await mkdir(dirname(options.out), { recursive: true })
  await writeFile(options.out, `${JSON.stringify({ suite: `${suite.name}@${suite.version}`, date: new Date().toISOString(), servers }, null, 2)}\n`)
  console.log(table(servers))
  return servers
}

function counts(url: string, run: SuiteRun): ServerCounts {
  const outcomes = [...run.scenarios.values()].sort((a, b) => a.scenario.localeCompare(b.scenario))
  return {
    url,
    passed: outcomes.filter((outcome) => outcome.passed).length,
    total: outcomes.length,
    scenarios: Object.fromEntries(outcomes.map((outcome) => [outcome.scenario, { passed: outcome.passed, checks: outcome.counts, failures: outcome.failures }])),
  }
}

/** One row per scenario: pass or fail, the checks that succeeded of those that decide (success and failure), and the warnings. */
function table(servers: Record<string, ServerCounts>): string {
  const names = Object.keys(servers)
  const scenarios = [...new Set(Object.values(servers).flatMap((server) => Object.keys(server.scenarios)))].sort()
  const cell = (server: ServerCounts, scenario: string) => {
    const outcome = server.scenarios[scenario]
    if (!outcome) return '-'
    const warnings = outcome.checks.WARNING ? ` (${outcome.checks.WARNING} warning${outcome.checks.WARNING > 1 ? 's' : ''})` : ''
    return `${outcome.passed ? 'pass' : 'FAIL'} ${outcome.checks.SUCCESS}/${outcome.checks.SUCCESS + outcome.checks.FAILURE}${warnings}`
  }
  const rows = [['scenario', ...names], ...scenarios.map((scenario) => [scenario, ...names.map((name) => cell(servers[name]!, scenario))])]
  rows.push(['passed', ...names.map((name) => `${servers[name]!.passed}/${servers[name]!.total}`)])
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  const line = (row: string[]) => row.map((text, i) => text.padEnd(widths[i]!)).join('  ')
  const failures = names.flatMap((name) => Object.entries(servers[name]!.scenarios).flatMap(([scenario, outcome]) => outcome.failures.map((failure) => `  ${name} ${scenario}: ${failure}`)))
  return [line(rows[0]!), ...rows.slice(1, -1).map(line), line(rows.at(-1)!), ...failures.length ? ['', 'failed checks:', ...failures] : []].join('\n')
}

interface Reference {
  url: string
  stop(): Promise<void>
}

const PRINTED_URL = /https?:\/\/[^\s'"`]+\/mcp\b/

async function startReference(command: string, givenUrl: string | undefined, timeout: number): Promise<Reference> {
  const port = await freePort()
  const child = spawn(command.replaceAll('{port}', String(port)), { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: String(port) } })
  let printed = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    // the shell's process group: the server it started goes too
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      return
    }
    const killed = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }, 3_000)
    await exited
    clearTimeout(killed)
  }
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the reference server did not start within ${timeout} ms (${command}):\n${printed}`)), timeout)
      const done = (url: string) => {
        clearTimeout(timer)
        resolve(url)
      }
      const read = (chunk: Buffer) => {
        printed += chunk.toString()
        const match = PRINTED_URL.exec(printed)
        if (match && !givenUrl) done(match[0])
      }
      child.stdout!.on('data', read)
      child.stderr!.on('data', read)
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`the reference server exited with ${signal ?? code} before it was ready (${command}):\n${printed}`))
      })
      if (givenUrl) void waitUntilListening(givenUrl, Date.now() + timeout).then(() => done(givenUrl), reject)
    })
    return { url, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Polls `url` until something answers there, or the deadline passes. */
async function waitUntilListening(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(1_000) })
      return
    } catch {
      if (Date.now() > deadline) throw new Error(`nothing answered at ${url}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}
