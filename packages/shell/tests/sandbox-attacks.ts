// The attack table of the sandbox escape suite (issue: "an escape suite of at least 40
// attacks, run with the sandbox on; each asserts that the attack failed AND that nothing
// outside changed"). sandbox-escape.spec.ts runs it as root, as an unprivileged user and
// with bubblewrap missing. Each attack is a command line built from a fixture of real
// files, servers and processes outside the workspace, and a check run from the test
// process, outside the sandbox, after the call returned.
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import { homedir, networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { createShellTool, ProcessTable, type ShellToolOptions } from '../src'
import { CgroupParent } from '../src/sandbox-cgroup'
import { detectSandbox } from '../src/detect-sandbox'
import type { SandboxConfig } from '../src/sandbox-config'
import { git, writeFiles } from './attack-helpers'
import { fakeCall, processesMatching, sleepMarker } from './helpers'
import { REMOTE_BODY, startRemoteHost, type RemoteHost } from './remote-host'

export type AttackClass =
  | 'write outside'
  | 'read hidden'
  | 'environment'
  | 'network'
  | 'processes'
  | 'setuid'
  | 'tiocsti'
  | 'leftovers'
  | 'git'
  | 'protected'
  | 'home'
  | 'set-up race'

/** What the check of an attack sees: the call's result and the attack's own fixture paths. */
export interface Outcome {
  text: string
  data: {
    sandbox: string
    status: string
    exitCode: number | null
    signal: string | null
    stdout: { text: string }
    stderr: { text: string }
    limit?: string
    network?: { allow: string[]; refused: { host: string; reason: string }[] }
  }
  /** stdout and stderr together. */
  output: string
  /** The outcome of the attack's `concurrent` command. */
  concurrent?: Outcome
}

export interface Attack {
  name: string
  class: AttackClass
  /** Sandbox options on top of the fixture's (network, limits). */
  sandbox?: (f: AttackContext) => Partial<SandboxConfig>
  /** Builds what the model would have written in the workspace; runs outside, as the test's user. */
  setup?: (f: AttackContext) => void
  command: (f: AttackContext) => string
  /** The call's timeout. @default 20_000 */
  timeout?: number
  /** Stops the call from outside once the attack's marker process runs. */
  interrupt?: 'abort' | 'dispose'
  /**
   * A second command, run by another call of the same tool once the first one's marker
   * runs (its set-up races the first command); its outcome is `r.concurrent`.
   */
  concurrent?: (f: AttackContext) => string
  check: (r: Outcome, f: AttackContext) => void | Promise<void>
}

/**
 * Secrets and markers, so a check can look for them in any output; unique to this process,
 * so another run's fixture (under /var/tmp, not hidden from this run's sandbox) cannot be
 * mistaken for a leak.
 */
const RUN = randomBytes(4).toString('hex')
export const SECRET_FILE_TEXT = `dogu-secret-file-${RUN}`
export const SECRET_DIR_TEXT = `dogu-secret-dir-${RUN}`
export const GRANTS_TEXT = `dogu-grant-token-${RUN}`
export const ENV_SECRET = `dogu-env-secret-${RUN}`
export const PLUGIN_VAR = `dogu-plugin-visible-${RUN}`
export const OUTSIDE_TEXT = 'original outside content\n'
export const HTTP_BODY = 'dogu-allowed-body-0d93'

/** The bot's secret in its own environment, set before any tool is created. */
process.env.DOGU_TEST_SECRET_TOKEN = ENV_SECRET

/** One pass's world outside the sandbox: directories, secrets, servers. */
export interface Fixture {
  base: string
  dataDir: string
  ws: string
  /** A directory outside the workspace the test's user can write (the sandbox must not). */
  outside: string
  outsideFile: string
  secretDir: string
  secretFile: string
  grants: string
  /** The machine's first non-loopback IPv4 address. */
  ip: string
  ports: { loopback: number; external: number; http: number }
  /**
   * `ip:port` of an HTTP server on another host (remote-host.ts), for the allowlist's
   * control: made here as root, given by the parent (`DOGU_ESCAPE_REMOTE`) to the child.
   */
  remote: string | undefined
  abstractName: string
  /** A Unix socket server at a path outside /tmp (mode 0777, like the D-Bus system bus or a database's). */
  unixSocket: string
  /** A Unix socket server of the test's own uid, in a 0700 directory outside the workspace (a service of the bot's user). */
  ownSocket: string
  /** Connections each server has seen. */
  hits: { loopback: number; external: number; http: number; abstract: number; unix: number; own: number }
  testPid: number
  close(): Promise<void>
}

export interface AttackContext extends Fixture {
  /** A fresh directory in the workspace, the session's cwd. */
  dir: string
  /** A name unique to this attack, for paths the attack tries to create outside. */
  token: string
  /** A unique `sleep` duration, to find processes the attack leaves behind. */
  marker: string
  /** `dir/token`: the path an attack creates outside (registered: it must not exist after). */
  pwn(dir: string): string
  readonly targets: string[]
}

function firstExternalIPv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address
  }
  throw new Error('the network tests need a non-loopback IPv4 address (os.networkInterfaces() lists none)')
}

function listen(server: Server | HttpServer, port: number | string, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    const done = () => {
      const address = server.address()
      resolve(typeof address === 'object' && address ? address.port : 0)
    }
    if (typeof port === 'string') server.listen(port, done)
    else server.listen(port, host, done)
  })
}

/**
 * The pass's directories live under /var/tmp, not /tmp: the sandbox has a /tmp of its own,
 * so anything under the host's /tmp is out of sight there and an attack on it would prove
 * nothing; /var/tmp is the host's, seen read-only, like any directory next to a workspace.
 */
