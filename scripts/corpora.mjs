// Where the corpus tier finds its external test material (docs/testing.md): data from other
// public repositories that stays out of this one. `../shared/corpora` beside the repository
// by default, or the folder in DOGU_CORPORA. The vitest config, scripts/test.sh, the corpus
// specs and the search bench all ask this module, so the rule lives in one place.
//
// As a command (`node scripts/corpora.mjs`) it prints the folder and exits 0 when it is
// there; otherwise it prints why the corpus tier cannot run and exits 2, or 1 when
// DOGU_REQUIRE_CORPORA=1 says it must run.
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('..', import.meta.url))

/**
 * The corpora folder. A relative DOGU_CORPORA is taken from the working directory.
 * `missing` says why the tier cannot run, or is undefined when the folder is there.
 */
export function corpora(env = process.env) {
  const path = env.DOGU_CORPORA ? resolve(env.DOGU_CORPORA) : resolve(repository, '../shared/corpora')
  const present = existsSync(path) && statSync(path).isDirectory()
  const origin = env.DOGU_CORPORA ? 'DOGU_CORPORA' : 'the default beside the repository; set DOGU_CORPORA to use another'
  return {
    path,
    required: env.DOGU_REQUIRE_CORPORA === '1',
    missing: present ? undefined : `the corpora folder ${path} (${origin}) does not exist`,
  }
}

/** A file or folder inside the corpora; throws, naming it, when it is not there. */
export function corpusPath(...segments) {
  const { path, missing } = corpora()
  if (missing) throw new Error(`corpus tier: ${missing}`)
  const target = join(path, ...segments)
  if (!existsSync(target)) throw new Error(`corpus tier: ${target} is missing from the corpora folder`)
  return target
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { path, required, missing } = corpora()
  if (!missing) {
    console.log(`corpus tier: ${path}`)
  } else if (required) {
    console.log(`corpus tier required (DOGU_REQUIRE_CORPORA=1), but ${missing}`)
    process.exitCode = 1
  } else {
    console.log(`corpus tier did not run: ${missing}`)
    process.exitCode = 2
  }
}
