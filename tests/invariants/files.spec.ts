import { afterAll, beforeAll, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { expectHarnessWarnings } from './expected-logs'
import { assertFileInvariants, printSurvey, settings } from './properties'

// I1–I6 where the fs tools' previews and undo meet the rest (issue 43 items 11 and 6): a
// write or edit a person is asked about (in chat on Koishi, through the console's view on
// Cordis), its file changed by a third party before the answer, then the last change undone
// with its path swapped for a link.
let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(async () => {
  printSurvey()
  await otel.uninstall()
})

const cordis = settings({ seed: 1143, numRuns: 100 })
it('Cordis 4: what a person was shown of a file is what is written over, and undo touches only its own file', async () => {
  expectHarnessWarnings(logGuard)
  await assertFileInvariants('cordis', otel, cordis)
}, cordis.timeout)

const koishi = settings({ seed: 1106, numRuns: 50 })
it('Koishi 4: the same, asked in chat or by an asker', async () => {
  expectHarnessWarnings(logGuard)
  await assertFileInvariants('koishi', otel, koishi)
}, koishi.timeout)
