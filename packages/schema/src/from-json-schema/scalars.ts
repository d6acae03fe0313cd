import Schema from 'schemastery'
import type { JsonSchema } from '../json-schema'
import { checkLinearly, codePoints, compileLinearPattern, type LinearPattern } from '../linear-pattern'
import type { Converter } from './converter'

export function convertString(c: Converter, json: JsonSchema, path: string): Schema {
  const { minLength = 0, maxLength, pattern } = json as { minLength?: number; maxLength?: number; pattern?: string }
  // JSON Schema counts code points and schemastery's min/max count UTF-16 units, so lengths become a `u` regexp
  const length = minLength > 0 || maxLength !== undefined ? `(?=[\\s\\S]{${minLength},${maxLength ?? ''}}$)` : ''
  if (!length && pattern === undefined) return Schema.string()
  const linear = pattern === undefined ? undefined : foreignPattern(c, pattern, `${path}.pattern`)
  const enforced = linear && pattern
  if (!length && !enforced) return Schema.string()
  const source = !enforced ? `^${length}` : length ? `^${length}[\\s\\S]*?(?:${enforced})` : enforced
  const schema = Schema.string().pattern(new RegExp(source, 'u'))
  if (!linear) return schema
  // The combined source stays in the schema for what reads it; validators run this instead.
  const max = maxLength ?? Infinity
  return checkLinearly(schema, length ? (text) => inRange(codePoints(text), minLength, max) && linear.test(text) : linear.test)
}

function inRange(n: number, min: number, max: number) {
  return n >= min && n <= max
}

/**
 * A pattern from the imported schema, on the linear-time engine. One the engine cannot run
 * (a backreference, lookaround) is left unenforced and reported as loosened; an invalid one
 * is refused.
 */
export function foreignPattern(c: Converter, pattern: string, path: string, failPath = path): LinearPattern | undefined {
  try {
    // Compiling runs nothing: this only checks the syntax JSON Schema prescribes.
    new RegExp(pattern, 'u')
  } catch (error) {
    c.fail(failPath, `${failPath === path ? 'the pattern is not' : 'not'} a valid unicode regexp: ${(error as Error).message}`)
  }
  const linear = compileLinearPattern(pattern)
  if (!linear) c.loosen(path, `matches /${pattern}/ (not enforced: the linear-time engine cannot run backreferences, lookaround or counts over 1000)`)
  return linear
}

export function convertNumber(c: Converter, json: JsonSchema, path: string, integer: boolean): Schema {
  let { minimum: min, maximum: max } = json as { minimum?: number; maximum?: number }
  const { exclusiveMinimum, exclusiveMaximum, multipleOf } = json as Record<string, number | undefined>
  if (!integer && (exclusiveMinimum !== undefined || exclusiveMaximum !== undefined)) {
    c.fail(`${path}.${exclusiveMinimum !== undefined ? 'exclusiveMinimum' : 'exclusiveMaximum'}`, 'schemastery bounds are inclusive')
  }
  let step = integer ? 1 : undefined
  if (multipleOf !== undefined) {
    if (integer && !Number.isInteger(multipleOf)) c.fail(`${path}.multipleOf`, 'a fractional multipleOf of an integer is not supported')
    // schemastery's exact decimal arithmetic works on plain decimals, not on exponent notation
    if (!Number.isInteger(multipleOf) && !/^\d+\.\d+$/.test(String(multipleOf))) c.fail(`${path}.multipleOf`, `multipleOf ${multipleOf} is too small to check exactly`)
    step = multipleOf
  }
  if (integer) {
    // for integers every bound can be made an inclusive multiple of the step
    if (exclusiveMinimum !== undefined) min = Math.max(min ?? -Infinity, Math.floor(exclusiveMinimum) + 1)
    if (exclusiveMaximum !== undefined) max = Math.min(max ?? Infinity, Math.ceil(exclusiveMaximum) - 1)
    if (min !== undefined) min = Math.ceil(min / step!) * step!
    if (max !== undefined) max = Math.floor(max)
  } else if (step !== undefined && min !== undefined) {
    // schemastery counts the step from `min`, so `min` itself must be a multiple
    try {
      Schema.number().step(step)(min)
    } catch {
      c.fail(`${path}.multipleOf`, 'schemastery counts multipleOf from minimum, which is not itself a multiple')
    }
  }
  let schema = Schema.number()
  if (min !== undefined && min > -Infinity) schema = schema.min(min)
  if (max !== undefined && max < Infinity) schema = schema.max(max)
  if (step !== undefined) schema = schema.step(step)
  return schema
}
