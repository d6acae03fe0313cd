import { SchemaError } from '../errors'
import type { Dialect } from '../json-schema'

/** What a provider accepts in a tool definition. */
export interface DialectLimits {
  /** The tool names the provider accepts. */
  readonly toolName: RegExp
  /** The longest tool name, also stated in {@link toolName}; kept apart for error messages. */
  readonly maxToolNameLength: number
  /** Whether the parameters must be an object at the root (no union, no intersection there). */
  readonly rootObject: boolean
  /** Most levels of nested objects (OpenAI: in strict mode). */
  readonly maxDepth?: number
  /** Most object properties in the whole schema. */
  readonly maxProperties?: number
  /** Most enum values in the whole schema. */
  readonly maxEnumValues?: number
  /** Most characters in all property names, definition names, enum and const values together. */
  readonly maxStringLength?: number
}

/**
 * Each dialect's limits, from the providers' documentation (2026-02):
 * - `json`: Dogu's own tool-name rule; no schema limits.
 * - `openai`: function names `^[a-zA-Z0-9_-]{1,64}$`; Structured Outputs (strict mode) allow 10
 *   levels of nesting, 5000 properties, 1000 enum values and 120,000 characters of names and
 *   values; a schema over one goes with `strict: false`.
 * - `anthropic`: tool names `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` must be an object.
 * - `gemini`: function names start with a letter or `_`, then letters, digits, `_ . : -`, 64 at most.
 */
export const DIALECT_LIMITS: Readonly<Record<Dialect, DialectLimits>> = Object.freeze({
  json: Object.freeze({ toolName: /^[a-zA-Z0-9_-]{1,64}$/, maxToolNameLength: 64, rootObject: false }),
  openai: Object.freeze({
    toolName: /^[a-zA-Z0-9_-]{1,64}$/,
    maxToolNameLength: 64,
    rootObject: true,
    maxDepth: 10,
    maxProperties: 5000,
    maxEnumValues: 1000,
    maxStringLength: 120_000,
  }),
  anthropic: Object.freeze({ toolName: /^[a-zA-Z0-9_-]{1,64}$/, maxToolNameLength: 64, rootObject: true }),
  gemini: Object.freeze({ toolName: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/, maxToolNameLength: 64, rootObject: true }),
})

/** The limits of a dialect; a name outside the table is a developer error. */
export function limitsOf(dialect: Dialect): DialectLimits {
  if (typeof dialect !== 'string' || !Object.hasOwn(DIALECT_LIMITS, dialect)) {
    throw new SchemaError('DIALECT_REFUSED', '$', `unknown dialect ${JSON.stringify(dialect)}; expected one of ${Object.keys(DIALECT_LIMITS).join(', ')}`)
  }
  return DIALECT_LIMITS[dialect]
}

/**
 * Throws unless the provider accepts `name` as a tool name.
 * @throws {SchemaError} `INVALID_NAME` (path `$`), its message quoting the name and the rule.
 * @example checkToolName('deploy', 'gemini') // passes
 */
export function checkToolName(name: string, dialect: Dialect): void {
  const limits = limitsOf(dialect)
  if (typeof name === 'string' && limits.toolName.test(name)) return
  const reason = typeof name !== 'string' ? `expected a string, got ${typeof name}`
    : name.length > limits.maxToolNameLength ? `${name.length} characters, at most ${limits.maxToolNameLength}`
    : `it must match ${limits.toolName}`
  throw new SchemaError('INVALID_NAME', '$', `${dialect} does not accept the tool name ${JSON.stringify(name)}: ${reason}`)
}