export async function createFixture(prefix: string): Promise<Fixture> {
  const base = realpathSync(mkdtempSync(join('/var/tmp', prefix)))
  const dataDir = join(base, 'data')
  const ws = join(dataDir, 'workspace')
  const outside = join(base, 'outside')
  const secretDir = join(base, 'secret-dir')
  const secretFile = join(base, 'secret.txt')
  const grants = join(dataDir, 'grants.json')
  mkdirSync(ws, { recursive: true })
  mkdirSync(outside)
  mkdirSync(secretDir)
  writeFileSync(join(outside, 'file.txt'), OUTSIDE_TEXT)
  writeFileSync(join(secretDir, 'key.txt'), `${SECRET_DIR_TEXT}\n`)
  writeFileSync(secretFile, `${SECRET_FILE_TEXT}\n`)
  writeFileSync(grants, JSON.stringify({ token: GRANTS_TEXT }))
  const hits = { loopback: 0, external: 0, http: 0, abstract: 0, unix: 0, own: 0 }
  const ip = firstExternalIPv4()
  const counting = (key: keyof typeof hits) => createServer((socket) => {
    hits[key]++
    socket.on('error', () => {})
    socket.end()
  })
  const loopbackServer = counting('loopback')
  const externalServer = counting('external')
  const abstractServer = counting('abstract')
  const httpServer = createHttpServer((_, res) => {
    hits.http++
    res.end(HTTP_BODY)
  })
  const abstractName = `dogu-test-abstract-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const ports = {
    loopback: await listen(loopbackServer, 0, '127.0.0.1'),
    external: await listen(externalServer, 0, ip),
    http: await listen(httpServer, 0, ip),
  }
  await listen(abstractServer, `\0${abstractName}`)
  const unixSocket = join(base, 'server.sock')
  const unixServer = counting('unix')
  await listen(unixServer, unixSocket)
  chmodSync(unixSocket, 0o777)
  mkdirSync(join(base, 'private'), { mode: 0o700 })
  const ownSocket = join(base, 'private', 'own.sock')
  const ownServer = counting('own')
  await listen(ownServer, ownSocket)
  const servers = [loopbackServer, externalServer, abstractServer, httpServer, unixServer, ownServer]
  let made: RemoteHost | undefined
  if (!process.env.DOGU_ESCAPE_REMOTE && process.getuid?.() === 0) made = await startRemoteHost()
  const remote = process.env.DOGU_ESCAPE_REMOTE || made?.address
  return {
    base, dataDir, ws, outside, outsideFile: join(outside, 'file.txt'), secretDir, secretFile, grants,
    ip, ports, remote, abstractName, unixSocket, ownSocket, hits, testPid: process.pid,
    async close() {
      made?.close()
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => {
        (s as HttpServer).closeAllConnections?.()
        s.close(() => resolve())
      })))
      rmSync(base, { recursive: true, force: true })
    },
  }
}

let attackCount = 0
export function attackContext(f: Fixture): AttackContext {
  const n = ++attackCount
  const dir = join(f.ws, `a${n}`)
  mkdirSync(dir)
  const token = `dogu-pwned-${process.pid}-${n}`
  const targets: string[] = []
  return {
    ...f,
    dir,
    token,
    marker: sleepMarker(),
    targets,
    pwn(where) {
      const path = join(where, token)
      targets.push(path)
      return path
    },
  }
}

/** Everything under `root` (names, types, modes, contents), to compare before and after. */
export function snapshot(root: string): string {
  const lines: string[] = []
  const walk = (path: string) => {
    const st = lstatSync(path)
    if (st.isDirectory()) {
      lines.push(`d ${path} ${st.mode.toString(8)}`)
      for (const name of readdirSync(path).sort()) walk(join(path, name))
    } else if (st.isSymbolicLink()) lines.push(`l ${path}`)
    else lines.push(`f ${path} ${st.mode.toString(8)} ${st.nlink} ${readFileSync(path).toString('base64')}`)
  }
  walk(root)
  return lines.join('\n')
}

/** The options every pass gives the tool: the secrets hidden, the data directory set. */
export function toolOptions(f: Fixture, processes: ProcessTable, extra: Partial<SandboxConfig> = {}): ShellToolOptions {
  return {
    workspace: f.ws,
    processes,
    killGrace: 500,
    env: { DOGU_TEST_PLUGIN_VAR: PLUGIN_VAR },
    // `required`: if bubblewrap stopped working here the suite fails instead of running
    // the attacks unconfined.
    sandbox: { mode: 'required', hidden: [f.secretDir, f.secretFile], dataDir: f.dataDir, ...extra },
  }
}

async function waitFor(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/**
 * Runs one attack with the sandbox on and checks it, then the things every attack must
 * leave as they were: the outside directory, the secrets, the paths it tried to create.
 */
export async function runAttack(attack: Attack, f: Fixture): Promise<void> {
  const ctx = attackContext(f)
  attack.setup?.(ctx)
  const before = { outside: snapshot(f.outside), secretDir: snapshot(f.secretDir), secret: readFileSync(f.secretFile, 'utf8'), grants: readFileSync(f.grants, 'utf8') }
  // killWait: a fork bomb's group can take seconds to vanish after SIGKILL on a loaded
  // machine; the default 2 s would end such a call `outcome_unknown` with its processes still
  // dying. The suite checks where they end up (gone), not how fast.
  const processes = new ProcessTable({ killGrace: 500, killWait: 15_000 })
  try {
    const tool = createShellTool(toolOptions(f, processes, attack.sandbox?.(ctx)))
    const call = fakeCall({ id: 's', cwd: ctx.dir })
    const started = Date.now()
    const running = tool.run({ command: attack.command(ctx), timeout: attack.timeout ?? 20_000 }, call) as Promise<{ text: string; data: Outcome['data'] }>
    if (attack.interrupt) {
      // Stop it from outside only once the command really runs.
      await waitFor(() => processesMatching(ctx.marker).length > 0, `${ctx.marker} to start`)
      if (attack.interrupt === 'abort') call.controller.abort()
      else await processes.dispose()
    }
    let second: Promise<{ text: string; data: Outcome['data'] }> | undefined
    if (attack.concurrent) {
      await waitFor(() => processesMatching(ctx.marker).length > 0, `${ctx.marker} to start`)
      second = tool.run({ command: attack.concurrent(ctx), timeout: attack.timeout ?? 20_000 }, fakeCall({ id: 's2', cwd: ctx.dir })) as typeof second
    }
    const result = await running
    const outcome: Outcome = { ...result, output: `${result.data.stdout.text}\n${result.data.stderr.text}` }
    if (second) {
      const other = await second
      outcome.concurrent = { ...other, output: `${other.data.stdout.text}\n${other.data.stderr.text}` }
    }
    // DOGU_ESCAPE_DEBUG=1 shows what each attack got, to see that it tried what it says.
    if (process.env.DOGU_ESCAPE_DEBUG) console.log(`## ${attack.name}: ${outcome.data.status} ${outcome.data.exitCode} ${outcome.data.signal ?? ''} ${Date.now() - started} ms, ${execFileSync('ps', ['-e', '--no-headers'], { encoding: 'utf8' }).split('\n').length} processes on the machine\n${outcome.output.slice(0, 600)}`)
    expect(outcome.data.sandbox, outcome.text).toBe('full')
    await attack.check(outcome, ctx)
    // Nothing outside changed, whatever the attack was.
    expect(snapshot(f.outside)).toBe(before.outside)
    expect(snapshot(f.secretDir)).toBe(before.secretDir)
    expect(readFileSync(f.secretFile, 'utf8')).toBe(before.secret)
    expect(readFileSync(f.grants, 'utf8')).toBe(before.grants)
    for (const target of ctx.targets) expect(existsSync(target), `${target} was created outside`).toBe(false)
    expect(existsSync(`${f.ws}-evil`), 'the sibling-prefix directory was created').toBe(false)
    // Whatever the call started is gone once it returned.
    expect(processesMatching(ctx.marker)).toEqual([])
  } finally {
    await processes.dispose()
  }
}

