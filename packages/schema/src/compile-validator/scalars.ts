import { isNullish } from '../json-value'
import { multipleCheck } from '../multiple-check'
import type { Compile } from './compiler'
import { lengthCheck } from './length-check'
import { linearCheckOf } from '../linear-pattern'
import { annotate, report, reportGot } from './run'
import { preview } from './values'
import { selfResolving, viaSchemastery } from './via-schemastery'

export const scalarCompilers: Record<string, Compile> = {
  any: () => (data) => data,

  never: () => (data, run) => reportGot(run, 'expected no value', data),

  boolean: () => (data, run) => typeof data === 'boolean' ? data : reportGot(run, 'expected a boolean', data),

  function: () => (data, run) => typeof data === 'function' ? data : reportGot(run, 'expected a function', data),

  is: ({ constructor }) => {
    if (typeof constructor === 'function') {
      return (data, run) => data instanceof constructor ? data : reportGot(run, `expected a ${constructor.name}`, data)
    }
    return (data, run) => {
      let prototype = isNullish(data) ? null : Object.getPrototypeOf(data)
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
    return (data, run) => (data === value || (isNullish(value) && isNullish(data))) ? value : reportGot(run, expected, data)
  },

  string: ({ meta }) => {
    // A foreign pattern (from `fromJsonSchema`) runs on the linear-time engine, never here.
    const linear = linearCheckOf(meta.pattern)
    const pattern = meta.pattern && !linear && new RegExp(meta.pattern.source, meta.pattern.flags)
    const stateful = pattern && (pattern.global || pattern.sticky)
    const length = lengthCheck(meta, 'characters')
    return (data, run) => {
      if (typeof data !== 'string') return reportGot(run, 'expected a string', data)
      const n = run.n
      if (linear) {
        if (!linear(data)) return report(run, `must match the pattern /${meta.pattern!.source}/${meta.pattern!.flags} (got ${preview(data)})`)
      } else if (pattern) {
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
    const expected = `expected one of ${[...table.keys()].map((k) => JSON.stringify(k)).join(', ')}`
    return (data, run) => {
      if (typeof data === 'number') return data
      if (!Array.isArray(data)) return reportGot(run, 'expected a number or an array of flag names', data)
      let value = 0
      for (let i = 0; i < data.length; i++) {
        const key = data[i]
        if (typeof key !== 'string') {
          reportGot(run, expected, key)
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
