import { decodeEncoded, SchemaError } from '@dogu/schema'
import { childPath, type DuplicateKey, findDuplicateKey } from './duplicate-key'
import { enUS } from './messages/en-us'
import type { ArgumentsRefusal } from './result-params'
import { withoutQuotedText } from './secret-issues'

/** Why arguments were refused: the refusal's parameters, and its message for the model. */
export class ArgumentsProblem {
  constructor(
    public refusal: ArgumentsRefusal,
    /** The text did not parse, or parsed into a string (perhaps JSON encoded twice): `repairArguments` may help. */
    public repairable = false,
  ) {}

  /** What the model reads. */
  get message(): string {
    return enUS.results.invalid_arguments(this.refusal)
  }

  /**
   * The refusal for a tool with secret fields: a parser's message loses the excerpt V8 quotes
   * of the text (`withoutQuotedText`), and no excerpt of it is kept.
   */
  withoutSecrets(): ArgumentsRefusal {
    const refusal = this.refusal
    if (refusal.kind === 'invalid_json') {
      const { excerpt: _, ...rest } = refusal
      return { ...rest, detail: withoutQuotedText(refusal.detail) }
    }
    if (refusal.kind === 'invalid_encoding') return { ...refusal, detail: withoutQuotedText(refusal.detail) }
    return refusal
  }
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
    if (input.length > maxLength) return new ArgumentsProblem({ kind: 'too_large', length: input.length, max: maxLength })
    try {
      value = JSON.parse(input)
    } catch (error) {
      return new ArgumentsProblem(invalidJson(input, (error as Error).message), true)
    }
    if (typeof value === 'string') return new ArgumentsProblem({ kind: 'not_object', got: 'string' }, true)
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
  if (bad) return new ArgumentsProblem(bad)
  return checked
}

/** Characters of the text an `invalid_json` refusal shows on each side of where it broke. */
const EXCERPT_SIDE = 12

/**
 * A parser's refusal with where it broke: V8 says `at position N` (or the text ended), and
 * the line, column and the text around it follow from that; without a position, the excerpt
 * V8 quotes (`Unexpected token 'a', "abc" is not valid JSON`) is the text around it.
 */
function invalidJson(input: string, detail: string): ArgumentsRefusal {
  const at = /at position (\d+)/.exec(detail)
  const position = at ? Number(at[1]) : /Unexpected end of JSON input/.test(detail) ? input.length : undefined
  if (position === undefined || position > input.length) {
    // V8: `Unexpected token 'e', "{"q": tea}" is not valid JSON`, the text cut with `...` when long.
    const excerpt = /^Unexpected token [\s\S]*?, (?:\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(detail)?.[1]
    return excerpt ? { kind: 'invalid_json', detail, excerpt } : { kind: 'invalid_json', detail }
  }
  const before = input.slice(0, position)
  const line = before.split('\n').length
  const column = position - before.lastIndexOf('\n')
  const from = Math.max(0, position - EXCERPT_SIDE)
  const excerpt = input.slice(from, position + EXCERPT_SIDE).replace(/\s+/g, ' ')
  return excerpt.trim() ? { kind: 'invalid_json', detail, position, line, column, excerpt } : { kind: 'invalid_json', detail, position, line, column }
}

function duplicateProblem({ key, path }: DuplicateKey): ArgumentsProblem {
  return new ArgumentsProblem({ kind: 'duplicate_key', key, path })
}

function checkObject(value: unknown): Record<string, unknown> | ArgumentsProblem {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value as 'number'
    return new ArgumentsProblem({ kind: 'not_object', got })
  }
  return value as Record<string, unknown>
}

function findForbiddenKey(value: unknown, path: string, depth: number): ArgumentsRefusal | undefined {
  if (depth > 64) return { kind: 'forbidden_key', path, deep: true }
  if (typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findForbiddenKey(value[i], `${path}[${i}]`, depth + 1)
      if (bad) return bad
    }
    return
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return { kind: 'forbidden_key', path: `${path}.${key}` }
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
    if (SchemaError.is(error, 'INVALID_ENCODING')) return new ArgumentsProblem({ kind: 'invalid_encoding', path: error.path, detail: error.message })
    throw error
  }
  const duplicate = findDecodedDuplicate(value, decoded, '$', 0)
  if (duplicate) return duplicateProblem(duplicate)
  const bad = findForbiddenKey(decoded, '$', 0)
  if (bad) return new ArgumentsProblem(bad)
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
