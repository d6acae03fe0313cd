// The packed packages, and plain `npm install` into a fresh directory, for the install tests
// (`*.tarball.spec.ts`): what a user outside the monorepo gets, with no workspace, no yarn
// hoisting and no tolerance of peer mismatches.
//
// `packedTarballs()` maps each publishable package's name to its `.tgz` in dist-packages/
// (written by `yarn pack:all`, scripts/pack-all.mjs). It packs (without building) once per
// test run when a tarball is missing or older than what it is made of (the package's `files`,
// its package.json and README.md); spec files running in parallel processes share one pack
// through a lock directory. The packages must be built (`yarn build`) first. A package that could not be
// packed (no lib/, or yarn pack failed) is still a key, but reading its path throws why.
//
// `npmInstall(dir, specs, options?)` runs `npm install` in `dir` (made if missing; a
// package.json is written when there is none), a directory that must lie outside the
// workspace, so npm sees no workspace root. The registry is the one `npm config get
// registry` names; nothing else in npm's behaviour is changed: no `--legacy-peer-deps`, no
// `--force`. It resolves with the duration, the size of node_modules and npm's output, and
// rejects (with that output) when npm fails or outlasts the timeout.
//
// npm's cache is the run's (`npmEnv()`): a temporary folder vitest's global set-up makes
// (test-support/global-setup.ts) and every install test of the run shares, never the user's
// ~/.npm; outside a run with that set-up, one of the process's own, removed when it exits.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { lstat, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve, sep } from 'node:path'
import { promisify } from 'node:util'
import { inject } from 'vitest'

const run = promisify(execFile)

/** The repository's root. */
export const repoRoot = resolve(import.meta.dirname, '..')
/** Where `yarn pack:all` writes the tarballs. */
export const distPackages = join(repoRoot, 'dist-packages')

export interface PublishablePackage {
  name: string
  version: string
  /** The package's folder, absolute. */
  folder: string
  /** The tarball's file name in dist-packages/: npm's, `@scope/name` → `scope-name-<version>.tgz`. */
  tarball: string
}

/** Every non-private workspace package under packages/ and external/, sorted by name. */
export async function publishablePackages(): Promise<PublishablePackage[]> {
  const found: PublishablePackage[] = []
  for (const base of ['packages', 'external']) {
    const dir = join(repoRoot, base)
    if (!existsSync(dir)) continue
    for (const entry of await readdir(dir)) {
      const manifestPath = join(dir, entry, 'package.json')
      if (!existsSync(manifestPath)) continue
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8'))
      if (manifest.private) continue
      found.push({ name: manifest.name, version: manifest.version, folder: join(dir, entry), tarball: tarballName(manifest.name, manifest.version) })
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name))
}

/** npm's file name for a package's tarball. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`
}

let packing: Promise<Record<string, string>> | undefined

/**
 * Package name → absolute path of its `.tgz` in dist-packages/, packing first (once per test
 * process, and once across processes through a lock) when any tarball is missing or stale.
 */
export function packedTarballs(): Promise<Record<string, string>> {
  packing ??= ensurePacked().catch((error) => {
    packing = undefined
    throw error
  })
  return packing
}

async function ensurePacked(): Promise<Record<string, string>> {
  const packages = await publishablePackages()
  // A package that cannot be packed (not built, or yarn pack failed) is still a key of the
  // record, but reading it throws why: the tests of the other packages go on.
  const problems = new Map<string, string>()
  for (const pkg of packages) {
    if (!existsSync(join(pkg.folder, 'lib'))) problems.set(pkg.name, `not built (no ${relative(repoRoot, join(pkg.folder, 'lib'))}): run \`yarn build\` first`)
  }
  const stale = async () => (await stalePackages(packages)).filter((pkg) => !problems.has(pkg.name))
  if ((await stale()).length) {
    let failure = ''
    await withLock(async () => {
      const now = await stale()
      if (!now.length) return
      // Packs every publishable package (no build): tarballs that refer to each other come
      // from the same tree.
      await run(process.execPath, [join(repoRoot, 'scripts/pack-all.mjs'), '--no-build'], { cwd: repoRoot, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 })
        .catch((error) => {
          failure = `yarn pack:all --no-build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`
        })
    })
    for (const pkg of await stale()) problems.set(pkg.name, failure || `${pkg.tarball} is still missing or older than its sources after packing (rebuilt meanwhile?)`)
  }
  const tarballs: Record<string, string> = {}
  for (const pkg of packages) {
    const problem = problems.get(pkg.name)
    if (!problem) tarballs[pkg.name] = join(distPackages, pkg.tarball)
    else {
      Object.defineProperty(tarballs, pkg.name, {
        enumerable: true,
        get: () => {
          throw new Error(`no tarball of ${pkg.name}: ${problem}`)
        },
      })
    }
  }
  return tarballs
}

async function stalePackages(packages: PublishablePackage[]): Promise<PublishablePackage[]> {
  const stale: PublishablePackage[] = []
  for (const pkg of packages) {
    const packed = await stat(join(distPackages, pkg.tarball)).catch(() => undefined)
    if (!packed) {
      stale.push(pkg)
      continue
    }
    let newest = 0
    for (const source of await shippedPaths(pkg.folder)) newest = Math.max(newest, await newestMtime(source))
    if (newest > packed.mtimeMs) stale.push(pkg)
  }
  return stale
}

/** What a package's tarball is made of: its `files` entries, package.json and README.md. */
async function shippedPaths(folder: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'))
  const files: string[] = Array.isArray(manifest.files) ? manifest.files : ['lib']
  return [...files.map((entry) => join(folder, entry.replace(/[*].*$/, ''))), join(folder, 'package.json'), join(folder, 'README.md')]
}

