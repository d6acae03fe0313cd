import type Schema from 'schemastery'
import { isNullish, isPlain } from '../json-value'
import type { Compile } from './compiler'
import { lengthCheck } from './length-check'
import { closureObject, generatedObject } from './object-codegen'
import { annotate, reportGot, rollback } from './run'
import { preview, shown } from './values'
import { selfResolving, viaSchemastery } from './via-schemastery'

const OBJECT = Object.freeze({ type: 'object' } as const)
const ARRAY = Object.freeze({ type: 'array' } as const)

export const structureCompilers: Record<string, Compile> = {
  object: ({ dict }, strict, c) => {
    const keys = Object.keys(dict!)
    const nodes = keys.map((key) => c.node(dict![key]!, false))
    return (c.codegen ? generatedObject(keys, nodes, strict) : undefined) ?? closureObject(keys, nodes, strict)
  },

  dict: (schema, strict, c) => {
    const { inner, sKey } = schema
    if (!plainKeySchema(sKey!)) return selfResolving(viaSchemastery(schema, strict))
    const keyNode = c.node(sKey!, false)
    const valueNode = c.node(inner!, false)
    // a dict of `never` is how a closed object (or `propertyNames`) refuses keys: say so
    const refusesKeys = inner!.type === 'never' && !inner!.meta.loose
    return (data, run) => {
      if (!isPlain(data)) return reportGot(run, OBJECT, data)
      const result: any = {}
      const n0 = run.n
      for (const key in data) {
        let n = run.n
        keyNode(key, run)
        if (run.n !== n) {
          if (strict) { rollback(run, n); continue }
          if (run.quiet) return
          for (let i = n; i < run.issues!.length; i++) run.issues![i]!.detail = { kind: 'property_name', params: { name: preview(key), problem: run.issues![i]!.detail } }
          continue
        }
        n = run.n
        const value = valueNode(data[key], run)
        if (run.n !== n) {
          if (run.quiet) return
          if (refusesKeys) for (let i = n; i < run.issues!.length; i++) run.issues![i]!.detail = { kind: 'unknown_field', params: { got: shown(data[key]) } }
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
    const length = lengthCheck(meta, 'items', !isNullish(inner!.meta.default))
    return (data, run) => {
      if (!Array.isArray(data)) return reportGot(run, ARRAY, data)
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
      if (!Array.isArray(data)) return reportGot(run, ARRAY, data)
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
}

/** Key schemas whose resolved value is the key itself, so no key is ever renamed. */
function plainKeySchema(schema: Schema): boolean {
  if (schema.meta.loose) return false
  if (schema.type === 'string' || schema.type === 'any') return true
  if (schema.type === 'const') return typeof schema.value === 'string'
  if (schema.type === 'union') return schema.list!.every(plainKeySchema)
  return false
}
