import { afterAll, beforeAll, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { assertInvariants, printSurvey, settings } from './properties'
import { expectHarnessWarnings } from './expected-logs'

// I1–I6 on Cordis 4, the `Dogu` plugin loaded as docs/getting-started.md loads it.
let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(async () => {
  printSurvey()
  await otel.uninstall()
})

const run = settings({ seed: 43, numRuns: 200 })
it('Cordis 4: every feature with every other keeps I1–I6', async () => {
  expectHarnessWarnings(logGuard)
  await assertInvariants('cordis', otel, run)
}, run.timeout)
