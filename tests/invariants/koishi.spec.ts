import { afterAll, beforeAll, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { assertInvariants, printSurvey, settings } from './properties'
import { expectHarnessWarnings } from './expected-logs'

// I1–I6 on Koishi 4, koishi-plugin-dogu with the mock adapter and a database (minato memory).
let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(async () => {
  printSurvey()
  await otel.uninstall()
})

const run = settings({ seed: 4343, numRuns: 150 })
it('Koishi 4: every feature with every other keeps I1–I6', async () => {
  expectHarnessWarnings(logGuard)
  await assertInvariants('koishi', otel, run)
}, run.timeout)
