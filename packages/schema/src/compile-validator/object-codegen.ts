import { isNullish, isPlain } from '../json-value'
import { annotate, reportGot, type Node } from './run'

const OBJECT = Object.freeze({ type: 'object' } as const)
const objectHelpers = { isArray: Array.isArray, reportGot, annotate, defineProperty: Object.defineProperty, object: OBJECT }

/**
 * Objects are the hot path of every tool call. A closure looping over keys makes every
 * property access megamorphic (measured ~4x slower), so the shape is generated as code
 * with the keys as literals. Keys enter only as JSON string literals; children stay
 * closures. Where `new Function` is forbidden (a strict CSP) this returns undefined.
 */
export function generatedObject(keys: string[], nodes: Node[], strict: boolean): Node | undefined {
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
    if (d === null || typeof d !== 'object' || h.isArray(d)) return h.reportGot(r, h.object, d)
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

export function closureObject(keys: string[], nodes: Node[], strict: boolean): Node {
  const count = keys.length
  return (data, run) => {
    if (!isPlain(data)) return reportGot(run, OBJECT, data)
    const result: any = {}
    const n0 = run.n
    for (let i = 0; i < count; i++) {
      const key = keys[i]!, n = run.n
      const value = nodes[i]!(data[key], run)
      if (run.n !== n) {
        if (run.quiet) return
        annotate(run, n, key)
      } else if (!isNullish(value) || key in data) {
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
