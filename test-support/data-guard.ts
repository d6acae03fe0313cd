// The data guard, a vitest setup file (vitest.config.ts → test.setupFiles): a test that opens
// a path under the checkout's data/ (the playground's folder, `bash scripts/start.sh`), or under
// DOGU_DATA when it is set, fails, naming the path and the call. Issue 48: a spec whose
// Koishi app fell back to the default data/dogu/audit.jsonl read the newcomer's audit log and
// renamed it. Every test that needs a data folder makes its own (mkdtemp).
//
// How: node:fs's path functions (sync, callback and fs/promises forms, the streams) are
// wrapped in this worker, and syncBuiltinESMExports() hands the wrappers to ESM named imports
// too. A wrapper only records: the call goes on as it would, and the test fails in afterEach.
// What it does not see: a child process the test spawns (a bot, the playground, a child
// vitest: each must be given a cwd or data folder of its own), and native code that opens
// files itself (a SQLite driver's database file).
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach } from 'vitest'

/** A call the guard saw: which function, on which path, and the first frame outside node and the guard. */
export interface DataGuardOffence {
  call: string
  path: string
  at?: string
}

interface GuardState {
  /** The folders no test may open, resolved. */
  folders: string[]
  offences: DataGuardOffence[]
}

const ROOT = resolve(import.meta.dirname, '..')
const STATE = Symbol.for('dogu.data-guard')

/**
 * The folders the guard watches: the checkout's data/, the cwd's (where a default storePath
 * lands, when vitest runs from elsewhere) and DOGU_DATA (against the cwd, as the playground reads it).
 */
export function guardedFolders(root: string = ROOT, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const folders = [join(root, 'data'), join(cwd, 'data')]
  const own = env.DOGU_DATA?.trim()
  if (own) folders.push(resolve(cwd, own))
  return [...new Set(folders)]
}

/**
 * The resolved path an fs argument names when it lies in one of `folders` (resolved, no
 * trailing separator), else undefined. Cheap on the common path: an absolute string with no
 * `.` segment or doubled separator is compared as it is, anything else is resolved first.
 */
export function guardedPath(arg: unknown, folders: readonly string[]): string | undefined {
  let path: string
  if (typeof arg === 'string') path = arg
  else if (arg instanceof URL) {
    if (arg.protocol !== 'file:') return undefined
    path = fileURLToPath(arg)
  } else if (Buffer.isBuffer(arg)) path = arg.toString()
  else return undefined
  const full = isAbsolute(path) && !path.includes(`${sep}.`) && !path.includes(`${sep}${sep}`) ? path : resolve(path)
  for (const folder of folders) {
    if (full.startsWith(folder) && (full.length === folder.length || full[folder.length] === sep)) return full
  }
  return undefined
}

/** The failure's text: each offending call with its path and where it came from. */
export function offenceMessage(offences: readonly DataGuardOffence[], folders: readonly string[], root: string = ROOT): string {
  const lines = offences.map(({ call, path, at }) => `  ${call}(${JSON.stringify(path)})${at ? ` at ${at}` : ''}`)
  return [
    `data guard: this test opened ${offences.length === 1 ? 'a path' : `${offences.length} paths`} under ${folders.map((folder) => shown(folder, root)).join(' or ')} (the playground's data, which tests must not touch):`,
    ...lines,
    'Give it a folder of its own (mkdtemp), an explicit storePath or dataDir, or a cwd in a temporary folder.',
  ].join('\n')
}

/** A folder as the message names it: relative to the checkout when it lies inside. */
function shown(folder: string, root: string): string {
  const inside = relative(root, folder)
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? `${inside}${sep}` : folder
}

// The path functions of node:fs and which arguments are paths. Two-path calls check both. A
// name's Sync and fs/promises forms are wrapped where node has them.
const ONE_PATH = [
  'access', 'appendFile', 'chmod', 'chown', 'exists', 'lchmod', 'lchown', 'lutimes', 'lstat', 'mkdir', 'mkdtemp', 'open',
  'opendir', 'readdir', 'readFile', 'readlink', 'realpath', 'rm', 'rmdir', 'stat', 'statfs', 'truncate', 'unlink', 'utimes',
  'writeFile', 'createReadStream', 'createWriteStream', 'openAsBlob', 'watch', 'watchFile',
]
const TWO_PATHS = ['copyFile', 'cp', 'link', 'rename', 'symlink']

