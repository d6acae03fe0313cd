import { spawnSync } from 'node:child_process'
import { accessSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { seccompFilter } from './seccomp-filter'

/** What detection found: bubblewrap that creates its namespaces here, or why not. */
export type SandboxSupport =
  | {
    available: true
    /** bubblewrap's real path. */
    bwrap: string
    /** Whether `--disable-userns` works (bubblewrap ≥ 0.8 on a kernel that allows it). */
    disableUserns: boolean
    /** util-linux `prlimit`, which applies the resource limits inside; absent means limits are not applied. */
    prlimit?: string
    /** `socat`, which forwards the sandbox's loopback to the network proxy; absent means no allowlist. */
    socat?: string
    /** util-linux `nsenter`: a root bot runs the forwarder in the sandbox's network namespace only. */
    nsenter?: string
    /**
     * The seccomp filter files (seccomp-filter.ts), one refusing Unix sockets and one allowing
     * them (for the allowlist's forwarder); absent where the architecture has none or the
     * kernel refused it.
     */
    seccomp?: { strict: string; unixSockets: string }
    /**
     * Whether this bubblewrap follows a link on the way to a mount destination while the
     * host's root is still reachable (bubblewrap before 0.12, e.g. Debian 12's 0.8.0), found
     * by a harmless set-up through a planted link in a private folder, not by its version.
     * Then no set-up may have a destination below a path that a running command can write.
     */
    followsLinks: boolean
  }
  | { available: false; reason: string }

const cache = new Map<string, SandboxSupport>()

/**
 * Checks once per path, synchronously (a few milliseconds at start), whether `bwrapPath`
 * exists and can create the namespaces a sandboxed command gets: containers often forbid
 * user namespaces, and then the answer says so. Linux only.
 */
export function detectSandbox(bwrapPath = 'bwrap'): SandboxSupport {
  let support = cache.get(bwrapPath)
  if (!support) cache.set(bwrapPath, support = probe(bwrapPath))
  return support
}

function probe(bwrapPath: string): SandboxSupport {
  if (process.platform !== 'linux') return { available: false, reason: `bubblewrap runs on Linux only (this is ${process.platform})` }
  const bwrap = findProgram(bwrapPath)
  if (!bwrap) return { available: false, reason: `${bwrapPath} was not found${bwrapPath.includes('/') ? '' : ' on PATH'}; Debian: apt-get install bubblewrap` }
  const tryRun = (extra: string[], fd?: number) => spawnSync(bwrap, [
    '--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', ...extra,
    '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--', 'true',
  ], { stdio: ['ignore', 'ignore', 'pipe', ...fd === undefined ? [] : [fd]], timeout: 10_000, encoding: 'utf8' })
  const uid = process.getuid?.() === 0 ? ['--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID)] : []
  const filters = writeFilters()
  const works = (extra: string[]) => {
    if (!filters || !extra.includes('--seccomp')) return tryRun(extra).status === 0
    const fd = openSync(filters.strict, 'r')
    try {
      return tryRun(extra, fd).status === 0
    } finally {
      closeSync(fd)
    }
  }
  const tools = { prlimit: findProgram('prlimit'), socat: findProgram('socat'), nsenter: findProgram('nsenter') }
  // The usual answer, everything works, costs one start; the separate probes only follow a refusal.
  if (filters && works([...uid, '--disable-userns', '--seccomp', '3'])) return { available: true, bwrap, disableUserns: true, ...tools, seccomp: filters, followsLinks: followsLinks(bwrap, uid) }
  const plain = tryRun(uid)
  if (plain.error || plain.status !== 0) {
    const why = plain.error?.message ?? (plain.stderr.trim().split('\n')[0] || `exit code ${plain.status}`)
    return { available: false, reason: `${bwrap} cannot create namespaces here: ${why}` }
  }
  const disableUserns = works([...uid, '--disable-userns'])
  return { available: true, bwrap, disableUserns, ...tools, seccomp: filters && works([...uid, '--seccomp', '3']) ? filters : undefined, followsLinks: followsLinks(bwrap, uid) }
}

/**
 * The probe for CVE-2026-87766 (GHSA-pxhw-h44j-8pfx): in a private folder, a link
 * `ws/link` to `/oldroot/<folder>/target` (the host's root as bubblewrap sees it while it
 * sets up), and a tmpfs asked for at `ws/link/made`. A bubblewrap that follows the link
 * makes `target/made` on the host; a fixed one does not. Anything but a clean answer
 * counts as following.
 */
function followsLinks(bwrap: string, uid: string[]): boolean {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-bwrap-probe-')))
  try {
    const ws = join(dir, 'ws')
    const target = join(dir, 'target')
    mkdirSync(ws)
    mkdirSync(target)
    symlinkSync(`/oldroot${target}`, join(ws, 'link'))
    spawnSync(bwrap, [
      '--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', ...uid,
      '--ro-bind', '/', '/', '--bind', ws, ws, '--tmpfs', join(ws, 'link', 'made'), '--', 'true',
    ], { stdio: 'ignore', timeout: 10_000 })
    return existsSync(join(target, 'made'))
  } catch {
    return true
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Writes both filters into a private folder, removed when the process exits; undefined where the architecture has none. */
function writeFilters(): { strict: string; unixSockets: string } | undefined {
  const strict = seccompFilter({ unixSockets: false })
  const unixSockets = seccompFilter({ unixSockets: true })
  if (!strict || !unixSockets) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'dogu-seccomp-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const files = { strict: join(dir, 'strict.bpf'), unixSockets: join(dir, 'unix-sockets.bpf') }
  writeFileSync(files.strict, strict, { mode: 0o400 })
  writeFileSync(files.unixSockets, unixSockets, { mode: 0o400 })
  return files
}

/**
 * The uid commands have inside the sandbox when the bot runs as root: unprivileged there,
 * so setuid programs and capabilities mean nothing. It still maps to root outside (the
 * workspace is root's to write), so the kernel's process limit does not hold for it and a
 * pids cgroup holds it instead (sandbox-cgroup.ts), or else a watchdog (sandbox-namespace.ts).
 */
export const SANDBOX_UID = 1000

/** An executable's real path: `name` itself when it holds a `/`, else the first match on `path`. */
export function findProgram(name: string, path = process.env.PATH): string | undefined {
  const candidates = name.includes('/') ? [name] : (path ?? '/usr/bin:/bin').split(delimiter).filter(Boolean).map((dir) => join(dir, name))
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK)
      return realpathSync(path)
    } catch {}
  }
}
