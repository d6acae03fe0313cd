// The MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli, pinned: 2.x needs Node
// 22.19) against Dogu's server with the demo tools: over stdio it starts `dogu-mcp` (bundled
// from the sources), over HTTP it calls the Streamable HTTP endpoint. What it prints on stdout
// is the JSON result; anything on stderr but its v1 deprecation notice fails the test.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardOutput } from '../../../test-support/log-guard'
import { type Harness, startHarness } from './server-harness'

const INSPECTOR_BUILD = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build')
/** What 1.0.3 prints on stderr on every run. */
const DEPRECATION = /^\s*(⚠️\s+@modelcontextprotocol\/inspector v1 is deprecated\.|Upgrade:\s+npx @modelcontextprotocol\/inspector@latest|v1 receives security fixes only\.)\s*$/

/**
 * Runs `mcp-inspector-cli --cli <target…> <args…>` and returns its stdout as JSON. The working
 * directory is the CLI's own build folder: 1.0.3 checks `../package.json` against the working
 * directory but imports it relative to itself, and finds its own only from there.
 */
function inspect(target: string[], args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(INSPECTOR_BUILD, 'cli.js'), '--cli', ...target, ...args], { cwd: INSPECTOR_BUILD, timeout: 20_000 }, (error, stdout, stderr) => {
      guardOutput(stderr.split('\n').filter((line) => !DEPRECATION.test(line)).join('\n'), 'mcp-inspector-cli')
      if (error) return reject(new Error(`mcp-inspector-cli ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
}

describe('the MCP Inspector CLI against Dogu\'s server', () => {
  let dir: string
  let http: Harness
  const targets: Record<'stdio' | 'http', string[]> = { stdio: [], http: [] }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-inspector-'))
    const cli = join(dir, 'dogu-mcp.mjs')
    await build({
      entryPoints: [resolve(import.meta.dirname, 'fixtures/dogu-mcp-entry.ts')],
      outfile: cli,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['source'],
      // The SDK's CJS dependencies call require: give the ESM bundle one.
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      logLevel: 'error',
    })
    const config = join(dir, 'dogu-mcp.json')
    await writeFile(config, JSON.stringify({
      dogu: { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') } },
      plugins: { [resolve(import.meta.dirname, 'fixtures/demo-tools.mjs')]: {} },
    }))
    targets.stdio = [process.execPath, cli, config]
    http = await startHarness('http')
    targets.http = [http.endpoint!.url.href, '--transport', 'http']
  }, 60_000)
  afterAll(async () => {
    await http?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  describe.each(['stdio', 'http'] as const)('over %s', (kind) => {
    it('--method tools/list lists the tools with their schemas', async () => {
      const { tools } = await inspect(targets[kind], ['--method', 'tools/list'])
      expect(tools.map((tool: { name: string }) => tool.name)).toEqual(['broken', 'cancellations', 'deploy', 'grow', 'lookup', 'notes', 'picture', 'slow', 'task_cancel', 'task_status', 'whoami'])
      expect(tools.find((tool: { name: string }) => tool.name === 'lookup')).toMatchObject({
        description: 'Find a word',
        inputSchema: { type: 'object', properties: { q: { type: 'string', minLength: 1, description: 'The word' } }, required: ['q'] },
        annotations: { readOnlyHint: true, destructiveHint: false },
      })
    })

    it('--method tools/call --tool-name … --tool-arg … calls a tool', async () => {
      const result = await inspect(targets[kind], ['--method', 'tools/call', '--tool-name', 'lookup', '--tool-arg', 'q=tea'])
      expect(result.content).toEqual([{ type: 'text', text: 'found tea' }])
      expect(result.isError).toBeUndefined()
    })
  })
})
