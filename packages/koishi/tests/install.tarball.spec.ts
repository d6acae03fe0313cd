// koishi-plugin-dogu as a Koishi owner gets it (docs/koishi.md, "安装" / "Install"): the packed
// tarballs (`yarn pack:all`, through test-support/tarballs.ts: what a registry would serve), a
// Koishi instance installed with plain npm in a temporary folder outside the workspace (koishi,
// its loader, the console, the mock adapter, a database: what create-koishi gives), then the
// tarballs added with plain npm, as Koishi's market adds a plugin: no workspace, no hoisting
// limits, no --legacy-peer-deps, no overrides, no NODE_PATH. Two instances:
//
// - koishi-plugin-dogu alone: its tarball and the two it depends on (@dogu/core, @dogu/schema),
//   nothing else of Dogu's, on SQLite as docs/koishi.md has an owner install it
//   (`@koishijs/plugin-database-sqlite` aliased to `@minatojs/driver-sqlite` 4.7.0). Koishi's
//   worker starts it from koishi.yml, a tool plugin's tool and Dogu's own are defined, a chat
//   approval completes, the console serves Dogu's page and API, SQLite writes its file.
// - with @dogu/mcp and the packs: the Dogu plugin's `mcp` config imports a stdio MCP server's
//   tool, and a bot plugin loads @dogu/fs, @dogu/shell and @dogu/http.
//
// And what an owner who gives npm every tarball of dist-packages/ gets, in the new instance
// before Dogu and on top of the working one: npm refuses (@dogu/cordis and @dogu/webui bring
// cordis 4), with the errors docs/koishi.md quotes, and leaves the instance as it was.
//
// In both, npm must resolve no cordis 4 anywhere (npm ≥ 7 installs required peers, so one in
// the graph would pull it in), and nothing may log an error or a warning. One install per
// instance: it takes a while (npm's cache helps).
//
// It tests what is built: run `yarn build` first (it says so when lib/ or dist/ is missing).
import { fork, spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, type NpmInstallResult, npmRegistry, packedTarballs, repoRoot } from '../../../test-support/tarballs'
import { Instance, WAIT, within } from './koishi-worker'
import { freePort } from '../../../test-support/free-port'

const KOISHI_PACKAGE = resolve(__dirname, '..')
const FIXTURES = resolve(__dirname, 'loader-instance')
/** The packs a Koishi bot installs next to the plugin, and @dogu/mcp for `mcp.servers`; they must not bring cordis 4 either. */
const PACKS = ['@dogu/fs', '@dogu/shell', '@dogu/http', '@dogu/mcp']
const INSTALL_TIMEOUT = 10 * 60_000
const KEEP = process.env.DOGU_KEEP_INSTALL === '1'
/** The versions this workspace tests with (packages/koishi's devDependencies). */
const TESTED = JSON.parse(readFileSync(join(KOISHI_PACKAGE, 'package.json'), 'utf8')).devDependencies as Record<string, string>
/**
 * SQLite as docs/koishi.md has an owner install it: the registry's
 * `@koishijs/plugin-database-sqlite` is 3.9.0, which fails on Koishi 4.18 (`defineDriver is
 * not a function`), so the name is an npm alias of the driver 4.x is made of, and koishi.yml's
 * `database-sqlite` finds it.
 */
const SQLITE = { '@koishijs/plugin-database-sqlite': `npm:@minatojs/driver-sqlite@${TESTED['@minatojs/driver-sqlite']}` }
const MEMORY = { '@koishijs/plugin-database-memory': TESTED['@koishijs/plugin-database-memory'] }

interface Manifest {
  name: string
  main?: string
  dependencies?: Record<string, string>
}

/** Every workspace package under packages/ and external/, by name. */
function workspacePackages() {
  const all = new Map<string, { folder: string; manifest: Manifest }>()
  for (const base of ['packages', 'external']) {
    for (const name of readdirSync(join(repoRoot, base))) {
      const file = join(repoRoot, base, name, 'package.json')
      if (!existsSync(file)) continue
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest
      all.set(manifest.name, { folder: join(repoRoot, base, name), manifest })
    }
  }
  return all
}

