import { afterAll, beforeAll, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { expectHarnessWarnings } from './expected-logs'
import { assertSandboxInvariants, printSurvey, settings } from './properties'

// I1–I6 with the `bash` tool of @dogu/shell: sandbox full (real bubblewrap), unavailable or
// off, and its network settings. Real bubblewrap costs a few hundred ms a command, so this
// property runs fewer scenarios than the others.
let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(async () => {
  printSurvey()
  await otel.uninstall()
})

const run = settings({ seed: 4301, numRuns: 40 })
it('Cordis 4 with bash: the sandbox with every other feature keeps I1–I6', async () => {
  expectHarnessWarnings(logGuard)
  await assertSandboxInvariants('cordis', otel, run)
}, run.timeout)
