import Schema from 'schemastery'

/** Options for {@link compileValidator}. */
export interface CompileOptions {
  /**
   * Treat `null` like an absent value, so an optional property's default applies and a
   * required one is reported missing. Strict-mode models send `null` for optional
   * properties. This is schemastery's own behaviour; `false` makes `null` an ordinary
   * value that only `any`, `const(null)` and similar accept.
   * @default true
   */
  nullAsAbsent?: boolean
}

/** One invalid spot in the input, phrased for a model to correct. */
export interface ValidationIssue {
  /** Where, from the root `$`: `$.a[0].b`. */
  path: string
  /** What is wrong: `expected a string, got number 3`. */
  message: string
}

/** The verdict of a {@link Validator}: the resolved value (defaults applied) or every issue found. */
export type ValidationResult<T = any> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }

/** A compiled schema: accepts and resolves exactly what `schema(input)` does, but reports every bad path. */
export type Validator<T = any> = (input: unknown) => ValidationResult<T>

// Issues collect their path on the way back up, innermost segment first, so the success
// path never builds a path. While `quiet` (a union trying a branch) only `n` counts.
interface RawIssue { segs: (string | number)[]; message: string }
interface Run { issues: RawIssue[] | undefined; n: number; quiet: number }
type Node = (data: any, run: Run) => any
type Compile = (schema: Schema, strict: boolean, c: Compiler) => Node

const MISSING = 'missing required value'

function isPlainObject(data: any): boolean {
  return data !== null && typeof data === 'object' && !Array.isArray(data)
}

function preview(data: unknown): string {
  if (typeof data === 'string') return JSON.stringify(data.length > 60 ? data.slice(0, 57) + '...' : data)
  if (typeof data === 'number' || typeof data === 'boolean' || typeof data === 'bigint') return String(data)
  if (data === null || data === undefined) return String(data)
  if (Array.isArray(data)) return `an array of ${data.length} items`
  if (typeof data === 'function') return 'a function'
  return data instanceof Date ? 'a Date' : 'an object'
}

function describe(data: unknown): string {
  const type = typeof data
  return type === 'string' || type === 'number' || type === 'boolean' ? `${type} ${preview(data)}` : preview(data)
}

function report(run: Run, message: string): undefined {
  run.n++
  if (!run.quiet) (run.issues ??= []).push({ segs: [], message })
  return undefined
}

function reportGot(run: Run, expected: string, data: unknown): undefined {
  run.n++
  if (!run.quiet) (run.issues ??= []).push({ segs: [], message: `${expected}, got ${describe(data)}` })
  return undefined
}

function reportError(run: Run, error: any) {
  run.n++
  if (run.quiet) return
  let message = String(error?.message ?? error)
  let segs: (string | number)[] = []
  if (Schema.ValidationError.is(error) && error.options?.path?.length) {
    // schemastery prefixes its message with the relative path; we keep the path as segments
    const path = error.options.path.filter((s): s is string | number => typeof s !== 'symbol')
    message = message.slice(('$' + path.map((s) => typeof s === 'string' ? '.' + s : `[${s}]`).join('')).length + 1)
    segs = path.reverse()
  }
  ;(run.issues ??= []).push({ segs, message })
}

/** Adds `key` to the issues raised since `from`, on the way back up. */
function annotate(run: Run, from: number, key: string | number) {
  const issues = run.issues!
  for (let i = from; i < issues.length; i++) {
    const issue = issues[i]!
    if (issue.message === MISSING && !issue.segs.length && typeof key === 'string') issue.message = 'missing required property'
    issue.segs.push(key)
  }
}

function rollback(run: Run, to: number) {
  run.n = to
  if (run.issues && !run.quiet) run.issues.length = to
}

/** A node that lets schemastery itself resolve the subtree, for types not worth compiling. */
function viaSchemastery(schema: Schema, strict: boolean): Node {
  return (data, run) => {
    try {
      return Schema.resolve(data, schema, {}, strict)[0]
    } catch (error) {
      reportError(run, error)
    }
  }
}