/** `wanted` and every workspace package they depend on at run time: the tarballs an owner names to npm. */
function withDependencies(wanted: string[]) {
  const all = workspacePackages()
  const found = new Set<string>()
  const visit = (name: string) => {
    if (found.has(name) || !all.has(name)) return
    found.add(name)
    for (const dependency of Object.keys(all.get(name)!.manifest.dependencies ?? {})) visit(dependency)
  }
  for (const name of wanted) visit(name)
  return [...found].sort().map((name) => ({ name, ...all.get(name)! }))
}

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a command to its end, within `timeout`; rejects with its output when it fails, unless `failing` is set. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number; failing?: boolean }): Promise<Ran> {
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
      if (code === 0 || options.failing) done({ code, stdout, stderr })
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

/** koishi.yml of the instance with koishi-plugin-dogu alone: the database section is the one docs/koishi.md shows. */
const aloneYml = (port: number) => `plugins:
  owner-probe: {}
  server:
    host: 127.0.0.1
    port: ${port}
  console:
    open: false
  mock:
    selfId: '514'
  database-sqlite:
    path: data/koishi.db
  dogu:
    notices:
      enabled: false
  notes: {}
`

/** koishi.yml of the instance with @dogu/mcp and the packs. */
const packsYml = `plugins:
  owner-probe: {}
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

interface Bot {
  dir: string
  /** The Dogu packages installed from their tarballs. */
  dogu: string[]
  installed: { koishi: NpmInstallResult; dogu: NpmInstallResult }
  summary: string
}

const dirs: string[] = []

let packed: Promise<Record<string, string>> | undefined

/**
 * The tarballs, as `yarn npm publish` would upload them: packed once for the file when stale,
 * after checking that what they are made of is built.
 */
function builtTarballs() {
  packed ??= (async () => {
    for (const { name, folder, manifest } of withDependencies(['koishi-plugin-dogu', ...PACKS])) {
      const entry = join(folder, manifest.main ?? 'lib/index.js')
      if (!existsSync(entry)) throw new Error(`${name} is not built (${relative(repoRoot, entry)} is missing): run \`yarn build\``)
    }
    if (!existsSync(join(KOISHI_PACKAGE, 'dist/index.js'))) throw new Error('the console page of koishi-plugin-dogu is not built (packages/koishi/dist): run `yarn build`')
    return packedTarballs()
  })()
  return packed
}

/**
 * A Koishi instance as create-koishi makes one (koishi, its loader, the console, the mock
 * adapter, `database`), then `wanted` from their tarballs with the Dogu packages they depend
 * on, the bot's own plugins (`local/` of the instance: the notes tool plugin, the test's probe,
 * and what `local` adds) in one `npm install`, as the market runs it.
 */
async function installBot(options: {
  database: Record<string, string>
  wanted: string[]
  local?: (dir: string) => Promise<string[]>
  /** Runs in the installed Koishi instance before Dogu is added. */
  first?: (dir: string) => Promise<void>
}): Promise<Bot> {
  const packages = withDependencies(options.wanted)
  const tarballs = await builtTarballs()
  const files = packages.map(({ name }) => tarballs[name])

  const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-bot-'))
  dirs.push(dir)
  const base = ['koishi', '@koishijs/loader', '@koishijs/plugin-console', '@koishijs/plugin-mock']
  await writeFile(join(dir, 'package.json'), JSON.stringify({
    name: 'dogu-koishi-bot',
    private: true,
    dependencies: { ...Object.fromEntries(base.map((name) => [name, TESTED[name]])), ...options.database },
  }, null, 2))
  // create-koishi makes data/; the SQLite driver does not create its folder.
  await mkdir(join(dir, 'data/workspace'), { recursive: true })
  const koishi = await npmInstall(dir, [], { timeoutMs: INSTALL_TIMEOUT })
  await options.first?.(dir)

  await cp(join(FIXTURES, 'notes'), join(dir, 'local/notes'), { recursive: true })
  await cp(join(FIXTURES, 'probe'), join(dir, 'local/owner-probe'), { recursive: true })
  const local = ['./local/notes', './local/owner-probe', ...(await options.local?.(dir) ?? [])]
  const dogu = await npmInstall(dir, [...files, ...local], { timeoutMs: INSTALL_TIMEOUT })

  const names = packages.map(({ name }) => name)
  const added = dogu.nodeModulesBytes - koishi.nodeModulesBytes
  const summary = `${names.join(' + ')} from tarballs with plain npm: Koishi instance ${seconds(koishi.durationMs)}, Dogu ${seconds(dogu.durationMs)}; node_modules ${formatBytes(dogu.nodeModulesBytes)} (Koishi ${formatBytes(koishi.nodeModulesBytes)}, Dogu +${formatBytes(added)})`
  console.log(summary)
  return { dir, dogu: names, installed: { koishi, dogu }, summary }
}

