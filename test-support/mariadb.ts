// A throwaway MariaDB server for the SQL tier (`*.sql.spec.ts`, docs/testing.md).
//
// `startMariaDB()` makes a data directory under the OS temp dir (mariadb-install-db), starts
// `mariadbd --no-defaults` on 127.0.0.1 with a free port and a socket of its own, and waits
// until it answers a query. Nothing of the machine's own MariaDB is used: no config file, no
// system service, no port 3306. `stop()` shuts it down (SIGTERM, then SIGKILL) and removes
// the directory. The server runs under a small Node supervisor that kills it once its stdin
// closes, so a test process that dies without calling `stop()` (killed, interrupted) takes
// the server with it; only the temp directory is left then.
//
// The binaries (mariadbd, mariadb-install-db, the mariadb client) are looked for in
// DOGU_MARIADB_BIN when it is set, else on PATH and in /usr/sbin, /usr/local/sbin. Where no
// server can start (no binary, or it fails), `startMariaDB()` resolves with the reason
// instead of throwing: the spec decides whether that fails (DOGU_REQUIRE_SQL=1).
//
// A SQL spec takes the run's server with `runMariaDB()`: vitest's global set-up
// (test-support/global-setup.ts) starts one server per run when the run has a `*.sql.spec.ts`
// file, and each file makes its own databases on it (their names differ); that server's
// `stop()` leaves it to the set-up, which stops it after the run. Without that set-up (another
// config), `runMariaDB()` starts a server of the file's own.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { inject, it } from 'vitest'
import { freePort } from './free-port'

/** What a MySQL client (minato's driver) needs to reach one database of the server. */
export interface MariaDBDatabase {
  host: string
  port: number
  user: string
  password: string
  database: string
}

/** What another process needs to use a running server (`runMariaDB()` in a test file). */
export interface MariaDBAddress {
  version: string
  port: number
  /** Its socket, through which `query` runs SQL as root. */
  socket: string
  /** The test user's. */
  password: string
  startupMs: number
}

export interface MariaDBServer {
  /** `SELECT VERSION()`, e.g. `10.11.19-MariaDB-0+deb12u1`. */
  readonly version: string
  readonly host: '127.0.0.1'
  readonly port: number
  /** Milliseconds from the first step (install-db) until the server answered. */
  readonly startupMs: number
  readonly address: MariaDBAddress
  /** Creates an empty database the test user may do anything in. */
  createDatabase(name: string): Promise<MariaDBDatabase>
  /** Runs SQL as root over the socket; returns the rows, tab-separated, without headers. */
  query(sql: string): Promise<string>
  /** Stops the server and removes its directory. A second call returns the first one's promise. */
  stop(): Promise<void>
}

export type MariaDBStart = { server: MariaDBServer } | { reason: string }

export interface MariaDBOptions {
  /** The longest wait for the server to answer. @default 60_000 */
  timeoutMs?: number
}

const HOST = '127.0.0.1'
const USER = 'dogu'
// Where Debian puts mariadbd (/usr/sbin is not on every user's PATH).
const SBIN = ['/usr/sbin', '/usr/local/sbin']

/** An executable of that name in DOGU_MARIADB_BIN (when set), else on PATH or in an sbin folder. */
function findBinary(name: string): string | undefined {
  const dirs = process.env.DOGU_MARIADB_BIN ? [process.env.DOGU_MARIADB_BIN] : [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN]
  for (const dir of dirs) {
    const path = join(dir, name)
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {}
  }
  return undefined
}

function run(file: string, args: string[], timeout: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`${error.message.split('\n')[0]}${stderr ? `: ${stderr.trim()}` : ''}`), { stdout, stderr }))
      else resolve({ stdout, stderr })
    })
  })
}

/**
 * Runs `argv[1]` with the rest as its arguments, forwards SIGTERM to it, and SIGKILLs it
 * when its own stdin closes: when the test process is gone, however it went.
 */
