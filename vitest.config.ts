import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { corpora } from './scripts/corpora.mjs'

// Two tiers (docs/testing.md): the project's own tests always run; the corpus tier
// (`*.corpus.spec.ts`, external data from ../shared/corpora or DOGU_CORPORA) runs when its
// folder is there. Without it those files are not collected, and the run ends by saying so.
const { missing, required } = corpora()
if (missing && required) throw new Error(`corpus tier required (DOGU_REQUIRE_CORPORA=1), but ${missing}`)
const notice = `corpus tier did not run: ${missing}`

/**
 * A dependency's file whose source map names sources the package does not ship is loaded
 * without that map: its stack frames then point at the .js that is there, and vite does not
 * warn "Sourcemap for … points to missing source files" once per file. The cause is in
 * @modelcontextprotocol/sdk 1.x (inlined below): the maps beside its dist/ files name
 * ../../src/*.ts, which its package leaves out. Our own packages load from their sources.
 */
function dependencyMapsWithoutSources(): Plugin {
  return {
    name: 'dogu:dependency-maps-without-sources',
    enforce: 'pre',
    load(id) {
      const file = id.split('?')[0]!
      if (!file.includes('/node_modules/') || !/\.[cm]?js$/.test(file)) return null
      if (!existsSync(file)) return null
      const code = readFileSync(file, 'utf8')
      const comment = /\n\/\/# sourceMappingURL=(?!data:)(\S+)\s*$/.exec(code)
      if (!comment) return null
      const mapFile = resolve(dirname(file), comment[1]!)
      let map: { sourceRoot?: string; sources?: string[]; sourcesContent?: (string | null)[] }
      try {
        map = JSON.parse(readFileSync(mapFile, 'utf8'))
      } catch {
        return null
      }
      const root = resolve(dirname(mapFile), map.sourceRoot ?? '')
      const missing = (map.sources ?? []).some((source, index) => map.sourcesContent?.[index] == null && !existsSync(resolve(root, source)))
      return missing ? { code: code.slice(0, comment.index + 1), map: null } : null
    },
  }
}

/**
 * The order the run's files start in. The pool runs a few files at once; a long file that
 * starts last keeps the run going while the other workers have nothing left. vitest orders by
 * the durations it cached from the last run (in node_modules/.vite): once it knows every file,
 * that order stands. Before that (a fresh clone, CI) it starts the larger files first, and many
 * of the long ones are short files that wait on processes: these start first here, in this
 * order (docs/testing.md's table of the slowest files), then the rest in vitest's.
 */
const LONG_FILES: RegExp[] = [
  /\/conformance-client\.spec\.ts$/,
  /\.tarball\.spec\.ts$/,
  /\/sandbox-escape\.spec\.ts$/,
  /\/argument-model\.spec\.ts$/,
  /\/docs-code\.spec\.ts$/,
  /\/tests\/invariants\//,
  /\.sql\.spec\.ts$/,
  /browser[\w-]*\.spec\.ts$/,
  /\/playground\/tests\//,
]

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    if (files.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(root, spec.moduleId)}`))) return sorted
    const rank = (spec: TestSpecification) => {
      const index = LONG_FILES.findIndex((pattern) => pattern.test(spec.moduleId))
      return index < 0 ? LONG_FILES.length : index
    }
    return sorted.map((spec, index) => ({ spec, index, rank: rank(spec) })).sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ spec }) => spec)
  }
}

export default defineConfig({
  plugins: [dependencyMapsWithoutSources()],
  resolve: {
    // Workspace packages export their TypeScript sources under the `source` condition,
    // so tests run against src without a build step.
    conditions: ['source'],
    alias: [
      // Koishi 4's ESM entry does not load in Node (its loader's ESM build imports a CJS
      // file's default as a class); Koishi apps load it through require. Tests do the same.
      { find: /^koishi$/, replacement: fileURLToPath(new URL('packages/koishi/node_modules/koishi/lib/index.cjs', import.meta.url)) },
    ],
  },
  ssr: {
    resolve: {
      conditions: ['source'],
      externalConditions: ['source'],
    },
  },
  test: {
    include: ['packages/*/tests/**/*.spec.ts', 'external/*/tests/**/*.spec.ts', 'tests/**/*.spec.ts'],
    exclude: missing ? [...configDefaults.exclude, '**/*.corpus.spec.ts'] : configDefaults.exclude,
    // scripts/test.sh names its own reporters and prints the notice before its closing line.
    reporters: missing ? ['default', { onTestRunEnd: () => console.log(`\n${notice}`) }] : ['default'],
    // Fails a test that opens the checkout's data/ (or DOGU_DATA): test-support/data-guard.ts.
    setupFiles: ['test-support/data-guard.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what a user would see (a page that polls every 2 s, a loaded
    // machine): vitest's default second is a timing margin, not a bound.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // Many files wait on what they start (npm, servers, browsers, child vitests) more than they
    // compute: three at once on two cores, where vitest's default (one fewer than the cores)
    // runs one file at a time. The long ones start first (LongFilesFirst).
    maxWorkers: Math.max(3, availableParallelism() - 1),
    sequence: { sequencer: LongFilesFirst },
    // What the run's files share (npm's cache, the SQL tier's server): test-support/global-setup.ts.
    globalSetup: ['test-support/global-setup.ts'],
    // Packages outside the workspace that also publish a `source` condition (TypeScript
    // sources, pulled in by the MCP SDK, the AI SDK and OpenAI Agents' MCP client): inlined, so vite transforms them rather than Node.
    server: { deps: { inline: ['@modelcontextprotocol/sdk', 'eventsource', 'eventsource-parser', 'ai', /\/node_modules\/@ai-sdk\//, /\/node_modules\/@openai\/agents/, '@modelcontextprotocol/client'] } },
    typecheck: {
      enabled: true,
      include: ['packages/*/tests/**/*.test-d.ts'],
    },
  },
})