/** npm resolved no cordis 4 (`npm ls cordis` lists only Koishi's cordis 3), no peer conflict, and every @dogu package is the tarball's. */
async function expectKoishiGraph(bot: Bot) {
  const env = npmEnv()
  const ls = await run('npm', ['ls', 'cordis', '--all', '--json'], { cwd: bot.dir, env, timeout: 60_000 })
  const versions = new Set<string>()
  const walk = (node: { version?: string; dependencies?: Record<string, any> }, name?: string) => {
    if (name === 'cordis' && node.version) versions.add(node.version)
    for (const [child, value] of Object.entries(node.dependencies ?? {})) walk(value, child)
  }
  walk(JSON.parse(ls.stdout))
  const tree = (await run('npm', ['ls', 'cordis', '--all'], { cwd: bot.dir, env, timeout: 60_000 })).stdout
  console.log(`npm ls cordis: ${[...versions].join(', ')}\n${tree}`)
  expect([...versions]).not.toHaveLength(0)
  for (const version of versions) expect(version).toMatch(/^3\./)
  // Nothing of the Cordis 4 side came along: not the Cordis host, not the standalone console.
  for (const name of ['@dogu/cordis', '@dogu/webui', '@cordisjs/plugin-loader']) expect(existsSync(join(bot.dir, 'node_modules', name)), name).toBe(false)
  // `npm ls` exits non-zero on a missing, invalid or extraneous package.
  await run('npm', ['ls', '--all'], { cwd: bot.dir, env, timeout: 60_000 })
  // npm worked around nothing (an ERESOLVE it overrode would be a warning here).
  const warnings = [...npmWarnings(bot.installed.koishi), ...npmWarnings(bot.installed.dogu)]
  expect(warnings.filter((line) => NPM_TROUBLE.test(line) || /dogu/i.test(line))).toEqual([])
  // The Dogu packages are exactly the ones named, each the tarball's: none came from the registry.
  expect(await doguInLock(bot.dir)).toEqual(bot.dogu)
  const lock = JSON.parse(await readFile(join(bot.dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> }
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (/node_modules\/(@dogu\/[^/]+|koishi-plugin-dogu)$/.test(path)) expect(entry.resolved, path).toMatch(/^file:/)
  }
}

/** The Dogu packages npm's lock file lists in an instance. */
async function doguInLock(dir: string) {
  if (!existsSync(join(dir, 'package-lock.json'))) return []
  const lock = JSON.parse(await readFile(join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
  return Object.keys(lock.packages).filter((path) => /node_modules\/(@dogu\/[^/]+|koishi-plugin-dogu)$/.test(path)).map((path) => path.replace(/^.*node_modules\//, '')).sort()
}

interface EveryTarball {
  code: number | null
  output: string
  /** The instance's package.json and Dogu packages, before and after. */
  before: { manifest: string; dogu: string[] }
  after: { manifest: string; dogu: string[]; webui: boolean }
}

/** What an owner who gives npm every tarball of dist-packages/ gets in `dir`. */
async function installEveryTarball(dir: string): Promise<EveryTarball> {
  const state = async () => ({ manifest: await readFile(join(dir, 'package.json'), 'utf8'), dogu: await doguInLock(dir) })
  const before = await state()
  const every = Object.values(await builtTarballs())
  const args = ['install', ...every, '--registry', await npmRegistry(), '--no-audit', '--no-fund', '--no-update-notifier']
  const npm = await run('npm', args, { cwd: dir, timeout: INSTALL_TIMEOUT, failing: true })
  return { code: npm.code, output: `${npm.stdout}${npm.stderr}`, before, after: { ...(await state()), webui: existsSync(join(dir, 'node_modules/@dogu/webui')) } }
}

/** npm refused, and the instance is as it was. */
function expectRefusedAndUnchanged(every: EveryTarball) {
  expect(every.code, every.output).not.toBe(0)
  expect(every.after).toEqual({ ...every.before, webui: false })
}

/** Koishi's worker (what `koishi start` forks) on the instance's koishi.yml, until it says it started. */
async function startInstance(dir: string, yml: string) {
  await writeFile(join(dir, 'koishi.yml'), yml)
  const child = fork(join(dir, 'node_modules/koishi/lib/worker'), [], {
    cwd: dir,
    // A user's shell: no NODE_PATH (everything is installed), none of yarn's or npm's variables.
    env: { ...npmEnv(), NODE_PATH: undefined, KOISHI_LOG_LEVEL: '2' },
    // Not the test runner's flags (its `--conditions source` would look for TypeScript sources).
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const running = new Instance(child)
  await within(new Promise<void>((resolve, reject) => {
    child.on('message', (message: any) => { if (message?.type === 'start') resolve() })
    child.once('exit', (code) => reject(new Error(`the instance exited (${code}) while starting\n${running.output.join('')}`)))
  }), 'the instance starting')
  return running
}

/** Waits for the database, ctx.background and `tools`; returns every tool defined then. */
async function toolsDefined(running: Instance, tools: string[]) {
  let defined: string[] = []
  await running.until(async () => {
    const status = await running.op<{ database: boolean; background: boolean; tools: string[] }>('status')
    defined = status.tools
    return status.database && status.background && tools.every((name) => defined.includes(name))
  }, `the database, ctx.background and ${tools.join(', ')}`)
  return defined
}

/** alice's write call through `dogu.run` is asked about in the chat, her `y` runs it. */
async function chatApproval(running: Instance) {
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
}

afterAll(async () => {
  if (KEEP) {
    console.log(`kept: ${dirs.join(' ')}`)
    return
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
}, WAIT * 2)

describe('koishi-plugin-dogu alone from its tarball (with @dogu/core and @dogu/schema), on SQLite, in a Koishi instance', () => {
  let bot: Bot
  let instance: Instance | undefined
  let port = 0
  let tools: string[] = []

  beforeAll(async () => {
    bot = await installBot({ database: SQLITE, wanted: ['koishi-plugin-dogu'] })
  }, 2 * INSTALL_TIMEOUT + 5 * 60_000)

  afterAll(async () => {
    try {
      await instance?.stop()
    } catch {
      // Killed by stop().
    }
  }, WAIT * 2)

  it('needs exactly three tarballs: koishi-plugin-dogu and the two it depends on; npm resolves no cordis 4 and no peer conflict', async () => {
    expect(bot.dogu).toEqual(['@dogu/core', '@dogu/schema', 'koishi-plugin-dogu'])
    await expectKoishiGraph(bot)
    // The optional peer is not installed with it.
    expect(existsSync(join(bot.dir, 'node_modules/@dogu/mcp'))).toBe(false)
  }, 4 * 60_000)

  it('ships what a Koishi console extension needs: lib/ and the built page in dist/, no sources, tests or client', async () => {
    const folder = join(bot.dir, 'node_modules/koishi-plugin-dogu')
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

  it('Koishi\'s worker starts it from koishi.yml on SQLite: a tool plugin\'s tool and Dogu\'s own are defined, and a chat approval completes', async () => {
    port = await freePort()
    instance = await startInstance(bot.dir, aloneYml(port))
    tools = await toolsDefined(instance, ['save_note', 'task_status', 'task_cancel'])
    await chatApproval(instance)
    expect(instance.problems()).toEqual([])
  }, 4 * WAIT)

  it('Koishi\'s console serves the page from dist/ and the API bundled in lib/ answers over the console socket', async () => {
    expect(instance, 'the instance started').toBeDefined()
    const base = `http://127.0.0.1:${port}`
    // ws: what Koishi's console serves its socket with, from the instance's own node_modules.
    const WebSocket = createRequire(join(bot.dir, 'package.json'))('ws')
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
      expect(reply.value!.map((tool) => tool.name)).toEqual(expect.arrayContaining(['save_note', 'task_status']))
      const invalid = await socket.send('dogu/tools.search', { limit: 'x' })
      expect(invalid.value).toMatchObject({ error: { code: 'INVALID_PAYLOAD' } })
    } finally {
      socket.close()
    }
    expect(instance!.problems()).toEqual([])
  }, 4 * WAIT)

  it('stops on SIGINT, as on Ctrl-C, with SQLite\'s file written and no error or warning logged from start to stop', async () => {
    expect(instance, 'the instance started').toBeDefined()
    await instance!.stop()
    expect(instance!.problems()).toEqual([])
    expect((await stat(join(bot.dir, 'data/koishi.db'))).size).toBeGreaterThan(0)
    console.log(`${bot.summary}; tools: ${tools.join(', ')}`)
  }, 2 * WAIT)

  it('given every tarball of dist-packages/ on top, npm refuses the cordis 4 that @dogu/cordis peers, and the working instance is left as it was', async () => {
    // What docs/koishi.md quotes. When this fails, the all-tarballs install may work: the docs change with it.
    const every = await installEveryTarball(bot.dir)
    expect(every.output).toMatch(/npm error Conflicting peer dependency: cordis@4\./)
    expect(every.output).toMatch(/peer cordis@"4\.[^"]*" from @dogu\/cordis/)
    expectRefusedAndUnchanged(every)
    expect(every.before.dogu).toEqual(bot.dogu)
  }, INSTALL_TIMEOUT + 60_000)
})

describe('koishi-plugin-dogu with @dogu/mcp and the packs from their tarballs in a Koishi instance', () => {
  let bot: Bot
  let instance: Instance | undefined
  let everyFirst: EveryTarball

  beforeAll(async () => {
    bot = await installBot({
      database: MEMORY,
      wanted: ['koishi-plugin-dogu', ...PACKS],
      first: async (dir) => { everyFirst = await installEveryTarball(dir) },
      local: async (dir) => {
        await mkdir(join(dir, 'local/dogu-packs'))
        await writeFile(join(dir, 'local/dogu-packs/package.json'), JSON.stringify({ name: 'koishi-plugin-dogu-packs', version: '0.0.0', private: true, main: 'index.cjs', peerDependencies: { koishi: '^4.18.0' } }, null, 2))
        await writeFile(join(dir, 'local/dogu-packs/index.cjs'), PACKS_PLUGIN)
        await writeFile(join(dir, 'local/echo-mcp.mjs'), ECHO_SERVER)
        return ['./local/dogu-packs']
      },
    })
  }, 3 * INSTALL_TIMEOUT + 5 * 60_000)

  afterAll(async () => {
    try {
      await instance?.stop()
    } catch {
      // Killed by stop().
    }
  }, WAIT * 2)

  it('(first, in the new Koishi instance) every tarball of dist-packages/ is refused: the cordis 4 prerelease @dogu/webui\'s server plugin brings peers a @cordisjs/plugin-loader no registry version matches; nothing is installed', () => {
    // What docs/koishi.md quotes. When this fails, the all-tarballs install may work: the docs change with it.
    expect(everyFirst.output).toMatch(/npm error notarget No matching version found for @cordisjs\/plugin-loader@/)
    expectRefusedAndUnchanged(everyFirst)
    expect(everyFirst.before.dogu).toEqual([])
  })

  it('npm resolves no cordis 4 for them either, and no peer conflict', async () => {
    expect(bot.dogu).toEqual(['@dogu/core', '@dogu/fs', '@dogu/http', '@dogu/mcp', '@dogu/schema', '@dogu/shell', 'koishi-plugin-dogu'])
    await expectKoishiGraph(bot)
  }, 4 * 60_000)

  it('Koishi\'s worker starts it: the packs\' tools and (through @dogu/mcp, from the Dogu plugin\'s `mcp` config) an MCP server\'s are defined, and run', async () => {
    instance = await startInstance(bot.dir, packsYml)
    const tools = await toolsDefined(instance, ['save_note', 'http_fetch', 'bash', 'read', 'echo_say'])
    await chatApproval(instance)
    // The MCP server's tool, imported through @dogu/mcp from `dogu.mcp.servers` (read: no question).
    expect((await instance.op<string[]>('receive', { userId: 'alice', text: 'dogu.run echo_say {}' })).join('\n')).toContain('hello from MCP')
    await instance.stop()
    expect(instance.problems()).toEqual([])
    console.log(`${bot.summary}; tools: ${tools.join(', ')}`)
  }, 6 * WAIT)
})
