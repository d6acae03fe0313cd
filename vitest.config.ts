import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Workspace packages export their TypeScript sources under the `source` condition,
    // so tests run against src without a build step.
    conditions: ['source'],
  },
  test: {
    include: ['packages/*/tests/**/*.spec.ts', 'external/*/tests/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    typecheck: {
      enabled: true,
      include: ['packages/*/tests/**/*.test-d.ts'],
    },
  },
})