const SUPERVISOR = `
const { spawn } = require('node:child_process')
const [bin, ...args] = process.argv.slice(1)
const server = spawn(bin, args, { stdio: ['ignore', 'ignore', 'inherit'] })
process.on('SIGTERM', () => server.kill('SIGTERM'))
process.stdin.on('close', () => server.kill('SIGKILL')).resume()
server.on('error', (error) => { console.error(error.message); process.exit(127) })
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 0)))
`


const NO_LOG = 'its error log is empty'

/** The last lines of the server's error log that say what went wrong, on one line. */
async function logTail(path: string): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '')
  const lines = text.split('\n').filter((line) => /\[ERROR\]/.test(line))
  const picked = (lines.length ? lines : text.split('\n').filter(Boolean)).slice(-3)
  return picked.map((line) => line.replace(/^\S+\s+\S+\s+\d+\s+/, '')).join(' | ') || NO_LOG
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Starts a private MariaDB server, or says why it cannot. See the file's header. */
export async function startMariaDB(options: MariaDBOptions = {}): Promise<MariaDBStart> {
  const timeoutMs = options.timeoutMs ?? 60_000
  const mariadbd = findBinary('mariadbd')
  const where = process.env.DOGU_MARIADB_BIN ? `in DOGU_MARIADB_BIN (${process.env.DOGU_MARIADB_BIN})` : 'on PATH or in /usr/sbin'
  if (!mariadbd) return { reason: `no mariadbd binary ${where} (Debian/Ubuntu: apt-get install mariadb-server)` }
  const installDb = findBinary('mariadb-install-db')
  const client = findBinary('mariadb')
  if (!installDb || !client) return { reason: `found ${mariadbd} but not ${installDb ? 'the mariadb client' : 'mariadb-install-db'} ${where} (Debian/Ubuntu: apt-get install mariadb-server)` }

  const started = performance.now()
  const dir = await mkdtemp(join(tmpdir(), 'dogu-mariadb-'))
  const data = join(dir, 'data')
  const socket = join(dir, 'mysqld.sock')
  const errorLog = join(dir, 'error.log')
  // mariadbd refuses to run as root unless told to; as anyone else it runs as that user.
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : []
  let child: ChildProcess | undefined
  const running = () => !!child && child.exitCode === null && child.signalCode === null

  const fail = async (reason: string): Promise<MariaDBStart> => {
    if (running()) {
      const exit = new Promise((resolve) => child!.once('exit', resolve))
      // The supervisor SIGKILLs the server and exits.
      child!.stdin!.end()
      await exit
    }
    await rm(dir, { recursive: true, force: true })
    return { reason }
  }

  try {
    await run(installDb, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...asRoot], timeoutMs)
  } catch (error) {
    return fail(`mariadb-install-db failed: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`)
  }

  const query = rootQuery(client, socket)
  let port = 0
  let version = ''
  // A free port can be taken between the check and the bind: one more try then.
  let stderr = ''
  for (let attempt = 1; !version; attempt++) {
    port = await freePort()
    stderr = ''
    const exited = new Promise<string>((resolve) => {
      child = spawn(process.execPath, ['-e', SUPERVISOR, mariadbd,
        '--no-defaults',
        `--datadir=${data}`,
        `--socket=${socket}`,
        `--pid-file=${join(dir, 'mariadbd.pid')}`,
        `--log-error=${errorLog}`,
        `--bind-address=${HOST}`,
        `--port=${port}`,
        '--skip-name-resolve',
        // Small and quick: a test server holds a few rows, and its data is thrown away.
        '--innodb-buffer-pool-size=32M',
        '--innodb-flush-log-at-trx-commit=2',
        ...asRoot,
      ], { stdio: ['pipe', 'ignore', 'pipe'] })
      // What it says before its error log is open (a bad option, a missing library).
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-2_000) })
      child.once('error', (error) => resolve(`mariadbd could not be run: ${error.message}`))
      child.once('exit', (code, signal) => resolve(`mariadbd exited (${code === 128 ? 'killed by a signal' : code ?? signal})`))
    })
    let outcome: string | undefined
    void exited.then((why) => { outcome = why })
    const deadline = performance.now() + timeoutMs
    while (!outcome && !version) {
      if (performance.now() > deadline) return fail(`mariadbd did not answer within ${timeoutMs} ms: ${await logTail(errorLog)}`)
      try {
        version = (await query('SELECT VERSION()')).trim()
      } catch {
        await sleep(100)
      }
    }
    if (version) break
    const logged = await logTail(errorLog)
    const tail = logged === NO_LOG && stderr.trim() ? stderr.trim().split('\n').slice(-3).join(' | ') : logged
    if (attempt < 3 && /bind on tcp\/ip port/i.test(tail)) continue
    return fail(`${outcome}: ${tail}`)
  }

  const password = randomBytes(12).toString('hex')
  try {
    await query(`CREATE USER '${USER}'@'${HOST}' IDENTIFIED BY '${password}'`)
  } catch (error) {
    return fail(`creating the test user failed: ${(error as Error).message}`)
  }
  const startupMs = performance.now() - started

  const server = child!
  let stopping: Promise<void> | undefined
  return {
    server: serverAt({ version, port, socket, password, startupMs }, client, () => stopping ??= (async () => {
      if (server.exitCode === null && server.signalCode === null) {
        const exit = new Promise((resolve) => server.once('exit', resolve))
        server.kill('SIGTERM')
        // A clean shutdown takes a second or two; the data is thrown away either way.
        const timer = setTimeout(() => server.stdin!.end(), 20_000)
        await exit
        clearTimeout(timer)
      }
      await rm(dir, { recursive: true, force: true })
    })()),
  }
}

