import { lexicalPathOperands, type PathOperands } from './path-operands'

/**
 * The arguments a read-only command may take: a closed list of flags. Anything not listed
 * makes the command line `exec`.
 */
export interface ArgumentSpec {
  /** Short flags without a value, as one string: `'lah'`. */
  short?: string
  /** Short flags that take a value, attached or as the next word (`-n 5`, `-n5`): getopt's `n:`. */
  shortValue?: string
  /** Short flags whose value is optional and only attached (`-U`, `-U5`; `-U 5` is `-U` and an operand): getopt's `U::`. */
  shortOptional?: string
  /**
   * Long flags: `--all` (no value), `--format=` (value required: `--format=x` or
   * `--format x`), `--relative[=]` (optional, only as `--relative=x`), `--contains[?]`
   * (git's "last argument default": the next word is its value unless there is none).
   */
  long?: string[]
  /** Other words accepted as flags, such as `-5` for `head`. */
  patterns?: RegExp[]
  /** At most this many operands (`uniq`'s second operand is an output file). */
  maxOperands?: number
  /** Operands are data, not paths (`echo`, `tr`). @default true */
  pathOperands?: boolean
  /** The first operand is a pattern, not a path, unless a flag in `noPattern` was given (`grep`). */
  patternFirst?: boolean
  /** Flags after which there is no pattern operand: one came with them, or none is wanted. @default ['-e', '--regexp'] */
  noPattern?: string[]
  /** Flags whose value is a path the program opens (`date -r FILE`): judged like an operand. */
  pathValues?: string[]
  /** A check of each operand, before the path check (`tail +1f`). */
  operand?: (operand: string) => string | undefined
  /** A last check over the flags seen (`-x`, `--name`) and the operands. */
  check?: (flags: ReadonlySet<string>, operands: readonly string[], paths: PathOperands) => string | undefined
}

type LongKind = 'flag' | 'value' | 'optional' | 'lastarg'

const compiled = new WeakMap<ArgumentSpec, Map<string, LongKind>>()

function longFlags(spec: ArgumentSpec): Map<string, LongKind> {
  let map = compiled.get(spec)
  if (!map) {
    map = new Map()
    for (const entry of spec.long ?? []) {
      if (entry.endsWith('[=]')) map.set(entry.slice(0, -3), 'optional')
      else if (entry.endsWith('[?]')) map.set(entry.slice(0, -3), 'lastarg')
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
  // A value the program opens as a file is judged like an operand.
  const value = (flag: string, text: string) => spec.pathValues?.includes(flag) ? paths.check(text) : undefined
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
      flags.add(name)
      let text: string | undefined
      if (eq >= 0) text = arg.slice(eq + 1)
      else if (kind === 'value' || (kind === 'lastarg' && i + 1 < args.length)) {
        if (++i >= args.length) return `\`${program} ${name}\` needs a value`
        text = args[i]
      }
      const violation = text === undefined ? undefined : value(name, text)
      if (violation) return violation
    } else {
      for (let j = 1; j < arg.length; j++) {
        const char = arg[j]
        const flag = `-${char}`
        if (spec.short?.includes(char)) {
          flags.add(flag)
        } else if (spec.shortValue?.includes(char) || spec.shortOptional?.includes(char)) {
          flags.add(flag)
          // The rest of the word is the value; a required one may be the next word.
          let text: string | undefined = arg.slice(j + 1) || undefined
          if (text === undefined && spec.shortValue?.includes(char)) {
            if (++i >= args.length) return `\`${program} ${flag}\` needs a value`
            text = args[i]
          }
          const violation = text === undefined ? undefined : value(flag, text)
          if (violation) return violation
          break
        } else {
          return `\`${program} ${flag}\` is not on the read-only list`
        }
      }
    }
  }
  if (spec.maxOperands !== undefined && operands.length > spec.maxOperands) {
    return `\`${program}\` with more than ${spec.maxOperands} operand${spec.maxOperands === 1 ? '' : 's'} may write`
  }
  for (const operand of operands) {
    const violation = spec.operand?.(operand)
    if (violation) return violation
  }
  if (spec.pathOperands !== false) {
    const patternGiven = (spec.noPattern ?? ['-e', '--regexp']).some((flag) => flags.has(flag))
    const skip = spec.patternFirst && !patternGiven ? 1 : 0
    for (const operand of operands.slice(skip)) {
      const violation = paths.check(operand)
      if (violation !== undefined) return violation
    }
  }
  return spec.check?.(flags, operands, paths)
}
