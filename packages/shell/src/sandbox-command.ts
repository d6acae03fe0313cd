import { accessSync, constants, lstatSync, realpathSync } from 'node:fs'
import { SANDBOX_UID, type SandboxSupport } from './detect-sandbox'
import { within } from './git-repository'
import type { SandboxLimits } from './sandbox-config'
import { ShellError } from './shell-error'

/** Where the network proxy's socket appears inside, and the loopback port the forwarder listens on. */
export const PROXY_SOCKET = '/tmp/.dogu-proxy.sock'
export const PROXY_PORT = 3128

export interface SandboxCommandRequest {
  support: Extract<SandboxSupport, { available: true }>
  /** The workspace's real path: mounted read-write (read-only when `readOnly`). */
  workspace: string
  /** The working directory's real path, inside the workspace. */
  cwd: string
  readOnly: boolean
  /**
   * `none`, `host`, or the proxy's Unix socket outside (an allowlist), with where the
   * forwarder to it runs: `inside` (socat in the sandbox, through the socket bound in) or
   * `outside` (socat in the sandbox's network namespace only, started by the caller).
   */
  network: 'none' | 'host' | { proxySocket: string; forwarder: 'inside' | 'outside' }
  writable: readonly string[]
  hidden: readonly string[]
  /**
   * Real paths inside the workspace (or a writable path) mounted read-only over it: the
   * protected entries (sandbox-protected.ts) and the real targets of protected links.
   */
  protected?: readonly string[]
  /** The bot's home, replaced by an empty read-only directory; what is bound inside it comes back on top. */
  home?: string
  limits: SandboxLimits
  shell: string
  command: string
  env: NodeJS.ProcessEnv
  /** The seccomp filter is open as the child's fd 3. */
  seccomp: boolean
}

export interface SandboxCommand {
  file: string
  args: string[]
  env: NodeJS.ProcessEnv
  /** Every path bubblewrap mounts over, for the set-up gate (sandbox-setup-gate.ts). */
  destinations: string[]
}

interface Mount {
  path: string
  args: string[]
}

/**
 * The bubblewrap command line that runs `shell -c command` confined: `/` read-only, the
 * workspace writable, hidden paths replaced by empty ones, fresh `/proc`, `/dev` and a
 * size-capped `/tmp`, new user, pid, ipc, uts, cgroup and (unless `host`) net namespaces, no
 * new privileges, its own session (no terminal to push input into), killed with its parent,
 * and the resource limits applied by `prlimit` inside.
 */