function rootQuery(client: string, socket: string): (sql: string) => Promise<string> {
  const rootArgs = ['--no-defaults', `--socket=${socket}`, '--user=root', '--batch', '--skip-column-names']
  return async (sql) => (await run(client, [...rootArgs, '-e', sql], 30_000)).stdout
}

function serverAt(address: MariaDBAddress, client: string, stop: () => Promise<void>): MariaDBServer {
  const { version, port, password, startupMs } = address
  const query = rootQuery(client, address.socket)
  return {
    version,
    host: HOST,
    port,
    startupMs,
    address,
    query,
    async createDatabase(name) {
      if (!/^\w+$/.test(name)) throw new Error(`not a plain database name: ${JSON.stringify(name)}`)
      await query(`CREATE DATABASE \`${name}\`; GRANT ALL PRIVILEGES ON \`${name}\`.* TO '${USER}'@'${HOST}'`)
      return { host: HOST, port, user: USER, password, database: name }
    },
    stop,
  }
}

/**
 * The run's server for a SQL spec, or why there is none (see the file's header). Its `stop()`
 * does nothing: the global set-up stops it after the run.
 */
export async function runMariaDB(): Promise<MariaDBStart> {
  const shared = inject('mariadb')
  if (!shared) return startMariaDB()
  if ('reason' in shared) return shared
  const client = findBinary('mariadb')
  if (!client) return { reason: `the run's MariaDB server is up, but this process finds no mariadb client ${process.env.DOGU_MARIADB_BIN ? `in DOGU_MARIADB_BIN (${process.env.DOGU_MARIADB_BIN})` : 'on PATH or in /usr/sbin'}` }
  return { server: serverAt(shared, client, async () => {}) }
}

/**
 * A SQL spec's one test where no server could start: it prints why and passes, or fails with
 * DOGU_REQUIRE_SQL=1 (CI). scripts/test.sh finds it by its title, `sql tier did not run: …`.
 */
export function sqlTierDidNotRun(reason: string): void {
  const line = `sql tier did not run: ${reason}`
  it(line, () => {
    if (process.env.DOGU_REQUIRE_SQL === '1') throw new Error(`${line}; DOGU_REQUIRE_SQL=1 requires it`)
    console.log(line)
  })
}
