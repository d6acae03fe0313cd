import Schema from 'schemastery'

/** `auto`: sandbox where bubblewrap works, else run as before and say so; `required`: refuse unsandboxed; `off`: never sandbox. */
export type SandboxMode = 'auto' | 'required' | 'off'

/** `none`: no network at all; `host`: the host's network; a list: only these hosts, through a proxy outside the sandbox. */
export type SandboxNetwork = 'none' | 'host' | string[]

/** Resource limits of each sandboxed command; `0` lifts one. */
export interface SandboxLimits {
  /** Processes (and threads) the command may have at once. */
  processes: number
  /** Largest file the command may write, in bytes. */
  fileSize: number
  /** CPU seconds each process may use. */
  cpuTime: number
  /** Address space of each process, in bytes. */
  addressSpace: number
  /** Size of the private `/tmp`, in bytes. */
  tmpSize: number
  /** Memory of the whole command, all its processes together (and what they keep in its tmpfs), in bytes. */
  memory: number
}

export interface SandboxConfig {
  mode: SandboxMode
  network: SandboxNetwork
  /** Extra writable paths besides the workspace and the private `/tmp`; missing ones are skipped. */
  writable: string[]
  /** Extra paths made invisible (an empty directory or file) besides the defaults; not inside the workspace or a writable path. */
  hidden: string[]
  /** `hidden`: the bot's home is an empty read-only folder inside, the workspace and writable paths in it bound back; `visible`: only the listed credential paths in it are hidden. */
  home: 'hidden' | 'visible'
  /** `scrub`: only a small allowlist of variables plus the plugin's `env` reach commands, sandboxed or not. */
  env: 'scrub' | 'inherit'
  /** bubblewrap, looked up on `PATH` unless it holds a `/`. A path that does not exist means unavailable. */
  bwrapPath: string
  /** The app's data directory (grants, tokens, databases), hidden except the workspace; the host fills it in. */
  dataDir?: string
  limits: SandboxLimits
}

const MiB = 1024 * 1024
const GiB = 1024 * MiB

export const SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  processes: 256,
  fileSize: GiB,
  cpuTime: 600,
  addressSpace: 4 * GiB,
  tmpSize: 512 * MiB,
  // Room for a compiler or a test run, and not more than a small bot host has to spare.
  memory: GiB,
})

export const SandboxLimits: Schema<Partial<SandboxLimits>, SandboxLimits> = Schema.object({
  processes: Schema.natural().default(SANDBOX_LIMITS.processes).description('Processes and threads a command may have at once (0: no limit).'),
  fileSize: Schema.natural().role('byte').default(SANDBOX_LIMITS.fileSize).description('Largest file a command may write (0: no limit).'),
  cpuTime: Schema.natural().role('s').default(SANDBOX_LIMITS.cpuTime).description('CPU seconds per process (0: no limit).'),
  addressSpace: Schema.natural().role('byte').default(SANDBOX_LIMITS.addressSpace).description('Address space per process (0: no limit). WebAssembly runtimes reserve more than 4 GiB.'),
  tmpSize: Schema.natural().role('byte').min(MiB).default(SANDBOX_LIMITS.tmpSize).description('Size of the private /tmp.'),
  memory: Schema.natural().role('byte').default(SANDBOX_LIMITS.memory).description('Memory of a whole command, all its processes together (0: no limit). A memory cgroup where one can be made, else a watchdog.'),
})

/** What a user writes: every field optional, `limits` field by field. */
export type SandboxOptions = Partial<Omit<SandboxConfig, 'limits'>> & { limits?: Partial<SandboxLimits> }

export const SandboxConfig: Schema<SandboxOptions, SandboxConfig> = Schema.object({
  mode: Schema.union(['auto', 'required', 'off'] as const).default('auto')
    .description('auto: sandbox where bubblewrap works, otherwise run unsandboxed and say so; required: refuse to run unsandboxed; off: never sandbox.'),
  network: Schema.union([
    Schema.const('none' as const).description('none'),
    Schema.const('host' as const).description('host'),
    Schema.array(String).description('allowlist'),
  ]).default('none').description('Network inside the sandbox: none, the host\'s, or a list of hosts (`api.example.com`, `*.example.org`) reached through a proxy outside.'),
  writable: Schema.array(String).default([]).description('Extra writable paths; the workspace and a private /tmp always are.'),
  hidden: Schema.array(String).default([]).description('Extra paths made invisible inside, besides credential folders and the app\'s data directory; not inside the workspace or a writable path, where a command could rename them.'),
  home: Schema.union(['hidden', 'visible'] as const).default('hidden').description('hidden: the bot\'s home is empty inside (the workspace and writable paths in it stay); visible: only the credential paths in it are hidden.'),
  env: Schema.union(['scrub', 'inherit'] as const).default('scrub').description('scrub: commands get only PATH, HOME, LANG, TERM and a few more, plus `env`; inherit: the bot\'s whole environment.'),
  bwrapPath: Schema.string().default('bwrap').description('bubblewrap\'s path, or a name looked up on PATH.'),
  dataDir: Schema.string().description('The app\'s data directory, hidden inside (the host sets it: Koishi\'s baseDir).'),
  limits: SandboxLimits,
})
