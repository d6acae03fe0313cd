// koishi-plugin-dogu as a Koishi user gets it: the packed tarballs (`yarn pack:all`, through
// test-support/tarballs.ts: what a registry would serve), a Koishi instance installed with
// plain npm in a temporary folder outside the workspace (koishi, its loader, the console, the
// mock adapter, the memory database: what create-koishi gives), then the tarballs added with
// plain npm, as Koishi's market adds a plugin: no workspace, no hoisting limits, no
// --legacy-peer-deps, no overrides, no NODE_PATH. npm must resolve no cordis 4 anywhere (npm ≥ 7
// installs required peers, so one in the graph would pull it in), and Koishi's own worker,
// started from koishi.yml, must load Dogu, a tool plugin, the packs and (through @dogu/mcp, from
// the Dogu plugin's `mcp` config) a stdio MCP server's tool, carry a chat approval
// through, serve Dogu's console page and answer its API over Koishi's console socket, and log
// no error or warning. One install per run: it takes a while (npm's cache helps).
//
// It tests what is built: run `yarn build` first (it says so when lib/ or dist/ is missing).
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, type NpmInstallResult, packedTarballs, repoRoot } from '../../../test-support/tarballs'
import { Instance, WAIT, within } from './koishi-worker'
import { freePort } from '../../../test-support/free-port'

const KOISHI_PACKAGE = resolve(__dirname, '..')
const FIXTURES = resolve(__dirname, 'loader-instance')
/** The packs a Koishi bot installs next to the plugin, and @dogu/mcp for `mcp.servers`; they must not bring cordis 4 either. */
const PACKS = ['@dogu/fs', '@dogu/shell', '@dogu/http', '@dogu/mcp']
const INSTALL_TIMEOUT = 10 * 60_000
const KEEP = process.env.DOGU_KEEP_INSTALL === '1'

interface Manifest {
  name: string
  main?: string
  dependencies?: Record<string, string>
}

/** koishi-plugin-dogu, the packs, and every workspace package they depend on at run time. */
function packagesToInstall() {
  const all = new Map<string, { folder: string; manifest: Manifest }>()
  for (const base of ['packages', 'external']) {
    for (const name of readdirSync(join(repoRoot, base))) {
      const file = join(repoRoot, base, name, 'package.json')
      if (!existsSync(file)) continue
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest
      all.set(manifest.name, { folder: join(repoRoot, base, name), manifest })
    }
  }
  const wanted = new Set<string>()
  const visit = (name: string) => {
    if (wanted.has(name) || !all.has(name)) return
    wanted.add(name)
    for (const dependency of Object.keys(all.get(name)!.manifest.dependencies ?? {})) visit(dependency)
  }
  for (const name of ['koishi-plugin-dogu', ...PACKS]) visit(name)
  return [...wanted].sort().map((name) => ({ name, ...all.get(name)! }))
}

interface Ran {
  stdout: string
  stderr: string
}

/** Runs a command to its end, within `timeout`; rejects with its output when it fails. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number }): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`${command} ${args.join(' ')} did not finish within ${options.timeout} ms\n${stdout}\n${stderr}`))
    }, options.timeout)
    child.once('error', (error) => {
      clearTimeout(timer)
      fail(error)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) done({ stdout, stderr })
      else fail(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}\n${stdout}\n${stderr}`))
    })
  })
}

/** npm's complaints that mean a broken graph (a peer conflict npm worked around, a missing version). */
const NPM_TROUBLE = /ERESOLVE|peer dep|conflict|notarget|invalid|override/i

function npmWarnings(installed: NpmInstallResult) {
  return installed.output.split('\n').filter((line) => /^npm (warn|error)/i.test(line))
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** A bot's own plugin: it loads the packs it installed (CommonJS, as Koishi loads plugins). */
const PACKS_PLUGIN = `// koishi-plugin-dogu-packs: the tool packs installed from their tarballs, loaded on ctx.tools.
const { resolve } = require('node:path')

exports.name = 'dogu-packs'
exports.inject = ['tools']

exports.apply = (ctx) => {
  const workspace = resolve('data/workspace')
  ctx.plugin(require('@dogu/fs').default, { workspace })
  ctx.plugin(require('@dogu/shell').default, { workspace })
  ctx.plugin(require('@dogu/http').default, {})
}
`

/** A stdio MCP server of the bot's own, on the SDK that @dogu/mcp brought along. */
const ECHO_SERVER = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'

const server = new McpServer({ name: 'echo', version: '1.0.0' })
server.registerTool('say', { description: 'Says hello', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'hello from MCP' }] }))
await server.connect(new StdioServerTransport())
`

const koishiYml = (port: number) => `plugins:
  owner-probe: {}
  server:
    host: 127.0.0.1
    port: ${port}
  console:
    open: false
  mock:
    selfId: '514'
  database-memory: {}
  dogu:
    notices:
      enabled: false
    mcp:
      servers:
        echo:
          command: node
          args: [local/echo-mcp.mjs]
          trusted: true
  notes: {}
  dogu-packs: {}
