import { resolve } from 'node:path'
import { build } from 'esbuild'

/**
 * Bundles a TypeScript file with the workspace's sources, so a child process runs it without a
 * build step. `@openai/agents` stays outside: the child loads the one found from `outfile`,
 * as an app's import of the adapter finds the framework installed beside it.
 */
export async function bundle(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [resolve(import.meta.dirname, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    external: ['@openai/agents', '@openai/agents/*'],
    // Bundled CommonJS dependencies call require: give the ESM bundle one.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  })
  return outfile
}
