import { describe, expect, it } from 'vitest'
import { seccompFilter, seccompSupported } from '../src/seccomp-filter'

// The filter's effect is proven by the escape suite on this machine's architecture; this
// checks the program itself on each, arm64 included, where no test machine runs it.
interface Decoded { code: number; jt: number; jf: number; k: number }
const decode = (bytes: Buffer): Decoded[] => Array.from({ length: bytes.length / 8 }, (_, i) => ({
  code: bytes.readUInt16LE(i * 8), jt: bytes.readUInt8(i * 8 + 2), jf: bytes.readUInt8(i * 8 + 3), k: bytes.readUInt32LE(i * 8 + 4),
}))
const RET = 0x06
const JUMPS = new Set([0x15, 0x35, 0x45])

/** Runs the program for one syscall (its number, arch and arguments) and returns what it answers. */
function run(program: Decoded[], data: { arch: number; nr: number; args: number[] }): number {
  let acc = 0
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc]
    if (code === 0x20) acc = k === 0 ? data.nr : k === 4 ? data.arch : data.args[(k - 16) / 8] ?? 0
    else if (code === RET) return k
    else if (code === 0x15) pc += acc === k ? jt : jf
    else if (code === 0x35) pc += acc >= k ? jt : jf
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf
    else throw new Error(`unknown opcode ${code}`)
  }
  throw new Error('fell off the end of the program')
}

const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const ENOSYS = 0x00050026

describe('seccomp filter', () => {
  it.each([
    ['x64', 0xc000003e, { chmod: 90, fchmodat: 268, openat: 257, socket: 41, openat2: 437, read: 0 }],
    ['arm64', 0xc00000b7, { chmod: 52, fchmodat: 53, openat: 56, socket: 198, openat2: 437, read: 63 }],
  ] as const)('%s: refuses setuid modes, creating setuid files, Unix sockets and openat2; allows the rest', (arch, audit, nr) => {
    expect(seccompSupported(arch)).toBe(true)
    const program = decode(seccompFilter({ unixSockets: false }, arch)!)
    // Every jump lands inside the program, and it ends in a return.
    program.forEach(({ code, jt, jf }, i) => {
      if (JUMPS.has(code)) expect(i + 1 + Math.max(jt, jf)).toBeLessThan(program.length)
    })
    expect(program.at(-1)!.code).toBe(RET)
    const call = (number: number, args: number[] = []) => run(program, { arch: audit, nr: number, args })
    expect(call(nr.read)).toBe(ALLOW)
    expect(call(nr.chmod, [0, 0o4755])).toBe(EPERM)
    expect(call(nr.chmod, [0, 0o755])).toBe(ALLOW)
    expect(call(nr.fchmodat, [0, 0, 0o2755])).toBe(EPERM)
    // openat(dirfd, path, flags, mode): the mode counts only when the open creates.
    expect(call(nr.openat, [0, 0, 0o100, 0o4755])).toBe(EPERM)
    expect(call(nr.openat, [0, 0, 0, 0o4755])).toBe(ALLOW)
    expect(call(nr.openat, [0, 0, 0o100, 0o644])).toBe(ALLOW)
    expect(call(nr.socket, [1])).toBe(EPERM)
    expect(call(nr.socket, [2])).toBe(ALLOW)
    expect(call(nr.openat2)).toBe(ENOSYS)
    // Another ABI's calls are refused outright.
    expect(run(program, { arch: 0x40000003, nr: nr.read, args: [] })).toBe(ENOSYS)
  })

  it('x64: x32 numbers are refused; the allowlist variant lets Unix sockets through', () => {
    const strict = decode(seccompFilter({ unixSockets: false }, 'x64')!)
    expect(run(strict, { arch: 0xc000003e, nr: 0x40000000 + 90, args: [0, 0o4755] })).toBe(ENOSYS)
    const forwarder = decode(seccompFilter({ unixSockets: true }, 'x64')!)
    expect(run(forwarder, { arch: 0xc000003e, nr: 41, args: [1] })).toBe(ALLOW)
    expect(run(forwarder, { arch: 0xc000003e, nr: 90, args: [0, 0o4755] })).toBe(EPERM)
  })

  it('has no filter for an architecture it does not know', () => {
    expect(seccompSupported('ppc64')).toBe(false)
    expect(seccompFilter({ unixSockets: false }, 'ppc64')).toBeUndefined()
  })
})