`


/** A console page's socket, as the page opens it: `send` calls a console listener. */
async function consoleSocket(url: string, WebSocket: any) {
  const socket = new WebSocket(url)
  const data = new Map<string, unknown>()
  const waiting = new Map<number, (body: { value?: unknown; error?: unknown }) => void>()
  socket.on('message', (raw: Buffer) => {
    const message = JSON.parse(String(raw))
    if (message.type === 'data') data.set(message.body.key, message.body.value)
    else if (message.type === 'response') waiting.get(message.body.id)?.(message.body)
  })
  await within(new Promise<void>((done, fail) => {
    socket.once('open', () => done())
    socket.once('error', fail)
  }), 'the console socket opening')
  let next = 0
  return {
    data,
    send(type: string, ...args: unknown[]) {
      const id = ++next
      return within(new Promise<{ value?: unknown; error?: unknown }>((done) => {
        waiting.set(id, done)
        socket.send(JSON.stringify({ type, args, id }))
      }), `the console's answer to ${type}`)
    },
    close: () => socket.close(),
  }
}

const dirs: string[] = []
let instance: Instance | undefined
let bot = ''
let summary = ''
let installed: { koishi: NpmInstallResult; dogu: NpmInstallResult } | undefined
let port = 0
let tools: string[] = []

beforeAll(async () => {
  const packages = packagesToInstall()
  for (const { name, folder, manifest } of packages) {
    const entry = join(folder, manifest.main ?? 'lib/index.js')
    if (!existsSync(entry)) throw new Error(`${name} is not built (${relative(repoRoot, entry)} is missing): run \`yarn build\``)
  }
  if (!existsSync(join(KOISHI_PACKAGE, 'dist/index.js'))) throw new Error('the console page of koishi-plugin-dogu is not built (packages/koishi/dist): run `yarn build`')
  // The tarballs, as `yarn npm publish` would upload them (packed now when stale).
  const tarballs = await packedTarballs()
  const files = packages.map(({ name }) => tarballs[name])

  bot = await mkdtemp(join(tmpdir(), 'dogu-koishi-bot-'))
  dirs.push(bot)
  // A Koishi instance, as create-koishi makes one: koishi, its loader, the console, an
  // adapter, a database; the versions this workspace tests with.
  const koishiDev = JSON.parse(await readFile(join(KOISHI_PACKAGE, 'package.json'), 'utf8')).devDependencies as Record<string, string>
  const instanceDependencies = ['koishi', '@koishijs/loader', '@koishijs/plugin-console', '@koishijs/plugin-mock', '@koishijs/plugin-database-memory']
  await writeFile(join(bot, 'package.json'), JSON.stringify({
    name: 'dogu-koishi-bot',
    private: true,
    dependencies: Object.fromEntries(instanceDependencies.map((name) => [name, koishiDev[name]])),
  }, null, 2))
  await mkdir(join(bot, 'data/workspace'), { recursive: true })
  const koishi = await npmInstall(bot, [], { timeoutMs: INSTALL_TIMEOUT })

  // The bot's own plugins, as local packages of the instance (a tool plugin, the test's probe,
  // the packs), and Dogu from its tarballs: one `npm install`, as the market runs it.
  await cp(join(FIXTURES, 'notes'), join(bot, 'local/notes'), { recursive: true })
  await cp(join(FIXTURES, 'probe'), join(bot, 'local/owner-probe'), { recursive: true })
  await mkdir(join(bot, 'local/dogu-packs'))
  await writeFile(join(bot, 'local/dogu-packs/package.json'), JSON.stringify({ name: 'koishi-plugin-dogu-packs', version: '0.0.0', private: true, main: 'index.cjs', peerDependencies: { koishi: '^4.18.0' } }, null, 2))
  await writeFile(join(bot, 'local/dogu-packs/index.cjs'), PACKS_PLUGIN)
  await writeFile(join(bot, 'local/echo-mcp.mjs'), ECHO_SERVER)
  const dogu = await npmInstall(bot, [...files, './local/notes', './local/owner-probe', './local/dogu-packs'], { timeoutMs: INSTALL_TIMEOUT })
  installed = { koishi, dogu }

  const added = dogu.nodeModulesBytes - koishi.nodeModulesBytes
  summary = `koishi-plugin-dogu from tarballs with plain npm: Koishi instance ${seconds(koishi.durationMs)}, Dogu and the packs ${seconds(dogu.durationMs)}; node_modules ${formatBytes(dogu.nodeModulesBytes)} (Koishi ${formatBytes(koishi.nodeModulesBytes)}, Dogu and the packs +${formatBytes(added)})`
  console.log(summary)
}, 2 * INSTALL_TIMEOUT + 5 * 60_000)