// Checks used by many attacks.
const failed = (r: Outcome) => expect(r.data.exitCode, r.output).not.toBe(0)
const lacks = (...secrets: string[]) => (r: Outcome) => {
  for (const secret of secrets) expect(r.output).not.toContain(secret)
}
const noSecrets = lacks(SECRET_FILE_TEXT, SECRET_DIR_TEXT, GRANTS_TEXT)
const unchangedHits = (key: keyof Fixture['hits']) => {
  // The count before the call, captured when the command is built (just before it runs).
  let before = -1
  return {
    mark(f: AttackContext) {
      before = f.hits[key]
    },
    check(f: AttackContext) {
      expect(f.hits[key], `the ${key} server saw a connection`).toBe(before)
    },
  }
}
/** An attack against a server: the command is built just before the call, the count compared after. */
function networkAttack(name: string, key: keyof Fixture['hits'], command: (f: AttackContext) => string, extra: Partial<Attack> = {}): Attack {
  const hits = unchangedHits(key)
  return {
    name,
    class: 'network',
    command(f) {
      hits.mark(f)
      return command(f)
    },
    check(r, f) {
      hits.check(f)
      failed(r)
    },
    ...extra,
  }
}
const PY_CONNECT = (host: string, port: number) => `python3 -c "import socket; socket.create_connection(('${host}', ${port}), timeout=3); print('connected')"`

/** The setuid programs on this machine (they exist on Debian; the attack fails to find none otherwise). */
const SETUID_PROGRAMS = ['su', 'passwd', 'mount', 'newgrp', 'chfn', 'gpasswd']

/** Whether the test runs as root: then the sandbox maps its uid to root outside. */
const root = process.getuid?.() === 0
/** Whether the kernel holds the sandbox to `limits.processes`: always for an ordinary user, for root where a pids cgroup can be made. */
const kernelProcessLimit = !root || CgroupParent.detect('pids') !== undefined

/**
 * A fork bomb's outcome. Held by the kernel, its forks fail ("Resource temporarily
 * unavailable") and the shell goes on until it ends or times out; held by the watchdog
 * (root without a pids cgroup), the sandbox is killed past the limit.
 */
function forkBombStopped(r: Outcome): void {
  if (!kernelProcessLimit) return void expect(r.data.status).toBe('limit_exceeded')
  expect(['timed_out', 'exited']).toContain(r.data.status)
  expect(r.output).toContain('Resource temporarily unavailable')
}

/**
 * `n` processes each writing `mib` MiB (so it is resident); with `hold` each then sleeps
 * 30 s, so all of it is resident at once; the parent waits and prints `done`.
 */
function fillMemory(n: number, mib: number, hold = false): string {
  return `python3 -c "
import os, time
kids = []
for i in range(${n}):
    pid = os.fork()
    if pid == 0:
        b = bytearray(b'x') * (${mib} * 1024 * 1024)
        time.sleep(${hold ? 30 : 0})
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print('done')
"`
}

function remoteOf(f: Fixture): string {
  if (!f.remote) throw new Error('the allowlist\'s control needs another host: run the suite as root (it makes a network namespace), or set DOGU_ESCAPE_REMOTE=ip:port')
  return f.remote
}

