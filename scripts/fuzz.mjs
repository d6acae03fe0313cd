// yarn fuzz [--seed <n>] [--runs <n>] [--only I1,I3] [--survey] [--host cordis|koishi|sandbox|files]:
// the invariant properties of tests/invariants (docs/invariants.md), longer than the suite
// runs them and with a random seed unless one is given. It prints the seed first, so any run
// can be replayed: `yarn fuzz --seed <n> --runs <n>` runs exactly the same scenarios.
// --runs is per property (the sandbox property gets a fifth of it: real bubblewrap is slow).
// --survey records every violation instead of stopping at the first, and prints them grouped.
import { spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'

const root = resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    runs: { type: 'string', default: '500' },
    only: { type: 'string' },
    survey: { type: 'boolean', default: false },
    host: { type: 'string', multiple: true },
  },
})
const number = (name, text) => {
  if (!/^\d+$/.test(text)) {
    console.error(`--${name} must be a whole number, got ${JSON.stringify(text)}`)
    process.exit(2)
  }
  return Number(text)
}
const seed = values.seed === undefined ? randomInt(2 ** 31) : number('seed', values.seed)
const runs = number('runs', values.runs)
// `files`: the fs tools' previews and undo with a third party (both hosts, the chat, the console).
const files = { cordis: 'tests/invariants/cordis.spec.ts', koishi: 'tests/invariants/koishi.spec.ts', sandbox: 'tests/invariants/sandbox.spec.ts', files: 'tests/invariants/files.spec.ts' }
const hosts = values.host ?? Object.keys(files)
for (const host of hosts) {
  if (!files[host]) {
    console.error(`--host must be one of ${Object.keys(files).join(', ')}, got ${JSON.stringify(host)}`)
    process.exit(2)
  }
}
if (values.only && !/^I[1-6](,I[1-6])*$/.test(values.only)) {
  console.error(`--only takes invariants such as I1,I3 (I1 to I6), got ${JSON.stringify(values.only)}`)
  process.exit(2)
}

console.log(`fuzz: seed ${seed}, ${runs} runs per property${values.only ? `, only ${values.only}` : ''}${values.survey ? ', survey' : ''}`)
console.log(`replay: yarn fuzz --seed ${seed} --runs ${runs}${values.only ? ` --only ${values.only}` : ''}${hosts.length < Object.keys(files).length ? hosts.map((host) => ` --host ${host}`).join('') : ''}`)
let failed = false
for (const host of hosts) {
  const env = {
    ...process.env,
    DOGU_FUZZ_SEED: String(seed),
    DOGU_FUZZ_RUNS: String(host === 'sandbox' ? Math.max(1, Math.ceil(runs / 5)) : runs),
    DOGU_FUZZ_SURVEY: values.survey ? '1' : '',
    DOGU_FUZZ_ONLY: values.only ?? '',
  }
  // Under DOGU_FUZZ_RUNS the tests have no time bound to speak of (tests/invariants/properties.ts).
  const result = spawnSync('yarn', ['vitest', 'run', files[host]], { cwd: root, env, stdio: 'inherit' })
  failed ||= result.status !== 0
}
console.log(`fuzz: seed ${seed} ${failed ? 'found a counterexample (above)' : 'found nothing'}`)
process.exit(failed ? 1 : 0)
