// The vitest config that runs the data guard's own cases (test-support/data-guard.cases.ts) in
// a child process, for tests/isolation/data-guard.spec.ts: those cases fail on purpose, so
// they are not part of the suite. The suite's config and set-up (the guard itself), with a
// reporter of its own that writes each test's outcome to DATA_GUARD_REPORT as JSON.
import { writeFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import type { Reporter } from 'vitest/reporters'
import root from '../vitest.config'

const reporter: Reporter = {
  onTestRunEnd(modules) {
    const report = modules.map((module) => ({
      errors: module.errors().map((error) => error.message),
      tests: [...module.children.allTests()].map((test) => ({
        name: test.name,
        state: test.result().state,
        errors: (test.result().errors ?? []).map((error) => error.message),
      })),
    }))
    writeFileSync(process.env.DATA_GUARD_REPORT!, JSON.stringify(report))
  },
}

export default defineConfig({
  ...root,
  test: {
    ...root.test,
    include: ['test-support/data-guard.cases.ts'],
    exclude: [],
    typecheck: { enabled: false },
    reporters: [reporter],
  },
})
