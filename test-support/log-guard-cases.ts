// Runs one file of the guard's cases (see log-guard-cases.config.ts) in a child vitest and
// returns what became of each test: the guard's spec then asserts that a test with an
// unexpected line failed, naming it, and that an expected one passed, printing one line.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { beforeAll, expect } from 'vitest'

export interface CaseResult {
  state: 'passed' | 'failed' | 'skipped' | 'pending'
  /** The messages of the errors that failed it. */
  errors: string[]
  /** What it printed, as vitest reported it. */
  output: string
}

export interface CasesReport {
  /** Each test of the file by name. */
  tests: Record<string, CaseResult>
  /** Errors of the file itself (an `afterAll` that threw). */
  errors: string[]
}

const ROOT = resolve(import.meta.dirname, '..')

export async function runCases(file: string): Promise<CasesReport> {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-log-guard-'))
  const report = join(dir, 'report.json')
  try {
    // The parent's vitest variables would make the child think it is a worker.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS'))
    await new Promise<void>((done, fail) => {
      execFile(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test-support/log-guard-cases.config.ts', relative(ROOT, file)], {
        cwd: ROOT,
        env: { ...env, LOG_GUARD_REPORT: report, NO_COLOR: '1' },
        timeout: 60_000,
      }, (error, stdout, stderr) => {
        // A case that fails makes vitest exit 1: expected. No report at all is not.
        readFile(report, 'utf8').then(() => done(), () => fail(new Error(`the cases did not run (${error?.message ?? 'no report'}):\n${stdout}\n${stderr}`)))
      })
    })
    const [module] = JSON.parse(await readFile(report, 'utf8')) as { errors: string[]; tests: (CaseResult & { name: string })[] }[]
    return {
      errors: module.errors,
      tests: Object.fromEntries(module.tests.map(({ name, ...result }) => [name, result])),
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Runs a cases file once, before the spec's tests, and returns each case's outcome by name
 * (failing the asking test when the case is not in the report), how many cases ran, and
 * the errors of the file itself.
 */
export function casesOf(file: string): { outcome(name: string): CaseResult; count(): number; fileErrors(): string[] } {
  let report: CasesReport
  beforeAll(async () => {
    report = await runCases(file)
  }, 60_000)
  return {
    outcome(name) {
      expect(Object.keys(report.tests)).toContain(name)
      return report.tests[name]
    },
    count: () => Object.keys(report.tests).length,
    fileErrors: () => report.errors,
  }
}
