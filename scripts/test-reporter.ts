// The closing summary of scripts/test.sh (docs/testing.md, "Reading the output"): each
// failure whole, as vitest's default reporter prints it at the end of its output (the test's
// name and file, the error, the diff, the code frame, the stack), and the slowest files.
// scripts/test.sh sends vitest's own output to test-results/test.log and prints this text in
// its place, so a green run is a few lines and a red one starts with what failed.
//
// It writes to the file DOGU_TEST_SUMMARY names, or prints on stdout without it:
//
//   yarn vitest run packages/fs --reporter=default --reporter=./scripts/test-reporter.ts
import { Console } from 'node:console'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { DefaultReporter, experimental_getRunnerTask, type Reporter, type SerializedError, type TestModule, type Vitest } from 'vitest/node'

/** How many of the slowest files the summary names. */
const SLOWEST = 10

export default class TestSummaryReporter implements Reporter {
  private vitest!: Vitest

  onInit(vitest: Vitest): void {
    this.vitest = vitest
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const text = failures(this.vitest, modules, unhandledErrors) + slowest(modules)
    const target = process.env.DOGU_TEST_SUMMARY
    if (!target) {
      process.stdout.write(text)
      return
    }
    const path = resolve(this.vitest.config.root, target)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
}

/** What the default reporter prints of failures (failed files and suites, failed tests, unhandled errors), or ''. */
function failures(vitest: Vitest, modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): string {
  if (modules.every((module) => module.ok()) && !unhandledErrors.length) return ''
  // The default reporter's own printer, writing through vitest's logger: its console is
  // swapped for one that keeps the text. Not a public API; where it is missing (another
  // vitest), each failed test's errors are written out plainly.
  const printer = new DefaultReporter({ isTTY: false }) as unknown as { ctx: Vitest; printErrorsSummary?(files: unknown[], errors: unknown[]): void }
  if (typeof printer.printErrorsSummary !== 'function') return plainFailures(modules, unhandledErrors)
  printer.ctx = vitest
  const logger = vitest.logger as unknown as { console: Console }
  const kept = logger.console
  let text = ''
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    },
  })
  logger.console = new Console({ stdout: sink, stderr: sink, colorMode: false })
  try {
    printer.printErrorsSummary(modules.map((module) => experimental_getRunnerTask(module)), [...unhandledErrors])
  } finally {
    logger.console = kept
  }
  return `${text.replace(/^\n+/, '')}\n`
}

function plainFailures(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): string {
  const blocks: string[] = []
  const errorText = (error: SerializedError) => [error.stack || `${error.name}: ${error.message}`, error.diff].filter(Boolean).join('\n')
  for (const module of modules) {
    for (const error of module.errors()) blocks.push(`FAIL ${module.relativeModuleId}\n${errorText(error)}`)
    for (const test of module.children.allTests('failed')) {
      const result = test.result()
      const errors = result.state === 'failed' ? result.errors : []
      blocks.push(`FAIL ${module.relativeModuleId} > ${test.fullName}\n${errors.map(errorText).join('\n\n')}`)
    }
  }
  for (const error of unhandledErrors) blocks.push(`unhandled error\n${errorText(error)}`)
  return `${blocks.join('\n\n')}\n\n`
}

/** The slowest files, each from its set-up to its last hook, in seconds. */
function slowest(modules: ReadonlyArray<TestModule>): string {
  const seconds = (module: TestModule) => {
    const d = module.diagnostic()
    return (d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000
  }
  const timed = modules.map((module) => ({ module, seconds: seconds(module) })).sort((a, b) => b.seconds - a.seconds)
  const rows = timed.slice(0, SLOWEST).map(({ module, seconds }) => {
    const tests = [...module.children.allTests()].length
    return `${seconds.toFixed(1).padStart(7)} s  ${module.relativeModuleId} (${tests} test${tests === 1 ? '' : 's'})`
  })
  return `slowest files (of ${modules.length}):\n${rows.join('\n')}\n`
}
