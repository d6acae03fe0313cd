import Schema from 'schemastery'
import { isNullish, isPlain } from '../json-value'
import { lazyInner } from '../lazy-inner'
import { adaptsInside } from './adapts-inside'
import type { Compile } from './compiler'
import { kindOfData, kindsOf } from './kinds'
import { report, reportError, reportGot, rollback, type Node } from './run'
import { preview, shown } from './values'
import { selfResolving, viaSchemastery } from './via-schemastery'

export const combinatorCompilers: Record<string, Compile> = {
  union: (schema, strict, c) => {
    const list = schema.list!
    if (list.some((inner) => adaptsInside(inner, c.compilers))) return selfResolving(viaSchemastery(schema, strict))
    const enumNode = compileEnum(list)
    if (enumNode) return enumNode
    const nodes = list.map((inner) => c.node(inner, strict))
    const kinds = list.map((inner) => kindsOf(inner))
    const expected = { schema: schema.toString() }
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
    if (list.some((inner) => adaptsInside(inner, c.compilers))) return selfResolving(viaSchemastery(schema, strict))
    const nodes = list.map((inner) => c.node(inner, true))
    const mismatch = { schema: schema.toString() }
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
        if (isNullish(value)) continue
        if (isNullish(result)) result = value
        else if (typeof result !== typeof value) return reportGot(run, mismatch, data)
        else if (typeof value === 'object') merge(result, value)
        else if (result !== value) return reportGot(run, mismatch, data)
      }
      if (run.n !== n0) return
      if (!strict && isPlain(data)) {
        if (isNullish(result)) {
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
        else if (role) reportGot(run, { role }, data)
        else report(run, { kind: 'convert', params: { error: String((error as any)?.message), got: shown(data) } })
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

function merge(result: any, data: any) {
  for (const key in data) {
    if (key in result) continue
    result[key] = data[key]
  }
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
  const options = [...values.keys()].map(preview)
  return (data, run) => {
    // Map keys compare with SameValueZero, so -0 finds 0 and returns the schema's own value
    const value = values.get(data)
    if (value !== undefined || values.has(data)) return value
    return report(run, { kind: 'enum', params: { options, got: shown(data) } })
  }
}
