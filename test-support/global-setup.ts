// vitest's global set-up (vitest.config.ts): what the test files of one run share, made once in
// vitest's own process before the first file and handed to the files through provide/inject.
//
// - `npmCache`: npm's cache for the install tests (test-support/tarballs.ts): a temporary
//   folder the run's `npm install`s share, so nothing is read from or written to the user's
//   own cache (~/.npm). Removed after the run.
// - `mariadb`: the SQL tier's server (test-support/mariadb.ts, `runMariaDB()`), started when the
//   run has a `*.sql.spec.ts` file, or why it could not start. Stopped after the run.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { type MariaDBAddress, type MariaDBServer, startMariaDB } from './mariadb'

declare module 'vitest' {
  export interface ProvidedContext {
    npmCache: string
    mariadb: MariaDBAddress | { reason: string }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const npmCache = await mkdtemp(join(tmpdir(), 'dogu-npm-cache-'))
  project.provide('npmCache', npmCache)
  let mariadb: MariaDBServer | undefined
  if (await runsSqlSpecs(project)) {
    const started = await startMariaDB()
    if ('reason' in started) project.provide('mariadb', started)
    else {
      mariadb = started.server
      project.provide('mariadb', mariadb.address)
    }
  }
  return async () => {
    await mariadb?.stop()
    await rm(npmCache, { recursive: true, force: true })
  }
}

/** Whether a `*.sql.spec.ts` file is among the files this run takes (the command line's filters applied). */
async function runsSqlSpecs(project: TestProject): Promise<boolean> {
  // vitest keeps the command line's file filters here; not a public field. Without it every
  // file that `include` matches counts, and a filtered run may start a server it does not use.
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern
  const { testFiles } = await project.globTestFiles(filters)
  return testFiles.some((file) => file.endsWith('.sql.spec.ts'))
}