const WRAPPED = Symbol('dogu.data-guard.original')

function install(state: GuardState) {
  const require = createRequire(import.meta.url)
  const fs = require('node:fs') as Record<string, unknown> & { promises: Record<string, unknown> }
  const wrap = (owner: Record<string, unknown>, name: string, label: string, positions: readonly number[]) => {
    const original = owner[name] as ((...args: unknown[]) => unknown) & { [WRAPPED]?: unknown }
    if (typeof original !== 'function' || original[WRAPPED]) return
    // `arguments`, not a rest parameter: no array is made on every call.
    const wrapped = function (this: unknown) {
      for (const position of positions) {
        const path = guardedPath(arguments[position], state.folders)
        if (path !== undefined) record(state, label, path)
      }
      return original.apply(this, arguments as unknown as unknown[])
    }
    // realpath.native, exists' promisify.custom and the like stay reachable.
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original))
    Object.defineProperty(wrapped, WRAPPED, { value: original })
    owner[name] = wrapped
  }
  for (const [names, positions] of [[ONE_PATH, [0]], [TWO_PATHS, [0, 1]]] as const) {
    for (const name of names) {
      wrap(fs, name, name, positions)
      wrap(fs, `${name}Sync`, `${name}Sync`, positions)
      wrap(fs.promises, name, `fs/promises ${name}`, positions)
    }
  }
  for (const name of ['realpath', 'realpathSync'] as const) {
    const native = fs[name] as { native?: unknown }
    if (typeof native.native === 'function') wrap(native as Record<string, unknown>, 'native', `${name}.native`, [0])
  }
  // ESM named imports of node:fs and node:fs/promises read the wrappers from here on.
  syncBuiltinESMExports()
}

function record(state: GuardState, call: string, path: string) {
  if (state.offences.some((offence) => offence.call === call && offence.path === path)) return
  // Deep enough to get past a dependency's frames to the repository's (on a hit only).
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 50
  const stack = new Error().stack ?? ''
  Error.stackTraceLimit = limit
  const frames = framesOf(stack)
  // Called from node's own code: its follow-up of a call already recorded (fs/promises rm's lstat, a stream's open).
  if (!frames.length || frames[0].path.startsWith('node:')) return
  const own = frames.find((frame) => !frame.path.startsWith('node:') && !frame.path.includes(`${sep}node_modules${sep}`))
  state.offences.push({ call, path, at: own && `${relative(ROOT, own.path)}:${own.line}` })
}

const GUARD = fileURLToPath(import.meta.url)

/** The frames of a stack below the guard's own, innermost first: each file (or `node:` module) and line. */
function framesOf(stack: string): { path: string; line: string }[] {
  const frames = []
  for (const line of stack.split('\n').slice(1)) {
    const frame = /(?:\(|at (?:async )?)((?:file:\/\/)?\/[^():]*|node:[^():]*):(\d+):\d+\)?$/.exec(line.trim())
    if (!frame) continue
    const path = frame[1].startsWith('file://') ? fileURLToPath(frame[1]) : frame[1]
    if (path !== GUARD) frames.push({ path, line: frame[2] })
  }
  return frames
}

function stateOf(): GuardState {
  const global = globalThis as { [STATE]?: GuardState }
  if (!global[STATE]) {
    const folders = guardedFolders()
    global[STATE] = { folders, offences: [] }
    install(global[STATE])
  }
  return global[STATE]
}

const state = stateOf()

/** The offences recorded since the last check, cleared: for the guard's own spec, which opens data/ on purpose. */
export function takeOffences(): DataGuardOffence[] {
  return state.offences.splice(0)
}

function check() {
  const offences = takeOffences()
  if (offences.length) throw new Error(offenceMessage(offences, state.folders))
}

// Run after the test's own afterEach hooks (vitest runs them last registered first): its
// clean-up is the test's too. afterAll catches what a file's last hooks opened.
afterEach(check)
afterAll(check)
