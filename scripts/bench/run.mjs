// `yarn bench`: runs every bench in this folder (or those named on the command line).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const only = process.argv.slice(2)
const benches = readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.mjs') && !['run.mjs', 'harness.mjs'].includes(file))
  .filter((file) => !only.length || only.includes(file.replace(/\.mjs$/, '')))
  .sort()

let failed = false
for (const file of benches) {
  console.log(`\n=== ${file} ===`)
  // --expose-gc: soak.mjs (and shell.mjs's memory figures) measure after a forced GC.
  const { status } = spawnSync(process.execPath, ['--expose-gc', join(import.meta.dirname, file)], { stdio: 'inherit' })
  if (status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
