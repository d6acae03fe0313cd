import { decodeEncoded, SchemaError } from '@dogu/schema'
import { childPath, type DuplicateKey, findDuplicateKey, shownKey } from './duplicate-key'

/** Why arguments were refused, phrased for the model. */
export class ArgumentsProblem {
  constructor(
    public message: string,
    /** The text did not parse, or parsed into a string (perhaps JSON encoded twice): `repairArguments` may help. */
    public repairable = false,
  ) {}
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
// One regexp scan is about twice as fast as three `includes` on typical arguments.
// `proto` also covers `prototype`; `\u` because a JSON escape can spell any key without its letters.
const MAY_HOLD_FORBIDDEN = /proto|constructor|\\u/
const EMPTY = Object.freeze({})

/**
 * Accepts a model's `arguments` as a JSON string or an object. Never throws: malformed JSON,
 * non-objects, oversized input, a key written twice in one object (`JSON.parse` would keep
 * the last value: which was meant cannot be known) and prototype-polluting keys come back as
 * an `ArgumentsProblem` (a plain result object per call would cost more than the check).
 */
export function parseArguments(input: unknown, maxLength: number): Record<string, unknown> | ArgumentsProblem {
  let value: unknown
  if (input === undefined || input === null || input === '') return EMPTY
  if (typeof input === 'string') {
    if (input.length > maxLength) {
      return new ArgumentsProblem(`Arguments are too large: ${input.length} characters, at most ${maxLength} are accepted.`)
    }
    try {
      value = JSON.parse(input)
    } catch (error) {
      return new ArgumentsProblem(`Arguments are not valid JSON (${(error as Error).message}). Send a JSON object.`, true)
    }
    if (typeof value === 'string') return new ArgumentsProblem('Arguments must be a JSON object, got string.', true)
    const object = checkObject(value)
    if (object instanceof ArgumentsProblem) return object
    // Before validation: the validator sees only the value `JSON.parse` kept.
    const duplicate = findDuplicateKey(input, object)
    if (duplicate) return duplicateProblem(duplicate)
    // Only walk the keys when the text could spell a forbidden one: most calls skip the walk.
    if (!MAY_HOLD_FORBIDDEN.test(input)) return object
  } else {
    value = input
  }
  const checked = checkObject(value)
  if (checked instanceof ArgumentsProblem) return checked
  const bad = findForbiddenKey(value, '$', 0)
  if (bad) return new ArgumentsProblem(`Arguments use a forbidden key at ${bad}. Rename or remove it.`)
  return checked
}

function duplicateProblem({ key, path }: DuplicateKey): ArgumentsProblem {
  return new ArgumentsProblem(`Arguments have a duplicate key ${shownKey(key)} at ${path}: which of its values was meant cannot be known. Send each key once.`)
}

function checkObject(value: unknown): Record<string, unknown> | ArgumentsProblem {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
    return new ArgumentsProblem(`Arguments must be a JSON object, got ${kind}.`)
  }
  return value as Record<string, unknown>
}

function findForbiddenKey(value: unknown, path: string, depth: number): string | undefined {
  if (depth > 64) return `${path} (nested too deeply)`
  if (typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findForbiddenKey(value[i], `${path}[${i}]`, depth + 1)
      if (bad) return bad
    }
    return
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return `${path}.${key}`
    const bad = findForbiddenKey((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1)
    if (bad) return bad
  }
}

/**
 * Decodes the fields a provider's dialect sends as JSON-encoded strings (see
 * `convertToDialect`), before validation. A decoded value is then checked for duplicate and
 * forbidden keys like any other argument: the text inside the string was never read.
 */
export function decodeArguments(value: Record<string, unknown>, encoded: readonly string[]): Record<string, unknown> | ArgumentsProblem {
  let decoded: Record<string, unknown>
  try {
    decoded = decodeEncoded(value, encoded) as Record<string, unknown>
  } catch (error) {
    if (SchemaError.is(error, 'INVALID_ENCODING')) return new ArgumentsProblem(`Arguments are invalid: ${error.message}`)
    throw error
  }
  const duplicate = findDecodedDuplicate(value, decoded, '$', 0)
  if (duplicate) return duplicateProblem(duplicate)
  const bad = findForbiddenKey(decoded, '$', 0)
  if (bad) return new ArgumentsProblem(`Arguments use a forbidden key at ${bad}. Rename or remove it.`)
  return decoded
}

/**
 * A duplicate key inside a string `decodeEncoded` turned into JSON: walks `original` beside
 * `decoded` where they differ (`decodeEncoded` copies only what it changes), and scans each
 * string that became a value, its path put under the field's.
 */
function findDecodedDuplicate(original: unknown, decoded: unknown, path: string, depth: number): DuplicateKey | undefined {
  if (original === decoded || depth > 64) return undefined
  if (typeof original === 'string') {
    const inner = findDuplicateKey(original, decoded)
    return inner && { key: inner.key, path: path + inner.path.slice(1) }
  }
  if (typeof original !== 'object' || original === null || typeof decoded !== 'object' || decoded === null) return undefined
  if (Array.isArray(original)) {
    for (let i = 0; i < original.length; i++) {
      const found = findDecodedDuplicate(original[i], (decoded as unknown[])[i], childPath(path, i), depth + 1)
      if (found) return found
    }
    return undefined
  }
  for (const key of Object.keys(original)) {
    const found = findDecodedDuplicate((original as Record<string, unknown>)[key], (decoded as Record<string, unknown>)[key], childPath(path, key), depth + 1)
    if (found) return found
  }
  return undefined
}