/** A port of cosmokit's `clone`, which schemastery applies to a default before resolving it. */
function clone(source: any, refs = new Map<any, any>()): any {
  if (!source || typeof source !== 'object') return source
  if (source instanceof Date) return new Date(source.valueOf())
  if (source instanceof RegExp) return new RegExp(source.source, source.flags)
  if (source instanceof ArrayBuffer) return source.slice(0)
  if (ArrayBuffer.isView(source)) return source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength)
  const cached = refs.get(source)
  if (cached) return cached
  if (Array.isArray(source)) {
    const result: any[] = []
    refs.set(source, result)
    source.forEach((value, index) => { result[index] = clone(value, refs) })
    return result
  }
  const result = Object.create(Object.getPrototypeOf(source))
  refs.set(source, result)
  for (const key of Reflect.ownKeys(source)) {
    const descriptor = { ...Reflect.getOwnPropertyDescriptor(source, key) }
    if ('value' in descriptor) descriptor.value = clone(descriptor.value, refs)
    Reflect.defineProperty(result, key, descriptor)
  }
  return result
}

const isNullable = (value: unknown) => value === null || value === undefined

// Types whose resolver builds a fresh container and never returns or mutates its input,
// so an empty default can be passed without cloning it.
const freshContainers = new Set(['object', 'dict', 'array', 'tuple'])

/** Builds a lazy schema's inner schema, exactly as schemastery does on first use. */
function lazyInner(schema: Schema): Schema {
  if (!(schema.inner as any)[Symbol.for('schemastery')]) {
    schema.inner = schema.builder!()
    schema.inner!.meta = { ...schema.meta, ...schema.inner!.meta }
  }
  return schema.inner!
}

/** Whether resolving may hand an adapted value back to its container (bitset names, non-preserving transforms). */
function yieldsAdapted(schema: Schema, seen = new Set<Schema>()): boolean {
  if (seen.has(schema)) return false
  seen.add(schema)
  if (schema.type === 'bitset' || (schema.type === 'transform' && !schema.preserve)) return true
  if (!Object.hasOwn(compilers, schema.type)) return true
  if (schema.type === 'union') return schema.list!.some((inner) => yieldsAdapted(inner, seen))
  if (schema.type === 'lazy') return yieldsAdapted(lazyInner(schema), seen)
  return false
}

/**
 * schemastery writes adapted values back into the input, where a union's later branch or an
 * intersect's later part sees them. We never mutate, so such subtrees go to schemastery.
 */
function adaptsInside(schema: Schema, seen = new Set<Schema>()): boolean {
  if (seen.has(schema)) return false
  seen.add(schema)
  if (schema.type === 'lazy') return adaptsInside(lazyInner(schema), seen)
  const children: Schema[] = [...schema.list ?? [], ...Object.values(schema.dict ?? {}), ...schema.inner ? [schema.inner] : []]
  const container = freshContainers.has(schema.type)
  return children.some((child) => (container && yieldsAdapted(child)) || adaptsInside(child, seen))
}

class Compiler {
  private memo = [new Map<Schema, Node>(), new Map<Schema, Node>()] as const

  constructor(public nullAsAbsent: boolean) {}

  node(schema: Schema, strict: boolean): Node {
    const memo = this.memo[+strict]
    const known = memo.get(schema)
    if (known) return known
    // A forwarder breaks direct cycles (built with `set`/`push`); it is replaced once compiled.
    let target: Node
    memo.set(schema, (data, run) => target(data, run))
    target = this.build(schema, strict)
    memo.set(schema, target)
    return target
  }

  private build(schema: Schema, strict: boolean): Node {
    if (!Object.hasOwn(compilers, schema.type)) return viaSchemastery(schema, strict)
    const core = compilers[schema.type]!(schema, strict, this)
    if (schema.type === 'lazy' || (core as any)[kSelfResolving]) return core
    return this.wrap(schema, core)
  }