export function sandboxCommand(request: SandboxCommandRequest): SandboxCommand {
  const { support, workspace, limits } = request
  const mounts: Mount[] = [
    { path: '/proc', args: ['--proc', '/proc'] },
    { path: '/dev', args: ['--dev', '/dev'] },
    // The size caps /tmp and /dev/shm; /dev itself and every hidden directory are made
    // read-only once everything is mounted, so no tmpfs is left to fill memory with.
    { path: '/dev/shm', args: ['--size', String(limits.tmpSize), '--tmpfs', '/dev/shm'] },
    { path: '/tmp', args: ['--size', String(limits.tmpSize), '--tmpfs', '/tmp'] },
    { path: workspace, args: [request.readOnly ? '--ro-bind' : '--bind', workspace, workspace] },
  ]
  const writable: string[] = []
  if (!request.readOnly) {
    for (const path of request.writable) {
      const real = realOrNothing(path)
      // Inside the workspace it is writable already: no destination below a writable path.
      if (real && real !== '/' && !within(real, workspace)) writable.push(real)
    }
    for (const real of writable) mounts.push({ path: real, args: ['--bind', real, real] })
    for (const real of request.protected ?? []) mounts.push({ path: real, args: ['--ro-bind', real, real] })
  }
  const remounts = ['/dev']
  // The home is emptied first (a tmpfs, read-only at the end); the workspace and the
  // writable paths inside it are mounted back on top, by the depth order below.
  const home = request.home
  if (home) {
    mounts.push({ path: home, args: ['--tmpfs', home] })
    remounts.push(home)
  }
  const boundBack = [workspace, ...writable]
  const seen = new Set<string>()
  for (const path of request.hidden) {
    const real = realOrNothing(path)
    // The workspace itself stays visible when it is the hidden path (the data directory
    // holding `workspace/`); a hidden path above it is emptied first, then the workspace
    // is mounted back on top, by the depth order below. A hidden path inside a writable one
    // hides nothing (the command can rename it), so it is not mounted: the config refuses
    // such entries, and the description says which defaults it left visible.
    if (!real || real === '/' || real === workspace || seen.has(real) || !readable(real)) continue
    if (boundBack.some((root) => real !== root && within(real, root))) continue
    // Inside the emptied home already, unless something bound back holds it.
    if (home && within(real, home) && !boundBack.some((root) => within(real, root))) continue
    seen.add(real)
    let directory: boolean
    try {
      directory = lstatSync(real).isDirectory()
    } catch (error) {
      throw new ShellError('SANDBOX_SETUP', `the hidden path ${real} changed while the sandbox was being set up (${(error as NodeJS.ErrnoException).code}); nothing ran, try again`, { cause: error })
    }
    if (directory) {
      mounts.push({ path: real, args: ['--tmpfs', real] })
      remounts.push(real)
    } else {
      // A file becomes /dev/null, bound with --dev-bind: --ro-bind adds nodev, and opening
      // the device there fails with EACCES (git then aborts on a hidden ~/.gitconfig).
      mounts.push({ path: real, args: ['--dev-bind', '/dev/null', real] })
    }
  }
  // With the host's network, its resolver config may live under the hidden /run.
  if (request.network === 'host') {
    const resolv = realOrNothing('/etc/resolv.conf')
    if (resolv && resolv !== '/etc/resolv.conf') mounts.push({ path: resolv, args: ['--ro-bind', resolv, resolv] })
  }
  if (typeof request.network === 'object' && request.network.forwarder === 'inside') {
    mounts.push({ path: PROXY_SOCKET, args: ['--bind', request.network.proxySocket, PROXY_SOCKET] })
  }
  // Parents before children, so a mount inside another lands on top of it; the sort is
  // stable, so equal depths keep the order above.
  mounts.sort((a, b) => depth(a.path) - depth(b.path))

  const args = ['--ro-bind', '/', '/']
  for (const mount of mounts) args.push(...mount.args)
  for (const path of remounts) args.push('--remount-ro', path)
  // `--unshare-user` said outright: `--disable-userns` needs it, and `--unshare-all` only tries.
  args.push('--unshare-all', '--unshare-user')
  if (request.network === 'host') args.push('--share-net')
  if (process.getuid?.() === 0) args.push('--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID))
  if (support.disableUserns) args.push('--disable-userns')
  if (request.seccomp) args.push('--seccomp', '3')
  args.push('--die-with-parent', '--new-session', '--chdir', request.cwd, '--')

  let inner = [request.shell, '-c', request.command]
  if (support.prlimit) inner = [support.prlimit, ...limitFlags(limits), '--', ...inner]
  const env: NodeJS.ProcessEnv = { ...request.env, TMPDIR: '/tmp' }
  if (typeof request.network === 'object') {
    const proxy = `http://127.0.0.1:${PROXY_PORT}`
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) env[name] = proxy
    delete env.NO_PROXY
    delete env.no_proxy
    inner = ['/bin/sh', '-c', forwarder(support.socat!, request.network.forwarder === 'inside'), 'dogu-sandbox', ...inner]
  }
  return { file: support.bwrap, args: [...args, ...inner], env, destinations: mounts.map((mount) => mount.path) }
}

/**
 * Starts `socat` on the sandbox's own loopback, forwarding to the proxy's socket (unless
 * it runs outside), waits until the port accepts (at most 5 s), then becomes the command.
 * Nothing else has a route out.
 */
function forwarder(socat: string, inside: boolean): string {
  return `${inside ? `${socat} ${forwarderListen()} UNIX-CONNECT:${PROXY_SOCKET} 2>/dev/null &\n` : ''}i=0
until ${socat} -u OPEN:/dev/null TCP:127.0.0.1:${PROXY_PORT} 2>/dev/null; do
  i=$((i+1)); if [ $i -ge 1000 ]; then echo 'dogu sandbox: the network forwarder did not start' >&2; exit 125; fi
  sleep 0.002
done
exec "$@"`
}

/** socat's listening address for the forwarder, on the sandbox's loopback. */
export function forwarderListen(): string {
  return `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,reuseaddr,fork`
}

function limitFlags(limits: SandboxLimits): string[] {
  const flags: string[] = []
  if (limits.processes > 0) flags.push(`--nproc=${limits.processes}`)
  if (limits.fileSize > 0) flags.push(`--fsize=${limits.fileSize}`)
  if (limits.cpuTime > 0) flags.push(`--cpu=${limits.cpuTime}`)
  if (limits.addressSpace > 0) flags.push(`--as=${limits.addressSpace}`)
  return flags
}

/**
 * Whether the bot itself can read `path`. A path it cannot read needs no mount: the sandbox
 * has the bot's uid and groups, or, for a root bot, root's uid without root's capabilities,
 * which `access` (run with them) answers yes to, so for root everything is hidden.
 */
function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK)
    return true
  } catch {
    return false
  }
}

function depth(path: string): number {
  let n = 0
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++
  return path === '/' ? 0 : n
}

function realOrNothing(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}
