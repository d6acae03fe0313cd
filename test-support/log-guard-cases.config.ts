// The vitest config that runs the guard's own cases (`*.cases.ts`) in a child process, for
// packages/{koishi,cordis}/tests/log-guard.spec.ts: those cases fail on purpose, so they are
// not part of the suite. Same resolution as the suite (vitest.config.ts); a reporter of its
// own writes each test's outcome and console output to LOG_GUARD_REPORT as JSON.
import { writeFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import type { Reporter } from 'vitest/reporters'
import root from '../vitest.config'

const logs = new Map<string, string[]>()

const reporter: Reporter = {
  onUserConsoleLog(log) {
    const key = log.taskId ?? ''
    logs.set(key, [...logs.get(key) ?? [], log.content])
  },
  onTestRunEnd(modules) {
    const report = modules.map((module) => ({
      file: module.moduleId,
      errors: module.errors().map((error) => error.message),
      tests: [...module.children.allTests()].map((test) => {
        const result = test.result()
        return {
          name: test.name,
          state: result.state,
          errors: (result.errors ?? []).map((error) => error.message),
          output: (logs.get(test.id) ?? []).join(''),
        }
      }),
    }))
    writeFileSync(process.env.LOG_GUARD_REPORT!, JSON.stringify(report))
  },
}

export default defineConfig({
  ...root,
  test: {
    ...root.test,
    include: ['packages/*/tests/**/*.cases.ts'],
    exclude: [],
    typecheck: { enabled: false },
    reporters: [reporter],
  },
})
