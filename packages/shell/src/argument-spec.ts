import { lexicalPathOperands, type PathOperands } from './path-operands'

/**
 * The arguments a read-only command may take: a closed list of flags. Anything not listed
 * makes the command line `exec`.
 */
export interface ArgumentSpec {
  /** Short flags without a value, as one string: `'lah'`. */
  short?: string
  /** Short flags that take a value (`-n 5`, `-n5`). */
  shortValue?: string
  /** Long flags: `--all` (no value), `--format=` (value required), `--relative[=]` (optional, only as `--relative=x`). */
  long?: string[]
  /** Other words accepted as flags, such as `-5` for `head`. */
  patterns?: RegExp[]
  /** At most this many operands (`uniq`'s second operand is an output file). */
  maxOperands?: number
  /** Operands are data, not paths (`echo`, `tr`). @default true */
  pathOperands?: boolean
  /** The first operand is a pattern, not a path, unless `-e`/`--regexp` gave one (`grep`). */
  patternFirst?: boolean
  /** A last check over the flags seen (`-x`, `--name`) and the operands. */
  check?: (flags: ReadonlySet<string>, operands: readonly string[], paths: PathOperands) => string | undefined
}

type LongKind = 'flag' | 'value' | 'optional'

const compiled = new WeakMap<ArgumentSpec, Map<string, LongKind>>()

function longFlags(spec: ArgumentSpec): Map<string, LongKind> {
  let map = compiled.get(spec)
  if (!map) {
    map = new Map()
    for (const entry of spec.long ?? []) {
      if (entry.endsWith('[=]')) map.set(entry.slice(0, -3), 'optional')
      else if (entry.endsWith('=')) map.set(entry.slice(0, -1), 'value')
      else map.set(entry, 'flag')
    }
    compiled.set(spec, map)
  }
  return map
}

/** Why `args` fall outside `spec`, or `undefined` when every argument is allowed. */
export function checkArguments(program: string, spec: ArgumentSpec, args: readonly string[], paths: PathOperands = lexicalPathOperands): string | undefined {
  const long = longFlags(spec)
  const flags = new Set<string>()
  const operands: string[] = []
  let options = true
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (!options || arg === '-' || !arg.startsWith('-')) {
      operands.push(arg)
    } else if (arg === '--') {
      options = false
    } else if (spec.patterns?.some((pattern) => pattern.test(arg))) {
      flags.add(arg)
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = eq < 0 ? arg : arg.slice(0, eq)
      const kind = long.get(name)
      if (!kind) return `\`${program} ${name}\` is not on the read-only list`
      if (eq >= 0 && kind === 'flag') return `\`${program} ${name}\` takes no value`
      if (eq < 0 && kind === 'value' && ++i >= args.length) return `\`${program} ${name}\` needs a value`
      flags.add(name)
    } else {
      for (let j = 1; j < arg.length; j++) {
        const char = arg[j]
        if (spec.short?.includes(char)) {
          flags.add(`-${char}`)
        } else if (spec.shortValue?.includes(char)) {
          flags.add(`-${char}`)
          if (j === arg.length - 1 && ++i >= args.length) return `\`${program} -${char}\` needs a value`
          break
        } else {
          return `\`${program} -${char}\` is not on the read-only list`
        }
      }
    }
  }
  if (spec.maxOperands !== undefined && operands.length > spec.maxOperands) {
    return `\`${program}\` with more than ${spec.maxOperands} operand${spec.maxOperands === 1 ? '' : 's'} may write`
  }
  if (spec.pathOperands !== false) {
    const skip = spec.patternFirst && !flags.has('-e') && !flags.has('--regexp') ? 1 : 0
    for (const operand of operands.slice(skip)) {
      const violation = paths.check(operand)
      if (violation !== undefined) return violation
    }
  }
  return spec.check?.(flags, operands, paths)
}