export const ATTACKS: Attack[] = [
  // ---- writing outside the workspace ----
  ...['/etc', '/root', '/var/tmp', '/usr/local/bin'].map((dir): Attack => ({
    name: `write into ${dir}`,
    class: 'write outside',
    command: (f) => `echo pwned > ${f.pwn(dir)}`,
    check: failed,
  })),
  {
    name: 'write into the test\'s temp directory, a sibling of the workspace',
    class: 'write outside',
    command: (f) => `echo pwned > ${f.pwn(f.outside)}; echo pwned >> ${f.outsideFile}`,
    check: failed,
  },
  {
    name: 'write into the host\'s /tmp (the sandbox has its own)',
    class: 'write outside',
    command: (f) => `echo pwned > ${f.pwn(tmpdir())}; echo pwned > ${f.pwn('/tmp')}; ls /tmp`,
    check: () => {},
  },
  {
    name: 'write into /dev/shm (the sandbox\'s own, not the host\'s)',
    class: 'write outside',
    command: (f) => `echo pwned > ${f.pwn('/dev/shm')}`,
    check: () => {},
  },
  {
    name: 'write through .. from the workspace',
    class: 'write outside',
    command: (f) => `cd ${f.ws} && echo pwned > ../../outside/${f.token}; echo pwned > ../../outside/file.txt`,
    setup: (f) => void f.pwn(f.outside),
    check: failed,
  },
  {
    name: 'write through a symbolic link made inside that points out',
    class: 'write outside',
    command: (f) => `ln -s ${f.outside} link && echo pwned > link/${f.token}; ln -s ${f.outsideFile} file-link && echo pwned > file-link`,
    setup: (f) => void f.pwn(f.outside),
    check: (r, f) => {
      failed(r)
      // The link itself is in the workspace, where the model may write.
      expect(lstatSync(join(f.dir, 'link')).isSymbolicLink()).toBe(true)
    },
  },
  {
    name: 'write through a symbolic link the model left in the workspace beforehand',
    class: 'write outside',
    setup: (f) => symlinkSync(f.outside, join(f.dir, 'out')),
    command: (f) => `echo pwned > out/${f.token}; echo pwned > out/file.txt`,
    check: (r, f) => {
      f.pwn(f.outside)
      failed(r)
    },
  },
  {
    name: 'a hard link to an outside file, then write through it (the same file system as the workspace)',
    class: 'write outside',
    command: (f) => `ln ${f.outsideFile} hard && echo pwned > hard; ln ${f.outsideFile} hard2 || cp --link ${f.outsideFile} hard3`,
    check: (r, f) => {
      failed(r)
      expect(existsSync(join(f.dir, 'hard'))).toBe(false)
      expect(statSync(f.outsideFile).nlink).toBe(1)
    },
  },
  {
    name: 'mount --bind over the workspace\'s parent',
    class: 'write outside',
    command: (f) => `mount --bind ${f.dir} ${f.outside} && echo pwned > ${f.outside}/file.txt`,
    check: failed,
  },
  {
    name: 'unshare -rm, then remount / read-write',
    class: 'write outside',
    command: (f) => `unshare -rm sh -c 'mount -o remount,rw / && echo pwned > ${f.pwn(f.outside)}' || unshare -rm sh -c 'mount -o remount,rw,bind ${f.outside} && echo pwned > ${f.outside}/${f.token}'`,
    check: failed,
  },
  {
    name: 'unshare -rm, then bind the workspace over an outside directory',
    class: 'write outside',
    // Inside its own mount namespace the bind may work, but it only shows the workspace
    // at another path; the outside directory is unchanged.
    command: (f) => `unshare -rm sh -c 'mount --bind ${f.dir} ${f.outside} && echo pwned > ${f.outside}/${f.token} && echo pwned > ${f.outside}/file.txt'; true`,
    check: (_, f) => void f.pwn(f.outside),
  },
  {
    name: 'write through /proc/self/root',
    class: 'write outside',
    command: (f) => `echo pwned > /proc/self/root${f.pwn(f.outside)}`,
    check: failed,
  },
  {
    name: 'write through /proc/1/root',
    class: 'write outside',
    command: (f) => `echo pwned > /proc/1/root${f.pwn(f.outside)}; echo pwned > /proc/1/root${f.pwn('/etc')}`,
    check: failed,
  },
  {
    name: 'write through /proc/<test pid>/cwd (not in the pid namespace)',
    class: 'write outside',
    command: (f) => `ls /proc/${f.testPid}/cwd/ && echo pwned > /proc/${f.testPid}/cwd/${f.token}; echo pwned > /proc/${f.testPid}/root${f.pwn(f.outside)}`,
    check: (r, f) => {
      failed(r)
      f.pwn(process.cwd())
    },
  },
  {
    name: 'write a sibling-prefix directory <workspace>-evil',
    class: 'write outside',
    command: (f) => `mkdir -p ${f.ws}-evil && echo pwned > ${f.ws}-evil/x; true`,
    check: () => {},
  },
  {
    name: 'write through /proc/self/cwd/..',
    class: 'write outside',
    command: (f) => `cd ${f.ws} && echo pwned > /proc/self/cwd/../../outside/${f.token}`,
    setup: (f) => void f.pwn(f.outside),
    check: failed,
  },

  // ---- reading hidden paths ----
  {
    name: 'read the hidden file and directory directly',
    class: 'read hidden',
    command: (f) => `cat ${f.secretFile}; ls -la ${f.secretDir}; cat ${f.secretDir}/*`,
    check: noSecrets,
  },
  {
    name: 'read the hidden file through a symbolic link from the workspace',
    class: 'read hidden',
    command: (f) => `ln -s ${f.secretFile} s && cat s; ln -s ${f.secretDir} d && cat d/key.txt`,
    check: noSecrets,
  },
  {
    name: 'read the hidden file through a symbolic link the model left beforehand',
    class: 'read hidden',
    setup: (f) => {
      symlinkSync(f.secretFile, join(f.dir, 'pre-s'))
      symlinkSync(f.grants, join(f.dir, 'pre-g'))
    },
    command: () => 'cat pre-s pre-g',
    check: noSecrets,
  },
  {
    name: 'read hidden paths through /proc/self/root and /proc/1/root',
    class: 'read hidden',
    command: (f) => `cat /proc/self/root${f.secretFile} /proc/1/root${f.secretDir}/key.txt /proc/self/root${f.grants}`,
    check: noSecrets,
  },
  {
    name: 'find / -name grants.json and read what it finds',
    class: 'read hidden',
    command: (f) => `find / -xdev -name grants.json -exec cat {} + 2>/dev/null; find ${f.base} -name grants.json`,
    check: (r, f) => {
      noSecrets(r)
      expect(r.data.stdout.text).not.toContain(f.grants)
    },
  },
  {
    name: 'read the data directory from the workspace with ..',
    class: 'read hidden',
    command: (f) => `cd ${f.ws} && cat ../grants.json; ls -la ..`,
    check: (r) => {
      noSecrets(r)
      expect(r.data.stdout.text).not.toContain('grants.json')
    },
  },
  {
    name: 'hard-link the hidden file into the workspace',
    class: 'read hidden',
    command: (f) => `ln ${f.secretFile} h && cat h; ln ${f.grants} g && cat g`,
    check: (r, f) => {
      noSecrets(r)
      expect(existsSync(join(f.dir, 'h')) && readFileSync(join(f.dir, 'h'), 'utf8').includes(SECRET_FILE_TEXT)).toBe(false)
    },
  },
  {
    name: 'read /etc/shadow',
    class: 'read hidden',
    command: () => 'cat /etc/shadow; cat /etc/gshadow; grep -r "" /etc/sudoers.d 2>&1 | head -3',
    check: (r) => {
      // root's entry has a hash or a lock; only "root:" followed by it would be a leak.
      expect(r.data.stdout.text).not.toMatch(/^root:[^:\n]*:/m)
    },
  },

  // ---- environment ----
  {
    name: 'the bot\'s environment: env, /proc/self/environ',
    class: 'environment',
    command: () => 'env; cat /proc/self/environ | tr "\\0" "\\n"; echo "$DOGU_TEST_SECRET_TOKEN"',
    check: (r) => {
      lacks(ENV_SECRET)(r)
      // The plugin's `env` does reach the command.
      expect(r.data.stdout.text).toContain(`DOGU_TEST_PLUGIN_VAR=${PLUGIN_VAR}`)
    },
  },
  {
    name: 'the environment of the sandbox\'s pid 1 and of every visible process',
    class: 'environment',
    command: () => 'cat /proc/1/environ; for p in /proc/[0-9]*; do cat $p/environ; done 2>/dev/null | tr "\\0" "\\n"',
    check: lacks(ENV_SECRET),
  },
  {
    name: 'the test process\'s environ by its pid',
    class: 'environment',
    command: (f) => `cat /proc/${f.testPid}/environ; cat /proc/${process.ppid}/environ`,
    check: (r) => {
      failed(r)
      lacks(ENV_SECRET)(r)
    },
  },

  // ---- network ----
  networkAttack('bash /dev/tcp to a loopback server of the test\'s', 'loopback', (f) => `echo hi > /dev/tcp/127.0.0.1/${f.ports.loopback}`),
  networkAttack('curl to a loopback server of the test\'s', 'loopback', (f) => `curl -sS --max-time 5 http://127.0.0.1:${f.ports.loopback}/`),
  networkAttack('python socket to the machine\'s non-loopback address', 'external', (f) => PY_CONNECT(f.ip, f.ports.external)),
  networkAttack('bash /dev/tcp and curl to the non-loopback address', 'external', (f) => `echo hi > /dev/tcp/${f.ip}/${f.ports.external} || curl -sS --max-time 5 http://${f.ip}:${f.ports.external}/`),
  networkAttack('a Unix socket at a path outside /tmp (a D-Bus or database socket)', 'unix', (f) => `socat -u OPEN:/dev/null UNIX-CONNECT:${f.unixSocket} || python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${f.unixSocket}'); print('connected')"`),
  {
    name: 'DNS: getent hosts and getaddrinfo',
    class: 'network',
    command: () => 'getent hosts example.com; python3 -c "import socket; print(socket.getaddrinfo(\'example.com\', 80))"',
    check: (r) => {
      failed(r)
      expect(r.data.stdout.text.trim()).toBe('')
    },
  },
  networkAttack('an abstract unix socket of a server the test created', 'abstract', (f) => `socat -u OPEN:/dev/null ABSTRACT-CONNECT:${f.abstractName}`),
  {
    ...networkAttack('allowlist: a host not on it, through HTTP_PROXY', 'http', () => 'curl -fsS --max-time 10 http://not-allowed.test/'),
    sandbox: () => ({ network: ['allowed.test'] }),
    check(r) {
      failed(r)
      expect(r.data.network?.refused.map((x) => x.host)).toContain('not-allowed.test')
    },
  },
  {
    ...networkAttack('allowlist: a CONNECT tunnel to a host not on it', 'http', () => 'curl -fsS --max-time 10 -p https://not-allowed.test/'),
    sandbox: () => ({ network: ['allowed.test'] }),
    check(r) {
      failed(r)
      expect(r.data.network?.refused.map((x) => x.host)).toContain('not-allowed.test')
    },
  },
  (() => {
    const hits = unchangedHits('loopback')
    return {
      name: 'allowlist: the proxy refuses a loopback destination even when allowlisted',
      class: 'network',
      sandbox: () => ({ network: ['127.0.0.1', 'localhost'] }),
      command(f) {
        hits.mark(f)
        return `curl -fsS --max-time 10 http://127.0.0.1:${f.ports.loopback}/ || curl -fsS --max-time 10 http://localhost:${f.ports.loopback}/`
      },
      check(r, f) {
        hits.check(f)
        failed(r)
        expect(r.data.network?.refused.length).toBeGreaterThan(0)
      },
    } satisfies Attack
  })(),
  (() => {
    const hits = unchangedHits('external')
    return {
      name: 'allowlist: --noproxy \'*\' to an allowlisted address has no route',
      class: 'network',
      sandbox: (f) => ({ network: [f.ip] }),
      command(f) {
        hits.mark(f)
        return `curl -sS --max-time 5 --noproxy '*' http://${f.ip}:${f.ports.external}/`
      },
      check(r, f) {
        hits.check(f)
        failed(r)
      },
    } satisfies Attack
  })(),
  (() => {
    const hits = unchangedHits('http')
    return {
      // The review's attack: the host's own eth0 address, allowlisted, reached its services.
      name: 'allowlist: the machine\'s own non-loopback address, allowlisted, is refused',
      class: 'network',
      sandbox: (f) => ({ network: [f.ip] }),
      command(f) {
        hits.mark(f)
        return `curl -fsS --max-time 10 http://${f.ip}:${f.ports.http}/ || curl -fsS --max-time 10 -p http://${f.ip}:${f.ports.http}/`
      },
      check(r, f) {
        hits.check(f)
        failed(r)
        expect(r.output).not.toContain(HTTP_BODY)
        expect(r.data.network?.refused.map((x) => x.reason)).toContain(`resolves to ${f.ip}, an address of one of the bot's own machine's interfaces`)
      },
    } satisfies Attack
  })(),
  (() => {
    const hits = unchangedHits('own')
    return {
      // docs/shell-tool.md states it exactly: refused as root (the forwarder runs outside and
      // the command keeps the filter refusing AF_UNIX), reached by an ordinary user, whose
      // forwarder runs inside with Unix sockets allowed.
      name: 'allowlist: a Unix socket of the bot\'s own uid in a 0700 directory outside the workspace (reached only by an ordinary user)',
      class: 'network',
      sandbox: () => ({ network: ['allowed.test'] }),
      command(f) {
        hits.mark(f)
        return `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${f.ownSocket}'); print('connected')" || socat -u OPEN:/dev/null UNIX-CONNECT:${f.ownSocket}`
      },
      check(r, f) {
        if (root) {
          hits.check(f)
          failed(r)
          expect(r.output).not.toContain('connected')
        } else {
          expect(r.data.stdout.text, r.output).toContain('connected')
        }
      },
    } satisfies Attack
  })(),
  {
    name: 'allowlist: an allowlisted address of another host works end to end (the control)',
    class: 'network',
    sandbox: (f) => ({ network: [remoteOf(f).split(':')[0]!] }),
    command: (f) => `curl -sS --max-time 10 http://${remoteOf(f)}/`,
    check(r) {
      expect(r.data.exitCode, r.output).toBe(0)
      expect(r.data.stdout.text).toBe(REMOTE_BODY)
    },
  },

  // ---- processes ----
  {
    name: 'kill -9 and kill -STOP the test process',
    class: 'processes',
    command: (f) => `kill -STOP ${f.testPid}; kill -9 ${f.testPid}; kill -9 ${process.ppid}`,
    check: (r) => {
      failed(r)
      const state = readFileSync('/proc/self/stat', 'latin1').split(') ')[1][0]
      expect(state).not.toBe('T')
    },
  },
  {
    name: 'kill -9 -1: every process the sandbox can see',
    class: 'processes',
    command: () => 'kill -9 -1; echo survived',
    check: () => {
      expect(process.kill(process.pid, 0)).toBe(true)
    },
  },
  {
    name: 'ptrace the test process (python ctypes PTRACE_ATTACH, strace -p)',
    class: 'processes',
    command: (f) => `python3 -c "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, ${f.testPid}, 0, 0)
print('ptrace', r, os.strerror(ctypes.get_errno()))
sys.exit(0 if r == 0 else 1)
"; timeout 5 strace -p ${f.testPid} -o /dev/null`,
    check: (r, f) => {
      failed(r)
      expect(r.data.stdout.text).toContain('ptrace -1')
      expect(r.data.stderr.text).toMatch(/strace: attach: .*(No such process|Operation not permitted)/)
      // Not traced: TracerPid stays 0.
      expect(readFileSync(`/proc/${f.testPid}/status`, 'utf8')).toMatch(/^TracerPid:\s+0$/m)
    },
  },
  {
    name: 'find the bot through /proc: no process outside the sandbox is visible',
    class: 'processes',
    // The pattern is written so that it does not match the command line itself.
    command: (f) => `ls /proc/${f.testPid}; grep -l 'vi[t]est' /proc/[0-9]*/cmdline`,
    check: (r) => {
      failed(r)
      expect(r.data.stdout.text).not.toContain('cmdline')
    },
  },
  {
    name: 'a fork bomb with limits.processes: 64',
    class: 'processes',
    sandbox: () => ({ limits: { processes: 64 } as SandboxConfig['limits'] }),
    timeout: 5000,
    command: (f) => `bomb() { sleep ${f.marker} & bomb | bomb & }; bomb; wait`,
    check: forkBombStopped,
  },
  {
    name: 'the classic fork bomb :(){ :|:& };:',
    class: 'processes',
    sandbox: () => ({ limits: { processes: 64 } as SandboxConfig['limits'] }),
    timeout: 5000,
    // The shell then sleeps, so the bomb grows while the call runs.
    command: (f) => `:(){ :|:& };:; sleep ${f.marker}`,
    check: forkBombStopped,
  },
  {
    name: 'fill memory past limits.addressSpace (256 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { addressSpace: 256 * 1024 * 1024 } as SandboxConfig['limits'] }),
    command: () => 'python3 -c "b = bytearray(512 * 1024 * 1024); print(\'allocated\')"',
    check: (r) => {
      failed(r)
      expect(r.output).toContain('MemoryError')
      expect(r.data.stdout.text).not.toContain('allocated')
    },
  },
  {
    // The review's case: each process is within addressSpace, together they held 1.3 GiB.
    // As root a memory cgroup holds it here; as `nobody` (no cgroup it may write) the watchdog.
    name: 'eight processes of 160 MiB each, within limits.addressSpace (256 MiB), past limits.memory (512 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { addressSpace: 256 * 1024 * 1024, memory: 512 * 1024 * 1024 } as SandboxConfig['limits'] }),
    timeout: 60_000,
    command: () => fillMemory(8, 160, true),
    check: (r) => {
      expect(r.data.status, r.output).toBe('limit_exceeded')
      expect(r.data.limit).toBe('more than 512 MiB of memory, all its processes together (sandbox.limits.memory)')
      expect(r.text).toContain('Stopped by the sandbox: more than 512 MiB of memory')
      expect(r.data.stdout.text).not.toContain('done')
    },
  },
  {
    name: 'limits.memory (512 MiB) lets three processes of 64 MiB each finish (the control)',
    class: 'processes',
    sandbox: () => ({ limits: { memory: 512 * 1024 * 1024 } as SandboxConfig['limits'] }),
    command: () => fillMemory(3, 64),
    check: (r) => {
      expect(r.data.status, r.output).toBe('exited')
      expect(r.data.stdout.text).toContain('done')
    },
  },
  {
    name: 'a file past limits.fileSize (1 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { fileSize: 1024 * 1024 } as SandboxConfig['limits'] }),
    command: () => 'head -c 2M /dev/zero > big',
    check: (r, f) => {
      failed(r)
      expect(statSync(join(f.dir, 'big')).size).toBeLessThanOrEqual(1024 * 1024)
    },
  },
  {
    name: '/tmp past limits.tmpSize (4 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { tmpSize: 4 * 1024 * 1024 } as SandboxConfig['limits'] }),
    command: (f) => `head -c 8M /dev/zero > /tmp/${f.token}`,
    check: (r, f) => {
      failed(r)
      expect(r.output).toMatch(/No space left on device/)
      expect(existsSync(join('/tmp', f.token))).toBe(false)
    },
  },
  {
    name: '/dev and /dev/shm past limits.tmpSize (4 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { tmpSize: 4 * 1024 * 1024 } as SandboxConfig['limits'] }),
    command: (f) => `head -c 8M /dev/zero > /dev/shm/${f.token}; s=$?; head -c 8M /dev/zero > /dev/${f.token}; d=$?; echo "shm=$s dev=$d"; [ $s -eq 0 ] || [ $d -eq 0 ]`,
    check: (r, f) => {
      failed(r)
      expect(existsSync(join('/dev/shm', f.token))).toBe(false)
      expect(existsSync(join('/dev', f.token))).toBe(false)
    },
  },
  {
    name: 'a hidden directory (the data directory above the workspace) past limits.tmpSize (4 MiB)',
    class: 'processes',
    sandbox: () => ({ limits: { tmpSize: 4 * 1024 * 1024 } as SandboxConfig['limits'] }),
    command: (f) => `head -c 8M /dev/zero > ${f.dataDir}/${f.token}`,
    check: (r, f) => {
      failed(r)
      expect(existsSync(join(f.dataDir, f.token))).toBe(false)
    },
  },
  {
    name: 'a busy loop past limits.cpuTime (1 s)',
    class: 'processes',
    sandbox: () => ({ limits: { cpuTime: 1 } as SandboxConfig['limits'] }),
    timeout: 60_000,
    command: () => 'while :; do :; done',
    check: (r) => {
      // Stopped by the kernel (SIGXCPU, then SIGKILL), not by the call's timeout.
      expect(r.data.status, r.text).toBe('exited')
      expect(r.data.exitCode === 128 + 24 || r.data.exitCode === 128 + 9 || r.data.signal === 'SIGXCPU' || r.data.signal === 'SIGKILL', r.text).toBe(true)
    },
  },

  // ---- setuid ----
  {
    name: 'su, passwd, newgrp, chfn, gpasswd do not give root',
    class: 'setuid',
    command: (f) => SETUID_PROGRAMS.filter((p) => p !== 'mount').map((p) => `${p === 'su' ? 'su -c "id -u; touch ' + f.pwn('/etc') + '" root' : p} </dev/null`).join('; ') + '; id -u; cat /etc/shadow',
    check: (r) => {
      expect(r.data.stdout.text.split('\n')).not.toContain('0')
      expect(r.data.stdout.text).not.toMatch(/^root:[^:\n]*:/m)
    },
  },
  {
    name: 'the setuid mount binary',
    class: 'setuid',
    command: (f) => `/usr/bin/mount -t tmpfs none ${f.outside} && touch ${f.pwn(f.outside)}; /usr/bin/mount --bind /tmp /etc`,
    check: failed,
  },
  {
    name: 'sudo -n true (or its absence)',
    class: 'setuid',
    command: () => 'sudo -n true',
    check: failed,
  },
  {
    name: 'setpriv / capsh asking for root or capabilities',
    class: 'setuid',
    command: (f) => `setpriv --reuid=0 --regid=0 --clear-groups touch ${f.pwn('/etc')}; setpriv --inh-caps=+sys_admin --ambient-caps=+sys_admin true; cat /proc/self/status | grep -E "^(CapEff|NoNewPrivs)"`,
    check: (r) => {
      expect(r.data.stdout.text).toMatch(/^CapEff:\s+0+$/m)
      expect(r.data.stdout.text).toMatch(/^NoNewPrivs:\s+1$/m)
    },
  },
  {
    name: 'a setuid copy of bash made in the workspace runs as root neither inside nor outside',
    class: 'setuid',
    command: () => 'cp /bin/bash rootsh && chmod 4755 rootsh && ./rootsh -p -c "id -u"',
    check: (r, f) => {
      expect(r.data.stdout.text.split('\n')).not.toContain('0')
      // Outside the sandbox the file must not be a setuid-root program any user could run.
      const path = join(f.dir, 'rootsh')
      if (existsSync(path)) {
        const st = statSync(path)
        expect(st.uid === 0 && (st.mode & 0o4000) !== 0, 'the sandbox left a setuid-root program in the workspace').toBe(false)
      }
    },
  },
  {
    name: 'unshare -r: a new user namespace',
    class: 'setuid',
    command: () => 'unshare -r id -u',
    check: (r) => {
      // Where bubblewrap can forbid it (--disable-userns), the sandbox must; elsewhere it is
      // root of a namespace of its own only, and the checks below every attack hold.
      if (bwrapCanDisableUserns()) failed(r)
    },
  },

  // ---- TIOCSTI ----
  {
    name: 'TIOCSTI into /dev/tty',
    class: 'tiocsti',
    command: () => 'python3 -c "import fcntl, termios; fcntl.ioctl(open(\'/dev/tty\', \'w\'), termios.TIOCSTI, b\'x\'); print(\'injected\')"',
    check: (r) => {
      failed(r)
      expect(r.data.stdout.text).not.toContain('injected')
    },
  },
  {
    name: 'TIOCSTI on stdin, stdout and stderr',
    class: 'tiocsti',
    command: () => 'python3 -c "\nimport fcntl, termios\nfor fd in (0, 1, 2):\n    try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b\'x\'); print(\'injected\', fd)\n    except OSError as e:\n        print(\'refused\', fd, e.errno)\n"',
    check: (r) => {
      expect(r.data.stdout.text).not.toContain('injected')
      expect(r.data.stdout.text).toContain('refused 0')
    },
  },

  // ---- leaving a process behind ----
  {
    name: 'setsid sleep in the background',
    class: 'leftovers',
    command: (f) => `setsid sleep ${f.marker} > /dev/null 2>&1 < /dev/null & echo started`,
    check: () => {},
  },
  {
    name: 'nohup sleep in the background',
    class: 'leftovers',
    command: (f) => `nohup sleep ${f.marker} > /dev/null 2>&1 & disown; echo started`,
    check: () => {},
  },
  {
    name: 'a double fork',
    class: 'leftovers',
    command: (f) => `( ( sleep ${f.marker} > /dev/null 2>&1 < /dev/null & ) & ); echo started`,
    check: () => {},
  },
  {
    name: 'a python daemon (fork, setsid, fork, close its pipes)',
    class: 'leftovers',
    command: (f) => `python3 -c "
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open('/dev/null', os.O_RDWR)
        for i in (0, 1, 2): os.dup2(fd, i)
        os.execvp('sleep', ['sleep', '${f.marker}'])
    os._exit(0)
"; echo started`,
    check: () => {},
  },
  {
    name: 'sleep past the call\'s timeout',
    class: 'leftovers',
    timeout: 500,
    command: (f) => `sleep ${f.marker}`,
    check: (r) => expect(r.data.status).toBe('timed_out'),
  },
  {
    name: 'a background sleep when the call is aborted',
    class: 'leftovers',
    interrupt: 'abort',
    command: (f) => `setsid sleep ${f.marker} & sleep ${f.marker}`,
    check: (r) => expect(r.data.status).toBe('cancelled'),
  },
  {
    name: 'a background sleep when the process table is disposed',
    class: 'leftovers',
    interrupt: 'dispose',
    command: (f) => `nohup sleep ${f.marker} & sleep ${f.marker}`,
    check: (r) => expect(r.data.status).toBe('cancelled'),
  },

  // ---- the review's High git cases ----
  {
    name: 'git status with a model-written core.fsmonitor writing outside',
    class: 'git',
    setup: (f) => {
      writeFiles(f.dir, { 'a.txt': 'x\n' })
      git(f.dir, 'init', '-q')
      writeFiles(f.dir, { '.git/config': `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${f.pwn(f.outside)} ${f.pwn('/etc')}; false"\n` })
    },
    command: () => 'git status; git status --porcelain',
    check: () => {},
  },
  {
    name: 'git -p log with a model-written core.pager writing outside',
    class: 'git',
    setup: (f) => {
      writeFiles(f.dir, { 'a.txt': 'x\n' })
      git(f.dir, 'init', '-q')
      git(f.dir, 'add', '.')
      git(f.dir, 'commit', '-qm', 'one')
      writeFiles(f.dir, { '.git/config': `[core]\n\trepositoryformatversion = 0\n\tpager = "touch ${f.pwn(f.outside)}; echo pager-ran; cat"\n` })
    },
    // A pager runs only on a terminal: `script` gives git one.
    command: () => 'script -qec "git log" /dev/null < /dev/null',
    check: (r) => expect(r.data.stdout.text).toContain('pager-ran'),
  },
  {
    name: 'git commit running a model-written hook (core.hooksPath) that writes outside',
    class: 'git',
    setup: (f) => {
      writeFiles(f.dir, { 'a.txt': 'x\n', 'hooks/pre-commit': `#!/bin/sh\necho hook-ran\ntouch ${f.pwn(f.outside)} ${f.pwn('/root')}\necho pwned >> ${f.outsideFile}\n` })
      execFileSync('chmod', ['+x', join(f.dir, 'hooks/pre-commit')])
      git(f.dir, 'init', '-q')
      writeFiles(f.dir, { '.git/config': '[core]\n\trepositoryformatversion = 0\n\thooksPath = hooks\n' })
    },
    // The workspace's .git is read-only inside (a protected path): the commit runs on a
    // copy in the private /tmp, so the hook still runs, and tries to write outside.
    command: () => 'cp -a . /tmp/repo && cd /tmp/repo && git add a.txt && git -c user.email=m@example.com -c user.name=m commit -qm x',
    check: (r) => expect(r.output).toContain('hook-ran'),
  },
  {
    name: 'git log in a bare-shaped workspace whose config fetches missing objects through a shell',
    class: 'git',
    setup: (f) => {
      writeFiles(f.dir, {
        HEAD: 'ref: refs/heads/main\n',
        'refs/heads/main': '1111111111111111111111111111111111111111\n',
        'objects/info/keep': '',
        config: `[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n[remote "origin"]\n\turl = ${f.outside}\n\tpromisor = true\n\tuploadpack = "touch ${f.pwn(f.outside)}; echo pwned >> ${f.outsideFile}; false"\n`,
      })
    },
    command: () => 'git log',
    check: () => {},
  },

  // ---- protected paths (.git, .env, .env.* at any depth) are read-only inside ----
  {
    name: 'git config core.fsmonitor and a pre-commit hook written into an existing .git',
    class: 'protected',
    setup: (f) => {
      writeFiles(f.dir, { 'a.txt': 'x\n' })
      git(f.dir, 'init', '-q')
      kept.set(f.token, snapshot(join(f.dir, '.git')))
    },
    command: (f) => `git config core.fsmonitor "touch ${f.pwn(f.outside)}"; git config core.hooksPath /tmp; mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch ${f.pwn(f.outside)}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git update-ref refs/heads/evil HEAD`,
    check: (r, f) => {
      failed(r)
      expect(r.output).toContain('Read-only file system')
      expect(snapshot(join(f.dir, '.git'))).toBe(kept.get(f.token))
    },
  },
  {
    name: 'an existing .env and a nested .env.local appended, truncated, edited in place, hard-linked',
    class: 'protected',
    setup: (f) => {
      writeFiles(f.dir, { '.env': 'TOKEN=owner\n', 'deep/er/.env.local': 'MODE=owner\n' })
    },
    command: () => 'echo EVIL=1 >> .env; : > deep/er/.env.local; sed -i s/owner/model/ .env; ln .env copy && echo EVIL=2 >> copy; cp /dev/null deep/er/.env.local; truncate -s0 .env',
    check: (r, f) => {
      failed(r)
      expect(readFileSync(join(f.dir, '.env'), 'utf8')).toBe('TOKEN=owner\n')
      expect(readFileSync(join(f.dir, 'deep/er/.env.local'), 'utf8')).toBe('MODE=owner\n')
    },
  },
  {
    name: 'an existing .git and .env removed or renamed away, then made anew',
    class: 'protected',
    setup: (f) => {
      writeFiles(f.dir, { 'a.txt': 'x\n', '.env': 'TOKEN=owner\n' })
      git(f.dir, 'init', '-q')
      kept.set(f.token, snapshot(join(f.dir, '.git')))
    },
    command: () => 'rm -rf .git; mv .git old.git; mv .env old.env; rm -f .env; git init -q . ; echo TOKEN=model > .env; ls -a',
    check: (r, f) => {
      expect(snapshot(join(f.dir, '.git'))).toBe(kept.get(f.token))
      expect(readFileSync(join(f.dir, '.env'), 'utf8')).toBe('TOKEN=owner\n')
      expect(existsSync(join(f.dir, 'old.git')) || existsSync(join(f.dir, 'old.env'))).toBe(false)
    },
  },
  {
    name: 'the folder holding a .git renamed, and a new repository with core.fsmonitor made in its place',
    class: 'protected',
    setup: (f) => {
      writeFiles(f.dir, { 'sub/a.txt': 'x\n' })
      git(join(f.dir, 'sub'), 'init', '-q')
      kept.set(f.token, snapshot(join(f.dir, 'sub/.git')))
    },
    command: (f) => `mv sub moved && mkdir sub && git init -q sub && git -C sub config core.fsmonitor "touch ${f.pwn(f.outside)}" && echo made`,
    check: (r, f) => {
      // Inside the command it worked; after it, the new .git is gone and the moved one kept.
      expect(r.data.stdout.text).toContain('made')
      expect(r.text).toContain('Removed the protected paths the command created')
      expect(existsSync(join(f.dir, 'sub/.git'))).toBe(false)
      expect(snapshot(join(f.dir, 'moved/.git')).replaceAll('/moved/', '/sub/')).toBe(kept.get(f.token))
    },
  },
  {
    name: 'a new .git, .env.production and nested .env created where none was',
    class: 'protected',
    command: (f) => `git init -q . && git config core.fsmonitor "touch ${f.pwn(f.outside)}" && echo X=1 > .env.production && mkdir -p a/b && echo Y=1 > a/b/.env && ls -a`,
    check: (r, f) => {
      expect(r.data.exitCode, r.output).toBe(0)
      expect((r.data as { protectedCreated?: { removed: string[] } }).protectedCreated?.removed.length).toBe(3)
      for (const path of ['.git', '.env.production', 'a/b/.env']) expect(existsSync(join(f.dir, path)), path).toBe(false)
      expect(existsSync(join(f.dir, 'a/b'))).toBe(true)
    },
  },
  {
    name: 'a protected .env that is a link: its target in the workspace written',
    class: 'protected',
    setup: (f) => {
      writeFiles(f.dir, { 'real.env': 'TOKEN=owner\n' })
      symlinkSync('real.env', join(f.dir, '.env'))
    },
    command: () => 'cat .env; echo EVIL=1 >> .env; echo EVIL=2 >> real.env',
    check: (r, f) => {
      failed(r)
      expect(readFileSync(join(f.dir, 'real.env'), 'utf8')).toBe('TOKEN=owner\n')
    },
  },

  // ---- the bot's home is empty inside ----
  {
    name: 'a token file and the shell profile in the bot\'s home read',
    class: 'home',
    setup: (f) => {
      writeFileSync(join(homedir(), `.dogu-vault-token-${f.token}`), `${ENV_SECRET}-vault\n`)
    },
    command: (f) => `cat ~/.dogu-vault-token-${f.token}; cat ~/.bashrc ~/.profile; ls -A ~; cat ${homedir()}/.dogu-vault-token-${f.token}`,
    check: (r, f) => {
      rmSync(join(homedir(), `.dogu-vault-token-${f.token}`), { force: true })
      failed(r)
      expect(r.output).not.toContain(`${ENV_SECRET}-vault`)
      expect(r.data.stdout.text.trim()).toBe('')
    },
  },

  // ---- a set-up racing a running command that swaps a folder for a link ----
  {
    name: 'a second command set up while the first swaps the folder above a protected .git for a link to the host',
    class: 'set-up race',
    timeout: 30_000,
    setup: (f) => {
      writeFiles(f.dir, { 'sub/.git/HEAD': 'ref: refs/heads/main\n' })
    },
    // The link names the host's root as bubblewrap 0.8 sees it while it sets up.
    command: (f) => `sleep ${f.marker} & end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do mv sub s2; ln -s /oldroot${f.outside} sub; rm sub; mv s2 sub; done; kill $!; date +%s%N > a-ended`,
    concurrent: () => 'date +%s%N > b-started; ls -a sub/.git',
    check: (r, f) => {
      expect(r.concurrent?.data.exitCode, r.concurrent?.output).toBe(0)
      expect(existsSync(join(f.outside, '.git')), 'bubblewrap made a folder on the host').toBe(false)
      // On a bubblewrap that follows links, the second set-up waits until the swapper ended.
      if (followsLinks()) expect(BigInt(readFileSync(join(f.dir, 'b-started'), 'utf8').trim())).toBeGreaterThan(BigInt(readFileSync(join(f.dir, 'a-ended'), 'utf8').trim()))
    },
  },
]

// What an attack's setup kept of a protected path, by its token, for its check.
const kept = new Map<string, string>()

/** Whether this machine's bubblewrap follows links during set-up, as the tool's own probe found. */
function followsLinks(): boolean {
  const support = detectSandbox()
  return support.available && support.followsLinks
}

let canDisable: boolean | undefined
/** Whether this bubblewrap and kernel can forbid new user namespaces, asked of bubblewrap itself. */
function bwrapCanDisableUserns(): boolean {
  if (canDisable === undefined) {
    const uid = root ? ['--uid', '1000', '--gid', '1000'] : []
    const result = spawnSync('bwrap', [
      '--unshare-all', '--unshare-user', '--disable-userns', ...uid, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true',
    ], { stdio: 'ignore', timeout: 10_000 })
    canDisable = result.status === 0
  }
  return canDisable
}
