import type Schema from 'schemastery'
import { lazyInner } from '../lazy-inner'
import type { Compile } from './compiler'

// Types whose resolver builds a fresh container and never returns or mutates its input,
// so an empty default can be passed without cloning it.
export const freshContainers = new Set(['object', 'dict', 'array', 'tuple'])

/** Whether resolving may hand an adapted value back to its container (bitset names, non-preserving transforms). */
function yieldsAdapted(schema: Schema, compilers: Record<string, Compile>, seen = new Set<Schema>()): boolean {
  if (seen.has(schema)) return false
  seen.add(schema)
  if (schema.type === 'bitset' || (schema.type === 'transform' && !schema.preserve)) return true
  if (!Object.hasOwn(compilers, schema.type)) return true
  if (schema.type === 'union') return schema.list!.some((inner) => yieldsAdapted(inner, compilers, seen))
  if (schema.type === 'lazy') return yieldsAdapted(lazyInner(schema), compilers, seen)
  return false
}

/**
 * schemastery writes adapted values back into the input, where a union's later branch or an
 * intersect's later part sees them. We never mutate, so such subtrees go to schemastery.
 */
export function adaptsInside(schema: Schema, compilers: Record<string, Compile>, seen = new Set<Schema>()): boolean {
  if (seen.has(schema)) return false
  seen.add(schema)
  if (schema.type === 'lazy') return adaptsInside(lazyInner(schema), compilers, seen)
  const children: Schema[] = [...schema.list ?? [], ...Object.values(schema.dict ?? {}), ...schema.inner ? [schema.inner] : []]
  const container = freshContainers.has(schema.type)
  return children.some((child) => (container && yieldsAdapted(child, compilers)) || adaptsInside(child, compilers, seen))
}