  /** What `Schema.resolve` does around every resolver: required, default, loose. */
  private wrap(schema: Schema, core: Node): Node {
    const { required, loose } = schema.meta
    const nullAsAbsent = this.nullAsAbsent
    let current: Schema | undefined = schema
    let fallback = schema.meta.default
    while (current?.type === 'intersect' && isNullable(fallback)) {
      current = current.list![0]
      fallback = current?.meta.default
    }
    if (loose) {
      const inner = core, alternative = schema.meta.default
      core = (data, run) => {
        const n = run.n
        const value = inner(data, run)
        if (run.n === n) return value
        rollback(run, n)
        return alternative
      }
    }
    if (isNullable(fallback)) {
      return required
        ? (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? report(run, MISSING) : core(data, run)
        : (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? data : core(data, run)
    }
    const empty = typeof fallback === 'object' && Object.keys(fallback).length === 0 && freshContainers.has(schema.type)
    if (typeof fallback !== 'object' || empty) {
      return required
        ? (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? report(run, MISSING) : core(data, run)
        : (data, run) => core((data === undefined || (nullAsAbsent && data === null)) ? fallback : data, run)
    }
    return required
      ? (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? report(run, MISSING) : core(data, run)
      : (data, run) => core((data === undefined || (nullAsAbsent && data === null)) ? clone(fallback) : data, run)
  }
}

// A node marked with this handles absence itself (schemastery fallbacks).
const kSelfResolving = Symbol('self-resolving')

function selfResolving(node: Node): Node {
  return Object.assign(node, { [kSelfResolving]: true })
}

function lengthCheck(meta: Schema['meta'], noun: string, skipMin = false) {
  const { max = Infinity, min = -Infinity } = meta
  return (length: number, run: Run) => {
    if (length > max) report(run, `expected at most ${max} ${noun}, got ${length}`)
    else if (length < min && !skipMin) report(run, `expected at least ${min} ${noun}, got ${length}`)
  }
}

function decimalShift(data: number, digits: number) {
  const str = data.toString()
  if (str.includes('e')) return data * Math.pow(10, digits)
  const index = str.indexOf('.')
  if (index === -1) return data * Math.pow(10, digits)
  const frac = str.slice(index + 1)
  const integer = str.slice(0, index)
  if (frac.length <= digits) return +(integer + frac.padEnd(digits, '0'))
  return +(integer + frac.slice(0, digits) + '.' + frac.slice(digits))
}

/** schemastery's `isMultipleOf`, with everything about `min` and `step` worked out once. */
function multipleCheck(min: number, step: number): (data: number) => boolean {
  step = Math.abs(step)
  if (!/^\d+\.\d+$/.test(step.toString())) return (data) => (data - min) % step === 0
  const digits = step.toString().length - step.toString().indexOf('.') - 1
  const pow = Math.pow(10, digits)
  const shiftedMin = decimalShift(min, digits), shiftedStep = decimalShift(step, digits)
  return (data) => {
    // for integers decimalShift is exactly `data * pow`, without the string round trip
    const shifted = Number.isInteger(data) ? data * pow : decimalShift(data, digits)
    return Math.abs(shifted - shiftedMin) % shiftedStep === 0
  }
}

type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'function' | '*'

/** Which kinds of value a schema can accept, to pick the branch a failed union most likely meant. */
function kindsOf(schema: Schema, seen = new Set<Schema>()): Set<Kind> {
  if (seen.has(schema)) return new Set(['*'])
  seen.add(schema)
  switch (schema.type) {
    case 'string': case 'number': case 'boolean': case 'function': return new Set([schema.type as Kind])
    case 'object': case 'dict': case 'is': return new Set(['object'])
    case 'array': case 'tuple': return new Set(['array'])
    case 'bitset': return new Set(['number', 'array'])
    case 'const': return new Set([kindOfData(schema.value)])
    case 'transform': return kindsOf(schema.inner!, seen)
    case 'union': case 'intersect': return new Set(schema.list!.flatMap((inner) => [...kindsOf(inner, seen)]))
    default: return new Set(['*'])
  }
}

function kindOfData(data: unknown): Kind {
  if (Array.isArray(data)) return 'array'
  const type = typeof data
  return type === 'string' || type === 'number' || type === 'boolean' || type === 'function' ? type : type === 'object' ? 'object' : '*'
}

const compilers: Record<string, Compile> = {
  any: () => (data) => data,

  never: () => (data, run) => reportGot(run, 'expected no value', data),

  boolean: () => (data, run) => typeof data === 'boolean' ? data : reportGot(run, 'expected a boolean', data),

  function: () => (data, run) => typeof data === 'function' ? data : reportGot(run, 'expected a function', data),

  is: ({ constructor }) => {
    if (typeof constructor === 'function') {
      return (data, run) => data instanceof constructor ? data : reportGot(run, `expected a ${constructor.name}`, data)
    }
    return (data, run) => {
      let prototype = isNullable(data) ? null : Object.getPrototypeOf(data)
      while (prototype) {
        if (prototype.constructor?.name === constructor) return data
        prototype = Object.getPrototypeOf(prototype)
      }
      return reportGot(run, `expected a ${constructor}`, data)
    }
  },

  const: (schema, strict) => {
    const { value } = schema
    // object constants need cosmokit's deepEqual; they are rare enough to leave to schemastery
    if (value !== null && typeof value === 'object') return selfResolving(viaSchemastery(schema, strict))
    const expected = `expected ${preview(value)}`
    return (data, run) => (data === value || (isNullable(value) && isNullable(data))) ? value : reportGot(run, expected, data)
  },

  string: ({ meta }) => {
    const pattern = meta.pattern && new RegExp(meta.pattern.source, meta.pattern.flags)
    const stateful = pattern && (pattern.global || pattern.sticky)
    const length = lengthCheck(meta, 'characters')
    return (data, run) => {
      if (typeof data !== 'string') return reportGot(run, 'expected a string', data)
      const n = run.n
      if (pattern) {
        if (stateful) pattern.lastIndex = 0
        if (!pattern.test(data)) return report(run, `must match the pattern ${pattern} (got ${preview(data)})`)
      }
      length(data.length, run)
      return run.n === n ? data : undefined
    }
  },

  number: ({ meta }) => {
    const { max = Infinity, min = -Infinity, step } = meta
    const multiple = step ? multipleCheck(meta.min ?? 0, step) : undefined
    const stepText = step === 1 ? 'expected an integer'
      : `expected a multiple of ${Math.abs(step!)}${meta.min ? ` counting from ${meta.min}` : ''}`
    return (data, run) => {
      if (typeof data !== 'number') return reportGot(run, 'expected a number', data)
      if (data > max) return report(run, `expected a number <= ${max}, got ${data}`)
      if (data < min) return report(run, `expected a number >= ${min}, got ${data}`)
      if (multiple && !multiple(data)) return report(run, `${stepText}, got ${data}`)
      return data
    }
  },

  bitset: ({ bits }) => {
    const table = new Map(Object.entries(bits!))
    return (data, run) => {
      if (typeof data === 'number') return data
      if (!Array.isArray(data)) return reportGot(run, 'expected a number or an array of flag names', data)
      let value = 0
      for (let i = 0; i < data.length; i++) {
        const key = data[i]
        if (typeof key !== 'string') {
          reportGot(run, `expected one of ${[...table.keys()].map((k) => JSON.stringify(k)).join(', ')}`, key)
          if (!run.quiet) annotate(run, run.n - 1, i)
          return
        }
        // inherited names (`toString`...) contribute 0 in schemastery's `value |= bits[key]`
        value |= table.get(key) ?? 0
      }
      return value
    }
  },

  object: ({ dict }, strict, c) => {
    const keys = Object.keys(dict!)
    const nodes = keys.map((key) => c.node(dict![key]!, false))
    return generatedObject(keys, nodes, strict) ?? closureObject(keys, nodes, strict)
  },

  dict: (schema, strict, c) => {
    const { inner, sKey } = schema
    if (!plainKeySchema(sKey!)) return selfResolving(viaSchemastery(schema, strict))
    const keyNode = c.node(sKey!, false)
    const valueNode = c.node(inner!, false)
    return (data, run) => {
      if (!isPlainObject(data)) return reportGot(run, 'expected an object', data)
      const result: any = {}
      const n0 = run.n
      for (const key in data) {
        let n = run.n
        keyNode(key, run)
        if (run.n !== n) {
          if (strict) { rollback(run, n); continue }
          if (run.quiet) return
          for (let i = n; i < run.issues!.length; i++) run.issues![i]!.message = `invalid property name ${preview(key)}: ${run.issues![i]!.message}`
          continue
        }
        n = run.n
        const value = valueNode(data[key], run)
        if (run.n !== n) {
          if (run.quiet) return
          annotate(run, n, key)
        } else if (key !== '__proto__') {
          // schemastery's `result.__proto__ = value` would only swap the output's prototype
          result[key] = value
        }
      }
      return run.n === n0 ? result : undefined
    }
  },

  array: ({ inner, meta }, _, c) => {
    const node = c.node(inner!, false)
    const length = lengthCheck(meta, 'items', !isNullable(inner!.meta.default))
    return (data, run) => {
      if (!Array.isArray(data)) return reportGot(run, 'expected an array', data)
      const n0 = run.n
      length(data.length, run)
      if (run.quiet && run.n !== n0) return
      const result: any[] = []
      for (let i = 0; i < data.length; i++) {
        if (!(i in data)) { result.length = i + 1; continue } // `map` keeps holes
        const n = run.n
        const value = node(data[i], run)
        if (run.n !== n) {
          if (run.quiet) return
          annotate(run, n, i)
        }
        result.push(value)
      }
      return run.n === n0 ? result : undefined
    }
  },

  tuple: ({ list }, strict, c) => {
    const nodes = list!.map((inner) => c.node(inner, false))
    const count = nodes.length
    return (data, run) => {
      if (!Array.isArray(data)) return reportGot(run, 'expected an array', data)
      const n0 = run.n
      const result: any[] = []
      for (let i = 0; i < count; i++) {
        const n = run.n
        const value = nodes[i]!(data[i], run)
        if (run.n !== n) {
          if (run.quiet) return
          annotate(run, n, i)
        }
        result.push(value)
      }
      if (run.n !== n0) return
      if (!strict) for (let i = count; i < data.length; i++) result.push(data[i])
      return result
    }
  },

  union: (schema, strict, c) => {
    const list = schema.list!
    if (list.some((inner) => adaptsInside(inner))) return selfResolving(viaSchemastery(schema, strict))
    const enumNode = compileEnum(list)
    if (enumNode) return enumNode
    const nodes = list.map((inner) => c.node(inner, strict))
    const kinds = list.map((inner) => kindsOf(inner))
    const expected = `expected ${schema.toString()}`
    return (data, run) => {
      const n = run.n
      run.quiet++
      for (const node of nodes) {
        const value = node(data, run)
        if (run.n === n) { run.quiet--; return value }
        run.n = n
      }
      run.quiet--
      if (!run.quiet) {
        // If only one branch takes this kind of value, its own issues say more than the union.
        const kind = kindOfData(data)
        const candidates = nodes.filter((_, i) => kinds[i]!.has(kind) || kinds[i]!.has('*'))
        if (candidates.length === 1) {
          candidates[0]!(data, run)
          if (run.n !== n) return
        }
      }
      return reportGot(run, expected, data)
    }
  },

  intersect: (schema, strict, c) => {
    const list = schema.list!
    if (list.some((inner) => adaptsInside(inner))) return selfResolving(viaSchemastery(schema, strict))
    const nodes = list.map((inner) => c.node(inner, true))
    const mismatch = `expected ${schema.toString()}`
    return (data, run) => {
      if (!nodes.length) return data
      const n0 = run.n
      let result: any
      for (const node of nodes) {
        const n = run.n
        const value = node(data, run)
        if (run.n !== n) {
          if (run.quiet) return
          continue
        }
        if (isNullable(value)) continue
        if (isNullable(result)) result = value
        else if (typeof result !== typeof value) return reportGot(run, mismatch, data)
        else if (typeof value === 'object') merge(result, value)
        else if (result !== value) return reportGot(run, mismatch, data)
      }
      if (run.n !== n0) return
      if (!strict && isPlainObject(data)) {
        if (isNullable(result)) {
          // schemastery's merge into `undefined` throws a TypeError once there is a key
          for (const _ in data) return reportGot(run, mismatch, data)
        } else {
          merge(result, data)
        }
      }
      return result
    }
  },

  transform: (schema, strict, c) => {
    if (!schema.preserve) return selfResolving(viaSchemastery(schema, strict))
    const inner = c.node(schema.inner!, true)
    const callback = schema.callback as (value: any) => any
    const role = schema.inner!.meta.role
    return (data, run) => {
      const n = run.n
      const value = inner(data, run)
      if (run.n !== n) return
      try {
        return callback(value)
      } catch (error) {
        // schemastery's own date and regExp callbacks throw a TypeError on bad input
        if (Schema.ValidationError.is(error)) reportError(run, error)
        else reportGot(run, role ? `expected a valid ${role}` : `could not convert the value (${(error as any)?.message})`, data)
      }
    }
  },

  lazy: (schema, strict, c) => {
    let node: Node | undefined
    const resolve: Node = (data, run) => {
      if (!node) {
        node = c.node(lazyInner(schema), strict)
      }
      return node(data, run)
    }
    if (!schema.meta.loose) return resolve
    return (data, run) => {
      const n = run.n
      const value = resolve(data, run)
      if (run.n === n) return value
      rollback(run, n)
      return schema.meta.default
    }
  },
}

const objectHelpers = { isArray: Array.isArray, reportGot, annotate, defineProperty: Object.defineProperty }

/**
 * Objects are the hot path of every tool call. A closure looping over keys makes every
 * property access megamorphic (measured ~4x slower), so the shape is generated as code
 * with the keys as literals. Keys enter only as JSON string literals; children stay
 * closures. Where `new Function` is forbidden (a strict CSP) this returns undefined.
 */
function generatedObject(keys: string[], nodes: Node[], strict: boolean): Node | undefined {
  const lit = keys.map((key) => JSON.stringify(key))
  const lines = keys.map((key, i) => {
    const store = key === '__proto__'
      ? `h.defineProperty(res, ${lit[i]}, { value: v, enumerable: true, writable: true, configurable: true })`
      : `res[${lit[i]}] = v`
    return `n = r.n; v = c${i}(d[${lit[i]}], r);
      if (r.n !== n) { if (r.quiet) return; h.annotate(r, n, ${lit[i]}) } else if (v !== undefined && v !== null || ${lit[i]} in d) ${store}`
  })
  // declared keys found in `d` are already in `res`, so comparing first skips the `in` lookup
  const skip = keys.length <= 32 ? lit.map((key) => `k !== ${key} && `).join('') : ''
  const body = `return function object(d, r) {
    if (d === null || typeof d !== 'object' || h.isArray(d)) return h.reportGot(r, 'expected an object', d)
    const res = {}, n0 = r.n; let n, v
    ${lines.join('\n    ')}
    if (r.n !== n0) return
    ${strict ? '' : `for (const k in d) if (${skip}!(k in res)) res[k] = d[k]`}
    return res
  }`
  try {
    // eslint-disable-next-line no-new-func
    return new Function('h', ...keys.map((_, i) => `c${i}`), body)(objectHelpers, ...nodes)
  } catch {}
}

function closureObject(keys: string[], nodes: Node[], strict: boolean): Node {
  const count = keys.length
  return (data, run) => {
    if (!isPlainObject(data)) return reportGot(run, 'expected an object', data)
    const result: any = {}
    const n0 = run.n
    for (let i = 0; i < count; i++) {
      const key = keys[i]!, n = run.n
      const value = nodes[i]!(data[key], run)
      if (run.n !== n) {
        if (run.quiet) return
        annotate(run, n, key)
      } else if (!isNullable(value) || key in data) {
        if (key === '__proto__') Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true })
        else result[key] = value
      }
    }
    if (run.n !== n0) return
    // `key in result` also skips inherited names such as `__proto__` and `constructor`, as schemastery does
    if (!strict) for (const key in data) if (!(key in result)) result[key] = data[key]
    return result
  }
}

function merge(result: any, data: any) {
  for (const key in data) {
    if (key in result) continue
    result[key] = data[key]
  }
}

/** Key schemas whose resolved value is the key itself, so no key is ever renamed. */
function plainKeySchema(schema: Schema): boolean {
  if (schema.meta.loose) return false
  if (schema.type === 'string' || schema.type === 'any') return true
  if (schema.type === 'const') return typeof schema.value === 'string'
  if (schema.type === 'union') return schema.list!.every(plainKeySchema)
  return false
}

/** A union of primitive constants is a table lookup. */
function compileEnum(list: Schema[]): Node | undefined {
  const values = new Map<unknown, unknown>()
  for (const inner of list) {
    if (inner.type !== 'const' || inner.meta.loose) return
    const { value } = inner
    if (typeof value !== 'string' && typeof value !== 'boolean' && (typeof value !== 'number' || Number.isNaN(value))) return
    if (!values.has(value)) values.set(value, value)
  }
  const expected = `must be one of ${[...values.keys()].map(preview).join(', ')}`
  return (data, run) => {
    // Map keys compare with SameValueZero, so -0 finds 0 and returns the schema's own value
    const value = values.get(data)
    if (value !== undefined || values.has(data)) return value
    return report(run, `${expected} (got ${preview(data)})`)
  }
}

function formatPath(segs: (string | number)[]): string {
  let path = '$'
  for (let i = segs.length - 1; i >= 0; i--) {
    const seg = segs[i]!
    if (typeof seg === 'number') path += `[${seg}]`
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) path += `.${seg}`
    else path += `[${JSON.stringify(seg)}]`
  }
  return path
}

/**
 * Compiles a schemastery schema into a validator whose verdict and output equal `schema(input)`,
 * but which reports every invalid path instead of the first. Compile once per schema.
 *
 * @example
 * const validate = compileValidator(Schema.object({ env: Schema.union(['staging', 'prod']).required() }))
 * validate({ env: 'dev' })
 * // { ok: false, issues: [{ path: '$.env', message: 'must be one of "staging", "prod" (got "dev")' }] }
 */
export function compileValidator<S = any, T = S>(schema: Schema<S, T>, options: CompileOptions = {}): Validator<T> {
  const root = new Compiler(options.nullAsAbsent ?? true).node(schema, false)
  let idle: Run | undefined = { issues: undefined, n: 0, quiet: 0 }
  return (input) => {
    // a transform callback may validate again while we run; it gets its own state
    const run = idle ?? { issues: undefined, n: 0, quiet: 0 }
    idle = undefined
    run.n = 0
    run.quiet = 0
    run.issues = undefined
    try {
      const value = root(input, run)
      if (run.n === 0) return { ok: true, value }
      return { ok: false, issues: run.issues!.map(({ segs, message }) => ({ path: formatPath(segs), message })) }
    } catch (error) {
      // only a throwing getter or callback outside a transform gets here
      return { ok: false, issues: [{ path: '$', message: String((error as any)?.message ?? error) }] }
    } finally {
      idle = run
    }
  }
}

/**
 * Formats issues as one message a model can act on, one line per bad path.
 *
 * @example
 * formatIssues([{ path: '$.count', message: 'expected a number, got string "3"' }])
 * // 'Invalid arguments:\n- $.count: expected a number, got string "3"'
 */
export function formatIssues(issues: ValidationIssue[]): string {
  return ['Invalid arguments:', ...issues.map(({ path, message }) => `- ${path}: ${message}`)].join('\n')
}
