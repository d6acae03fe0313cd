import { isSchema, SchemaError, toJsonSchema } from '@dogu/schema'
import Schema from 'schemastery'
import { DoguError } from './errors'
import { isPlainSchema } from './plain-schema'
import { secretPaths } from './secret-fields'
import type { Effect, Tool, ToolOptions, ToolTraits } from './tool'
import { jsonSchemaOf } from './tool-json-schema'

const NAME = /^[a-zA-Z0-9_-]{1,64}$/
const EFFECTS = new Set<Effect>(['read', 'write', 'exec'])

/**
 * Checks a tool definition and fills its defaults. Throws a `DoguError` for a developer's
 * mistake (bad name, bad traits, a non-object `args` schema) at definition time, not at
 * the first call.
 *
 * The schema decides the tool's argument type, declared before the call or written inline,
 * and a handler that annotates its parameter is checked against it (a mismatch is reported at
 * the handler). One case TypeScript (5.9) cannot type: an inline schema beside a `run` whose
 * parameter it must infer, since it fixes that parameter before it infers a callable schema;
 * `run` then receives `unknown`, never a silent `any`. Declare the schema first, or annotate.
 *
 * @example
 * const args = Schema.object({ text: Schema.string().required() })
 * const echo = defineTool({
 *   name: 'echo',
 *   description: 'Repeat a text',
 *   args,
 *   traits: { effect: 'read' },
 *   run: ({ text }) => text,
 * })
 */
export function defineTool<A = unknown>(options: ToolOptions<A>): Tool<A> {
  if (!options || typeof options !== 'object') {
    throw new DoguError('INVALID_DEFINITION', 'defineTool() expects an options object')
  }
  const { name, description, run } = options
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new DoguError('INVALID_NAME', `invalid tool name ${JSON.stringify(name)}: it must match /^[a-zA-Z0-9_-]{1,64}$/`)
  }
  if (typeof description !== 'string') {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": description must be a string`)
  }
  if (typeof run !== 'function') {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": run must be a function`)
  }
  const args = (options.args ?? Schema.object({})) as Schema<any, A>
  if (!isSchema(args) || !isObjectSchema(args)) {
    throw new DoguError('INVALID_ARGS_SCHEMA', `tool "${name}": args must be a schemastery object schema (Schema.object, or an intersect or union of objects)`)
  }
  for (const key of ['permission', 'visibility', 'preview'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') {
      throw new DoguError('INVALID_DEFINITION', `tool "${name}": ${key} must be a function`)
    }
  }
  const mode = options.mode ?? 'eager'
  if (mode !== 'eager' && mode !== 'search') {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": mode must be "eager" or "search"`)
  }
  if (options.confirm !== undefined && options.confirm !== 'always') {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": confirm must be "always" when set`)
  }
  const groups = options.groups ?? []
  if (!Array.isArray(groups) || groups.some((group) => typeof group !== 'string' || !group)) {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": groups must be an array of non-empty strings`)
  }
  try {
    // Refuse what no model could be told about (`Schema.function()`, `Schema.is(...)`) now,
    // not at the first definitions() call. A schema whose conversion cannot fail waits for
    // its first use: a catalog of thousands of tools converts only those a model is shown.
    if (!isPlainSchema(args)) jsonSchemaOf(args)
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    throw new DoguError('INVALID_ARGS_SCHEMA', `tool "${name}": ${error.message}`, { cause: error })
  }
  const output = options.output
  if (output !== undefined) {
    if (!isSchema(output)) throw new DoguError('INVALID_DEFINITION', `tool "${name}": output must be a schemastery schema of the result's data`)
    try {
      toJsonSchema(output)
    } catch (error) {
      if (!SchemaError.is(error)) throw error
      throw new DoguError('INVALID_DEFINITION', `tool "${name}": output: ${error.message}`, { cause: error })
    }
  }
  // Found once per schema, here, so no call pays for it (see ToolEntry.secrets).
  secretPaths(args)
  const tool: Tool<A> = Object.freeze({
    name,
    description,
    args,
    traits: resolveTraits(name, options.traits),
    mode,
    groups: groups.length ? Object.freeze([...groups]) : NO_GROUPS,
    confirm: options.confirm,
    visibility: options.visibility,
    permission: options.permission,
    ...(options.preview ? { preview: options.preview } : {}),
    ...(output ? { output } : {}),
    run,
  })
  defined.add(tool)
  return tool
}

const defined = new WeakSet<object>()
const NO_GROUPS: readonly string[] = Object.freeze([])
/** Resolved traits by their values: most tools share a few, and they are frozen. */
const sharedTraits = new Map<string, Readonly<Required<ToolTraits>>>()

/** True for what `defineTool` returned. */
export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && defined.has(value)
}

function resolveTraits(name: string, traits: ToolTraits = {}): Readonly<Required<ToolTraits>> {
  const effect = traits.effect ?? 'exec'
  if (!EFFECTS.has(effect)) {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": traits.effect must be "read", "write" or "exec"`)
  }
  const timeout = traits.timeout ?? 180_000
  if (!(timeout > 0) || !Number.isFinite(timeout)) {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": traits.timeout must be a positive number of milliseconds`)
  }
  const concurrency = traits.concurrency ?? Infinity
  if (!(concurrency >= 1)) {
    throw new DoguError('INVALID_DEFINITION', `tool "${name}": traits.concurrency must be at least 1`)
  }
  const parallel = traits.parallel ?? effect === 'read'
  const background = traits.background ?? true
  const key = `${effect} ${parallel} ${timeout} ${background} ${concurrency}`
  let resolved = sharedTraits.get(key)
  if (!resolved) {
    resolved = Object.freeze({ effect, parallel, timeout, background, concurrency })
    // Bounded: a catalog of odd timeouts keeps its own objects past this many.
    if (sharedTraits.size < 1000 && typeof parallel === 'boolean' && typeof background === 'boolean') sharedTraits.set(key, resolved)
  }
  return resolved
}

// An object, or what is one for every value: intersections and unions of objects (Koishi's
// conditional config: `intersect([object, union([object, object])])`). Beside an object, an
// intersect may hold dicts: the key checks of that object, which is how `fromJsonSchema`
// states `additionalProperties`, `patternProperties` and `propertyNames` (a closed object is
// `intersect([object, dict(never)])`).
function isObjectSchema(schema: Schema): boolean {
  if (schema.type === 'object') return true
  if (schema.type === 'intersect') {
    const list = schema.list ?? []
    return list.some(isObjectSchema) && list.every((member) => member.type === 'dict' || isObjectSchema(member))
  }
  if (schema.type === 'union') return !!schema.list?.length && schema.list.every(isObjectSchema)
  if (schema.type === 'transform') return isObjectSchema(schema.inner!)
  return false
}
