// yarn conformance [--out <file>]: the official MCP conformance suite's server scenarios
// against Dogu's MCP server (Streamable HTTP, the conformance tools of packages/mcp/tests),
// and against the suite's reference everything-server in the same run when
// DOGU_CONFORMANCE_REFERENCE is a command that starts it (it gets a free port as PORT or in
// place of {port}; its URL is the …/mcp URL it prints, or DOGU_CONFORMANCE_REFERENCE_URL).
// Prints a table and writes the counts to bench-results/conformance.json (gitignored).
// Runs on the sources: test-support/mcp-conformance/report.ts is bundled with esbuild first.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'

const root = resolve(import.meta.dirname, '..')
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'bench-results/conformance.json') } } })

const dir = await mkdtemp(join(tmpdir(), 'dogu-conformance-report-'))
try {
  const outfile = join(dir, 'report.mjs')
  await build({
    entryPoints: [join(root, 'test-support/mcp-conformance/report.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    // The bundle runs from a temporary directory: run-suite.ts, the one file that finds files
    // beside itself (the glob shim, packages/mcp), is pointed at its source directory.
    define: { 'import.meta.dirname': JSON.stringify(join(root, 'test-support/mcp-conformance')) },
    // The SDK's CJS dependencies call require: give the ESM bundle one.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  })
  const { conformanceReport } = await import(pathToFileURL(outfile).href)
  await conformanceReport({
    out: resolve(values.out),
    reference: process.env.DOGU_CONFORMANCE_REFERENCE || undefined,
    referenceUrl: process.env.DOGU_CONFORMANCE_REFERENCE_URL || undefined,
  })
  console.log(`\ncounts written to ${resolve(values.out)}`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
