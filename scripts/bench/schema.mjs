// Dialect conversion per tool schema: uncached (toJsonSchema + convertToDialect, what the
// first definitions() of a tool pays) and cached (what every later toolset pays through
// core's per-schema cache), over the repository's corpus of real-world shapes
// (packages/schema/tests/fixtures/real-world-shapes.ts), bundled from source with esbuild.
import { build } from 'esbuild'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { defineTool, ToolRegistry } from '../../packages/core/lib/index.js'
import { convertToDialect, toJsonSchema } from '../../packages/schema/lib/index.js'
import { formatNs, measureSync, median, printTable, root, writeResults } from './harness.mjs'

async function loadShapes() {
  const outfile = path.join(root, 'node_modules/.cache/dogu-bench/shapes.mjs')
  const external = Object.keys(JSON.parse(readFileSync(path.join(root, 'packages/schema/package.json'), 'utf8')).dependencies ?? {})
  await build({
    entryPoints: [path.join(root, 'packages/schema/tests/fixtures/real-world-shapes.ts')],
    bundle: true,
    external,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
  })
  return (await import(`${pathToFileURL(outfile).href}?${Date.now()}`)).shapes
}

const shapes = await loadShapes()
const dialects = ['json', 'openai', 'anthropic', 'gemini']
const rows = []
const figures = { shapes: shapes.length }
for (const dialect of dialects) {
  // Uncached: a fresh conversion of each schema, the median over the corpus.
  const perShape = shapes.map(({ schema, locale }) => measureSync(() => convertToDialect(toJsonSchema(schema, { locale }), dialect), { iterations: 50, rounds: 5, warmup: 1 }))
  const uncachedNs = median(perShape)
  const worstNs = Math.max(...perShape)
  // Cached: one tool per shape in a registry; a new toolset's definitions() hits core's cache.
  // (A root that is not an object, such as a lazy recursive root, is no tool's arguments.)
  const registry = new ToolRegistry()
  shapes.forEach(({ schema }, i) => {
    try {
      registry.define(defineTool({ name: `shape_${i}`, description: 'A shape', args: schema, traits: { effect: 'read' }, run: () => '' }))
    } catch (error) {
      if (error?.code !== 'INVALID_ARGS_SCHEMA') throw error
    }
  })
  const tools = registry.list().length
  registry.toolset({ session: { id: 'bench' } }).definitions(dialect)
  const cachedNs = measureSync(() => registry.toolset({ session: { id: 'bench' } }).definitions(dialect), { iterations: 200, rounds: 7, warmup: 2 }) / tools
  figures.tools = tools
  figures[dialect] = { uncachedNs, worstNs, cachedNs, ratio: uncachedNs / cachedNs }
  rows.push({ dialect, 'uncached (median)': formatNs(uncachedNs), 'uncached (slowest)': formatNs(worstNs), 'cached, per tool': formatNs(cachedNs), ratio: `${(uncachedNs / cachedNs).toFixed(0)}×` })
}
printTable(`Dialect conversion per schema, ${shapes.length} real-world shapes`, rows)
writeResults('schema', figures)
