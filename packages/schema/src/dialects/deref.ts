import type { JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'

/** The name of a local definition a `$ref` points to, `''` for the root (`#`), `undefined` otherwise. */
export function refTarget(ref: unknown): string | undefined {
  if (ref === '#') return ''
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) return ref.slice('#/$defs/'.length)
}

/**
 * A function that replaces a `$ref` to a local definition (or to the root, `#`) by a copy of
 * its target, the `$ref`'s siblings beside it; other schemas come back as they are. One level:
 * a target that is itself a reference is followed no further.
 */
export function dereferencer(root: JsonSchema): (schema: JsonSchema) => JsonSchema {
  const { $defs, ...body } = root
  const defs = (isPlain($defs) ? $defs : {}) as Record<string, JsonSchema>
  return (schema) => {
    const name = refTarget(schema.$ref)
    if (name === undefined) return schema
    const target = name === '' ? body : Object.hasOwn(defs, name) ? defs[name] : undefined
    if (!target) return schema
    const { $ref: _, ...siblings } = schema
    return { ...target, ...siblings }
  }
}