afterAll(async () => {
  try {
    await instance?.stop()
  } catch {
    // Killed by stop().
  }
  if (KEEP) {
    console.log(`kept: ${dirs.join(' ')}`)
    return
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
}, WAIT * 2)

describe('koishi-plugin-dogu installed from its tarballs with plain npm in a Koishi instance', () => {
  it('npm resolves no cordis 4: `npm ls cordis` lists only Koishi\'s cordis 3, and the graph has no peer conflict', async () => {
    const env = npmEnv()
    const ls = await run('npm', ['ls', 'cordis', '--all', '--json'], { cwd: bot, env, timeout: 60_000 })
    const versions = new Set<string>()
    const walk = (node: { version?: string; dependencies?: Record<string, any> }, name?: string) => {
      if (name === 'cordis' && node.version) versions.add(node.version)
      for (const [child, value] of Object.entries(node.dependencies ?? {})) walk(value, child)
    }
    walk(JSON.parse(ls.stdout))
    const tree = (await run('npm', ['ls', 'cordis', '--all'], { cwd: bot, env, timeout: 60_000 })).stdout
    console.log(`npm ls cordis: ${[...versions].join(', ')}\n${tree}`)
    expect([...versions]).not.toHaveLength(0)
    for (const version of versions) expect(version).toMatch(/^3\./)
    // Nothing of the Cordis 4 side came along: not the Cordis host, not the standalone console.
    for (const name of ['@dogu/cordis', '@dogu/webui', '@cordisjs/plugin-loader']) expect(existsSync(join(bot, 'node_modules', name)), name).toBe(false)
    // `npm ls` exits non-zero on a missing, invalid or extraneous package.
    await run('npm', ['ls', '--all'], { cwd: bot, env, timeout: 60_000 })
    // npm worked around nothing (an ERESOLVE it overrode would be a warning here).
    const warnings = [...npmWarnings(installed!.koishi), ...npmWarnings(installed!.dogu)]
    expect(warnings.filter((line) => NPM_TROUBLE.test(line) || /dogu/i.test(line))).toEqual([])
    // Every @dogu package is the tarball's: none came from the registry.
    const lock = JSON.parse(await readFile(join(bot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; link?: boolean }> }
    const dogu = Object.entries(lock.packages).filter(([path]) => /node_modules\/(@dogu\/[^/]+|koishi-plugin-dogu)$/.test(path))
    expect(dogu.map(([path]) => path.replace(/^.*node_modules\//, '')).sort()).toEqual(packagesToInstall().map((entry) => entry.name).sort())
    for (const [path, entry] of dogu) expect(entry.resolved, path).toMatch(/^file:/)
  }, 4 * 60_000)

  it('ships what a Koishi console extension needs: lib/ and the built page in dist/, no sources, tests or client', async () => {
    const folder = join(bot, 'node_modules/koishi-plugin-dogu')
    const top = readdirSync(folder).sort()
    expect(top.filter((entry) => !/^(LICENSE|CHANGELOG)/i.test(entry))).toEqual(['README.md', 'dist', 'lib', 'package.json'])
    expect(existsSync(join(folder, 'lib/index.cjs'))).toBe(true)
    expect(existsSync(join(folder, 'lib/index.d.ts'))).toBe(true)
    expect(existsSync(join(folder, 'dist/index.js'))).toBe(true)
    const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'))
    // The workspace's `source` condition names src/, which is not shipped; what is shipped is
    // CommonJS (lib/index.cjs), so its declarations are read as CommonJS too.
    expect(JSON.stringify(manifest.exports)).not.toContain('source')
    expect(manifest.type).toBe('commonjs')
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@dogu/core', 'schemastery'])
  })

  it('Koishi\'s worker starts it from koishi.yml: Dogu, a tool plugin, the packs and an MCP server\'s tools load, and a chat approval completes', async () => {
    port = await freePort()
    await writeFile(join(bot, 'koishi.yml'), koishiYml(port))
    const child = fork(join(bot, 'node_modules/koishi/lib/worker'), [], {
      cwd: bot,
      // A user's shell: no NODE_PATH (everything is installed), none of yarn's or npm's variables.
      env: { ...npmEnv(), NODE_PATH: undefined, KOISHI_LOG_LEVEL: '2' },
      // Not the test runner's flags (its `--conditions source` would look for TypeScript sources).
      execArgv: [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    const running = new Instance(child)
    instance = running
    await within(new Promise<void>((resolve, reject) => {
      child.on('message', (message: any) => { if (message?.type === 'start') resolve() })
      child.once('exit', (code) => reject(new Error(`the instance exited (${code}) while starting\n${running.output.join('')}`)))
    }), 'the instance starting')
    await running.until(async () => {
      const status = await running.op<{ database: boolean; background: boolean; tools: string[] }>('status')
      tools = status.tools
      return status.database && status.background && ['save_note', 'http_fetch', 'bash', 'read', 'echo_say'].every((name) => tools.includes(name))
    }, 'the database, ctx.background, the notes tool, the packs\' tools and the MCP server\'s')

    await running.op('initUser', { userId: 'alice', authority: 3 })
    const replies = running.op<string[]>('receive', { userId: 'alice', text: 'dogu.run save_note {"text":"hi"}' })
    let early: string[] | undefined
    void replies.then((value) => { early = value }, () => {})
    await running.until(() => {
      if (early) throw new Error(`dogu.run answered before any question: ${JSON.stringify(early)}`)
      return running.sent.length > 0
    }, 'the chat question')
    expect(running.sent[0]).toContain('save_note(text=hi)')
    await running.op('receive', { userId: 'alice', text: 'y' })
    expect((await replies).join('\n')).toContain('saved “hi”')
    // The MCP server's tool, imported through @dogu/mcp from `dogu.mcp.servers` (read: no question).
    expect((await running.op<string[]>('receive', { userId: 'alice', text: 'dogu.run echo_say {}' })).join('\n')).toContain('hello from MCP')
    expect(running.problems()).toEqual([])
  }, 4 * WAIT)

  it('Koishi\'s console serves the page from dist/ and the API bundled in lib/ answers over the console socket', async () => {
    expect(instance, 'the instance started').toBeDefined()
    const base = `http://127.0.0.1:${port}`
    // ws: what Koishi's console serves its socket with, from the instance's own node_modules.
    const WebSocket = createRequire(join(bot, 'package.json'))('ws')
    const socket = await consoleSocket(`ws://127.0.0.1:${port}/status`, WebSocket)
    try {
      await instance!.until(() => socket.data.has('entry'), 'the console\'s entry list')
      const entries = socket.data.get('entry') as Record<string, { files?: string[] }>
      const files = Object.values(entries).flatMap((entry) => entry.files ?? [])
      const page = files.filter((file) => /^\/@plugin-[^/]+\/(index\.js|style\.css)$/.test(file))
      // Dogu's page is the only plugin entry here: its script and its styles.
      expect(page.map((file) => file.replace(/^.*\//, '')).sort()).toEqual(['index.js', 'style.css'])
      const script = await fetch(`${base}${page.find((file) => file.endsWith('index.js'))}`)
      expect(script.status).toBe(200)
      expect(await script.text()).toContain('dogu/')
      // The page's API: a console listener per method, ConsoleApi from @dogu/webui/console in lib/.
      const listed = await socket.send('dogu/tools.list', {})
      expect(listed.error).toBeUndefined()
      const reply = listed.value as { value?: Array<{ name: string }>; error?: unknown }
      expect(reply.error).toBeUndefined()
      expect(reply.value!.map((tool) => tool.name)).toEqual(expect.arrayContaining(['save_note', 'http_fetch']))
      const invalid = await socket.send('dogu/tools.search', { limit: 'x' })
      expect(invalid.value).toMatchObject({ error: { code: 'INVALID_PAYLOAD' } })
    } finally {
      socket.close()
    }
    expect(instance!.problems()).toEqual([])
  }, 4 * WAIT)

  it('stops on SIGINT, as on Ctrl-C, and logged no error or warning from start to stop', async () => {
    expect(instance, 'the instance started').toBeDefined()
    await instance!.stop()
    expect(instance!.problems()).toEqual([])
    console.log(`${summary}; tools: ${tools.join(', ')}`)
  }, 2 * WAIT)
})
