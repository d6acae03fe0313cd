// `npx dogu-mcp` as docs/mcp.md runs it, from the packed tarballs (`yarn pack:all`) installed
// with plain npm in a fresh directory outside the workspace (with the Cordis 4 overrides of
// docs/getting-started.md#install), configured with @dogu/fs and a local plugin file, and
// reached by the official MCP SDK client (the workspace's @modelcontextprotocol/sdk) over
// stdio: it lists the tools and calls two. Afterwards no process is left in the directory.
// The installed bin answers `--help` and `--version`.
import { execFile } from 'node:child_process'
import { readdirSync, readlinkSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, packedTarballs } from '../../../test-support/tarballs'

/** The overrides of docs/getting-started.md#install (see there why), beside cordis pinned exactly. */
const overrides = { cordis: '4.0.0-beta.5' }

const helloPlugin = `import Schema from 'schemastery'
import { defineTool } from '@dogu/core'

export const name = 'hello-tools'
export const inject = ['tools']

const args = Schema.object({ who: Schema.string().required() })

export function apply(ctx) {
  ctx.tools.define(defineTool({ name: 'hello', description: 'Greet someone', args, traits: { effect: 'read' }, run: ({ who }) => \`hello, \${who}\` }))
}
`

/** Processes whose working directory is `dir` or below it (Linux /proc): what npx started there. */
function processesIn(dir: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`)
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry))
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((done) => setTimeout(done, 100))
  }
  return true
}

describe('npx dogu-mcp from the tarballs, over stdio with the MCP SDK client', () => {
  let dir: string
  let client: Client | undefined
  let stderr = ''
  let install = ''

  beforeAll(async () => {
    const tarballs = await packedTarballs()
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-install-'))
    const installed = await npmInstall(dir, [
      'schemastery@^3.18.0',
      ...['@dogu/schema', '@dogu/core', '@dogu/cordis', '@dogu/fs', '@dogu/mcp'].map((name) => tarballs[name]),
    ], { packageJson: { dependencies: { cordis: '4.0.0-beta.5' } }, overrides, timeoutMs: 240_000 })
    install = `npm install ${(installed.durationMs / 1000).toFixed(1)} s, node_modules ${formatBytes(installed.nodeModulesBytes)}`
    expect(installed.output).not.toMatch(/ERESOLVE|peer dep/i)
    const manifest = JSON.parse(await readFile(join(dir, 'node_modules/@dogu/mcp/package.json'), 'utf8'))
    expect(manifest.bin).toEqual({ 'dogu-mcp': './bin/dogu-mcp.js' })
  }, 600_000)

  afterAll(async () => {
    await client?.close().catch(() => {})
    if (dir) {
      if (!(await until(() => processesIn(dir).length === 0, 5_000))) {
        for (const pid of processesIn(dir)) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {}
        }
      }
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('the installed dogu-mcp answers --help and --version (exit 0), and an unknown option with the usage hint (exit 2)', async () => {
    // npx reads --help and --version itself: the bin gets them after `--`, or run directly.
    const run = (command: string, args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(command, args, { cwd: dir, env: npmEnv(), timeout: 60_000 }, (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      })
    })
    const bin = join(dir, 'node_modules/.bin/dogu-mcp')
    const manifest = JSON.parse(await readFile(join(dir, 'node_modules/@dogu/mcp/package.json'), 'utf8'))
    for (const [command, args] of [[bin, []], ['npx', ['--no', 'dogu-mcp', '--']]] as const) {
      const help = await run(command, [...args, '--help'])
      expect(help.code, help.stderr).toBe(0)
      expect(help.stdout).toMatch(/^Usage: dogu-mcp \[options\] \[config\.json\]\n/)
      expect(await run(command, [...args, '--version'])).toMatchObject({ code: 0, stdout: `${manifest.version}\n` })
      const unknown = await run(command, [...args, '--bogus'])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain('dogu-mcp: unknown option "--bogus" (dogu-mcp takes --help, --version and a config file)\nRun "dogu-mcp --help" for usage.\n')
    }
  }, 120_000)

  it('lists the configured tools and runs calls; closing stdin ends every process', async () => {
    await mkdir(join(dir, 'ws'))
    await writeFile(join(dir, 'ws/note.txt'), 'from the workspace\n')
    await writeFile(join(dir, 'hello-tools.mjs'), helloPlugin)
    // The config format of docs/mcp.md ("dogu-mcp: a Cordis app on stdio").
    await writeFile(join(dir, 'dogu-mcp.json'), JSON.stringify({
      plugins: { '@dogu/fs': { workspace: join(dir, 'ws') }, './hello-tools.mjs': {} },
      mcp: { exclude: ['write', 'edit'] },
    }, null, 2))

    const transport = new StdioClientTransport({ command: 'npx', args: ['--no', 'dogu-mcp', join(dir, 'dogu-mcp.json')], cwd: dir, env: npmEnv() as Record<string, string>, stderr: 'pipe' })
    transport.stderr?.on('data', (chunk) => (stderr += chunk))
    client = new Client({ name: 'dogu-install-test', version: '0.0.0' })
    const started = performance.now()
    await client.connect(transport, { timeout: 60_000 }).catch((error) => {
      throw new Error(`connecting to npx dogu-mcp failed: ${error.message}\nstderr:\n${stderr}`)
    })
    const { tools } = await client.listTools(undefined, { timeout: 30_000 })
    const listed = Math.round(performance.now() - started)
    const names = tools.map((tool) => tool.name).sort()
    expect(names).toEqual(expect.arrayContaining(['glob', 'grep', 'hello', 'list', 'read']))
    expect(names).not.toContain('write')
    expect(names).not.toContain('edit')
    expect(tools.find((tool) => tool.name === 'hello')?.annotations?.readOnlyHint).toBe(true)

    const hello = await client.callTool({ name: 'hello', arguments: { who: 'npm' } }, undefined, { timeout: 30_000 })
    expect(hello.isError ?? false).toBe(false)
    expect(hello.content).toEqual([{ type: 'text', text: 'hello, npm' }])
    const read = await client.callTool({ name: 'read', arguments: { path: 'note.txt' } }, undefined, { timeout: 30_000 })
    expect(read.isError ?? false, JSON.stringify(read.content)).toBe(false)
    expect(JSON.stringify(read.content)).toContain('from the workspace')

    await client.close()
    client = undefined
    expect(await until(() => processesIn(dir).length === 0, 10_000), `processes left in ${dir}: ${processesIn(dir).join(', ')}\nstderr:\n${stderr}`).toBe(true)
    console.log(`npx dogu-mcp (@dogu/mcp + @dogu/fs, cordis 4.0.0-beta.5 + overrides): ${install}; started and listed ${tools.length} tools in ${listed} ms`)
  }, 120_000)
})
