import { isNullish } from '../json-value'
import { multipleCheck } from '../multiple-check'
import type { Compile } from './compiler'
import { lengthCheck } from './length-check'
import { linearCheckOf } from '../linear-pattern'
import { annotate, report, reportGot } from './run'
import { preview, shown } from './values'
import { selfResolving, viaSchemastery } from './via-schemastery'

const NOTHING = Object.freeze({ type: 'nothing' } as const)
const BOOLEAN = Object.freeze({ type: 'boolean' } as const)
const FUNCTION = Object.freeze({ type: 'function' } as const)
const STRING = Object.freeze({ type: 'string' } as const)
const NUMBER = Object.freeze({ type: 'number' } as const)
const FLAGS = Object.freeze({ type: 'flags' } as const)

export const scalarCompilers: Record<string, Compile> = {
  any: () => (data) => data,

  never: () => (data, run) => reportGot(run, NOTHING, data),

  boolean: () => (data, run) => typeof data === 'boolean' ? data : reportGot(run, BOOLEAN, data),

  function: () => (data, run) => typeof data === 'function' ? data : reportGot(run, FUNCTION, data),

  is: ({ constructor }) => {
    if (typeof constructor === 'function') {
      return (data, run) => data instanceof constructor ? data : reportGot(run, { instanceOf: constructor.name }, data)
    }
    return (data, run) => {
      let prototype = isNullish(data) ? null : Object.getPrototypeOf(data)
      while (prototype) {
        if (prototype.constructor?.name === constructor) return data
        prototype = Object.getPrototypeOf(prototype)
      }
      return reportGot(run, { instanceOf: String(constructor) }, data)
    }
  },

  const: (schema, strict) => {
    const { value } = schema
    // object constants need cosmokit's deepEqual; they are rare enough to leave to schemastery
    if (value !== null && typeof value === 'object') return selfResolving(viaSchemastery(schema, strict))
    const expected = { constant: preview(value) }
    return (data, run) => (data === value || (isNullish(value) && isNullish(data))) ? value : reportGot(run, expected, data)
  },

  string: ({ meta }) => {
    // A foreign pattern (from `fromJsonSchema`) runs on the linear-time engine, never here.
    const linear = linearCheckOf(meta.pattern)
    const pattern = meta.pattern && !linear && new RegExp(meta.pattern.source, meta.pattern.flags)
    const stateful = pattern && (pattern.global || pattern.sticky)
    const length = lengthCheck(meta, 'characters')
    return (data, run) => {
      if (typeof data !== 'string') return reportGot(run, STRING, data)
      const n = run.n
      if (linear) {
        if (!linear(data)) return report(run, { kind: 'pattern', params: { pattern: `/${meta.pattern!.source}/${meta.pattern!.flags}`, got: shown(data) } })
      } else if (pattern) {
        if (stateful) pattern.lastIndex = 0
        if (!pattern.test(data)) return report(run, { kind: 'pattern', params: { pattern: String(pattern), got: shown(data) } })
      }
      length(data.length, run)
      return run.n === n ? data : undefined
    }
  },

  number: ({ meta }) => {
    const { max = Infinity, min = -Infinity, step } = meta
    const multiple = step ? multipleCheck(meta.min ?? 0, step) : undefined
    return (data, run) => {
      if (typeof data !== 'number') return reportGot(run, NUMBER, data)
      if (data > max) return report(run, { kind: 'max', params: { limit: max, got: shown(data) } })
      if (data < min) return report(run, { kind: 'min', params: { limit: min, got: shown(data) } })
      if (multiple && !multiple(data)) return report(run, { kind: 'step', params: { step: step!, ...(meta.min ? { from: meta.min } : {}), got: shown(data) } })
      return data
    }
  },

  bitset: ({ bits }) => {
    const table = new Map(Object.entries(bits!))
    const options = [...table.keys()].map((k) => JSON.stringify(k))
    return (data, run) => {
      if (typeof data === 'number') return data
      if (!Array.isArray(data)) return reportGot(run, FLAGS, data)
      let value = 0
      for (let i = 0; i < data.length; i++) {
        const key = data[i]
        if (typeof key !== 'string') {
          report(run, { kind: 'flag', params: { options, got: shown(key) } })
          if (!run.quiet) annotate(run, run.n - 1, i)
          return
        }
        // inherited names (`toString`...) contribute 0 in schemastery's `value |= bits[key]`
        value |= table.get(key) ?? 0
      }
      return value
    }
  },
}
