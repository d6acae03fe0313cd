/**
 * The seccomp filter every sandboxed command runs under, as the classic BPF program
 * bubblewrap's `--seccomp FD` loads. No libseccomp: the program is a few dozen
 * instructions, built here for the machine's own architecture.
 *
 * What it refuses, and why the mount namespace alone cannot:
 * - **setuid and setgid bits** (`chmod`, `fchmod`, `fchmodat`, `fchmodat2`, and creating a
 *   file with them: `open`, `openat`, `creat`, `mknod`, `mknodat`): when the bot runs as
 *   root, the sandbox's uid is root outside, so a `chmod 4755` on a copy of bash in the
 *   workspace would leave a setuid-root program for every local user. `EPERM`.
 * - **`openat2`** and **`io_uring_setup`**, whose modes hide in structures a filter cannot
 *   read: `ENOSYS`, so libc and runtimes fall back to the calls above.
 * - **Unix domain sockets** (`socket(AF_UNIX, …)`; `socketpair` stays allowed): a socket
 *   file is reachable through a read-only mount, and `/var/run/docker.sock` or a database
 *   trusting its peer's uid would be a way out. `EPERM`. Not applied with a network
 *   allowlist, whose forwarder must reach the proxy's socket (see docs/shell-tool.md).
 * - **Another ABI** (x32 on x86-64, 32-bit calls): numbers the rules above do not name.
 *   `ENOSYS`.
 */

interface Arch {
  audit: number
  /** Syscall numbers, which argument holds the mode, and for the `open` family which holds the flags. */
  modes: [nr: number, mode: number, flags?: number][]
  socket: number
  blocked: number[]
  /** Numbers at or above this belong to another ABI (x32). */
  abiBit?: number
}

const ARCHES: Partial<Record<NodeJS.Architecture, Arch>> = {
  x64: {
    audit: 0xc000003e,
    // chmod, fchmod, fchmodat, fchmodat2, open, creat, openat, mknod, mknodat
    modes: [[90, 1], [91, 1], [268, 2], [452, 2], [2, 2, 1], [85, 1], [257, 3, 2], [133, 1], [259, 2]],
    socket: 41,
    // openat2, io_uring_setup
    blocked: [437, 425],
    abiBit: 0x40000000,
  },
  arm64: {
    audit: 0xc00000b7,
    // fchmod, fchmodat, fchmodat2, openat, mknodat
    modes: [[52, 1], [53, 2], [452, 2], [56, 3, 2], [33, 2]],
    socket: 198,
    blocked: [437, 425],
  },
}

const LD_ABS = 0x20
const JEQ = 0x15
const JGE = 0x35
const JSET = 0x45
const RET = 0x06
const ALLOW = 0x7fff0000
const ERRNO = 0x00050000
const EPERM = 1
const ENOSYS = 38
const AF_UNIX = 1
const SETID_BITS = 0o6000
// An `open` without these ignores its mode argument, which then holds whatever the register
// had: only a creating open is judged by it.
const CREATING = 0o100 | 0o20000000 // O_CREAT | __O_TMPFILE
// struct seccomp_data: nr at 0, arch at 4, args (u64, little-endian) from 16.
const argLow = (i: number) => 16 + 8 * i

type Target = string | number
interface Instruction {
  code: number
  k: number
  jt?: Target
  jf?: Target
  label?: string
}

/** Whether this machine's architecture has a filter. */
export function seccompSupported(arch: NodeJS.Architecture = process.arch): boolean {
  return !!ARCHES[arch]
}

/** The filter as bytes (`struct sock_filter[]`), or undefined on an architecture without one. */
export function seccompFilter(options: { unixSockets: boolean }, arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const spec = ARCHES[arch]
  if (!spec) return undefined
  const program: Instruction[] = [
    { code: LD_ABS, k: 4 },
    { code: JEQ, k: spec.audit, jt: 0, jf: 'nosys' },
    { code: LD_ABS, k: 0 },
  ]
  if (spec.abiBit) program.push({ code: JGE, k: spec.abiBit, jt: 'nosys', jf: 0 })
  for (const nr of spec.blocked) program.push({ code: JEQ, k: nr, jt: 'nosys', jf: 0 })
  if (!options.unixSockets) program.push({ code: JEQ, k: spec.socket, jt: 'socket', jf: 0 })
  const block = (mode: number, flags?: number) => flags === undefined ? `mode${mode}` : `open${flags}.${mode}`
  for (const [nr, mode, flags] of spec.modes) program.push({ code: JEQ, k: nr, jt: block(mode, flags), jf: 0 })
  program.push({ code: RET, k: ALLOW })
  const blocks = new Map(spec.modes.map(([, mode, flags]) => [block(mode, flags), [mode, flags] as const]))
  for (const [label, [mode, flags]] of blocks) {
    if (flags !== undefined) {
      program.push(
        { code: LD_ABS, k: argLow(flags), label },
        { code: JSET, k: CREATING, jt: 1, jf: 0 },
        { code: RET, k: ALLOW },
      )
    }
    program.push(
      { code: LD_ABS, k: argLow(mode), ...flags === undefined ? { label } : {} },
      { code: JSET, k: SETID_BITS, jt: 'eperm', jf: 0 },
      { code: RET, k: ALLOW },
    )
  }
  if (!options.unixSockets) {
    program.push(
      { code: LD_ABS, k: argLow(0), label: 'socket' },
      { code: JEQ, k: AF_UNIX, jt: 'eperm', jf: 0 },
      { code: RET, k: ALLOW },
    )
  }
  program.push(
    { code: RET, k: ERRNO | EPERM, label: 'eperm' },
    { code: RET, k: ERRNO | ENOSYS, label: 'nosys' },
  )
  return assemble(program)
}

/** Resolves labels to the forward offsets BPF jumps take (never backwards), and encodes each instruction in 8 bytes. */
function assemble(program: Instruction[]): Buffer {
  const at = new Map<string, number>()
  program.forEach((instruction, i) => instruction.label && at.set(instruction.label, i))
  const offset = (from: number, target: Target | undefined) => {
    if (target === undefined || typeof target === 'number') return target ?? 0
    const to = at.get(target)
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`seccomp: bad jump to ${target}`)
    return to - from - 1
  }
  const out = Buffer.alloc(program.length * 8)
  program.forEach((instruction, i) => {
    out.writeUInt16LE(instruction.code, i * 8)
    out.writeUInt8(offset(i, instruction.jt), i * 8 + 2)
    out.writeUInt8(offset(i, instruction.jf), i * 8 + 3)
    out.writeUInt32LE(instruction.k >>> 0, i * 8 + 4)
  })
  return out
}