async function newestMtime(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined)
  if (!info) return 0
  if (!info.isDirectory()) return info.mtimeMs
  let newest = info.mtimeMs
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, entry)))
  return newest
}

/** A lock directory in dist-packages/; one left behind by a dead process expires after 10 minutes. */
async function withLock<T>(body: () => Promise<T>): Promise<T> {
  await mkdir(distPackages, { recursive: true })
  const lock = join(distPackages, '.pack-lock')
  const deadline = Date.now() + 600_000
  for (;;) {
    try {
      await mkdir(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const held = await stat(lock).catch(() => undefined)
      if (held && Date.now() - held.mtimeMs > 600_000) await rm(lock, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`)
      await new Promise((done) => setTimeout(done, 250))
    }
  }
  try {
    return await body()
  } finally {
    await rm(lock, { recursive: true, force: true })
  }
}

export interface NpmInstallOptions {
  /** npm's `overrides`, written into the directory's package.json before installing. */
  overrides?: Record<string, unknown>
  /** Fields of the package.json written when the directory has none (default: a private ESM package). */
  packageJson?: Record<string, unknown>
  /** Extra arguments after `npm install <specs…>`. */
  args?: string[]
  /** Extra environment for npm. */
  env?: Record<string, string>
  /** Milliseconds before npm is killed and the install rejects (default 300 000). */
  timeoutMs?: number
}

export interface NpmInstallResult {
  /** Wall time of `npm install`, milliseconds. */
  durationMs: number
  /** Bytes of every file under node_modules (apparent size, symlinks not followed). */
  nodeModulesBytes: number
  /** npm's stdout and stderr, interleaved as they came. */
  output: string
}

let registry: Promise<string> | undefined

/** The registry npm's own configuration names (`npm config get registry`). */
export function npmRegistry(): Promise<string> {
  registry ??= run('npm', ['config', 'get', 'registry'], { cwd: repoRoot, env: npmEnv() }).then(({ stdout }) => stdout.trim())
  return registry
}

/**
 * `npm install <specs…>` in `dir`, a fresh directory outside the workspace. Specs are what
 * npm takes: tarball paths, `name@range`, … With no specs it installs the package.json.
 */
export async function npmInstall(dir: string, specs: string[], options: NpmInstallOptions = {}): Promise<NpmInstallResult> {
  const absolute = resolve(dir)
  if (absolute === repoRoot || absolute.startsWith(repoRoot + sep)) throw new Error(`npmInstall: ${absolute} is inside the workspace; use a directory under the OS temp dir`)
  await mkdir(absolute, { recursive: true })
  const manifestPath = join(absolute, 'package.json')
  const manifest = existsSync(manifestPath)
    ? JSON.parse(await readFile(manifestPath, 'utf8'))
    : { name: 'dogu-install-check', version: '0.0.0', private: true, type: 'module', ...options.packageJson }
  if (options.overrides) manifest.overrides = options.overrides
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)

  const args = ['install', ...specs, '--registry', await npmRegistry(), '--no-audit', '--no-fund', '--no-update-notifier', ...(options.args ?? [])]
  const timeoutMs = options.timeoutMs ?? 300_000
  const started = performance.now()
  const output = await new Promise<string>((done, fail) => {
    const child = spawn('npm', args, { cwd: absolute, env: { ...npmEnv(), ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let text = ''
    child.stdout.on('data', (chunk) => (text += chunk))
    child.stderr.on('data', (chunk) => (text += chunk))
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }
    const timer = setTimeout(() => {
      kill()
      fail(new Error(`npm ${args.join(' ')} timed out after ${timeoutMs} ms in ${absolute}:\n${text}`))
    }, timeoutMs)
    // A test process that exits mid-install takes npm with it.
    process.once('exit', kill)
    child.on('error', (error) => {
      clearTimeout(timer)
      process.off('exit', kill)
      fail(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      process.off('exit', kill)
      if (code === 0) done(text)
      else fail(new Error(`npm ${args.join(' ')} failed (${signal ?? `exit ${code}`}) in ${absolute}:\n${text}`))
    })
  })
  const durationMs = Math.round(performance.now() - started)
  return { durationMs, nodeModulesBytes: await treeBytes(join(absolute, 'node_modules')), output }
}

let ownCache: string | undefined

/** The run's npm cache (see the file's header). */
function npmCache(): string {
  const shared = inject('npmCache')
  if (shared) return shared
  if (!ownCache) {
    const made = mkdtempSync(join(tmpdir(), 'dogu-npm-cache-'))
    process.once('exit', () => rmSync(made, { recursive: true, force: true }))
    ownCache = made
  }
  return ownCache
}

/**
 * The environment without what a yarn or npm parent process passes down (`npm_config_*`,
 * `npm_package_*`, yarn's own variables), so npm reads only its user and global config, with
 * the run's cache (`npm_config_cache`).
 */
export function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|yarn_|berry_)/i.test(key) || key === 'INIT_CWD' || key === 'PROJECT_CWD' || key === 'NODE_OPTIONS') continue
    env[key] = value
  }
  env.npm_config_cache = npmCache()
  // yarn puts its own shims (node, yarn, run) first on PATH for scripts: not for npm.
  env.PATH = (env.PATH ?? '').split(':').filter((entry) => !/[/\\]xfs-[^/\\]+$/.test(entry) && !entry.includes('.yarn/')).join(':')
  return env
}

/** Bytes of the files under a directory (0 when it is missing). */
export async function treeBytes(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined)
  if (!info) return 0
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const entry of await readdir(path)) total += await treeBytes(join(path, entry))
  return total
}

/** `12.3 MB`, `850 kB`. */
export function formatBytes(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} kB`
}
