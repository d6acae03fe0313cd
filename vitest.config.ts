import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Workspace packages export their TypeScript sources under the `source` condition,
    // so tests run against src without a build step.
    conditions: ['source'],
  },
  ssr: {
    resolve: {
      conditions: ['source'],
      externalConditions: ['source'],
    },
  },
  test: {
    include: ['packages/*/tests/**/*.spec.ts', 'external/*/tests/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The soak tests compare heap sizes after a forced GC.
    execArgv: ['--expose-gc'],
    typecheck: {
      enabled: true,
      include: ['packages/*/tests/**/*.test-d.ts'],
    },
  },
})
