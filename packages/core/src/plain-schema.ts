import { isSchema } from '@dogu/schema'
import type Schema from 'schemastery'

/** Node types whose JSON Schema form never fails, given children that do not either. */
const PLAIN = new Set(['any', 'never', 'boolean', 'bitset', 'string', 'number', 'const', 'object', 'array', 'tuple', 'dict', 'union'])

/** Beyond this many nodes the walk stops and the conversion itself decides. */
const MAX_NODES = 500

/**
 * Whether `toJsonSchema(schema)` certainly succeeds, found by a walk that builds nothing:
 * every node is a plain object, array, tuple, dict, union or scalar, with no pattern, no
 * step counted from a non-zero `min`, no constant JSON cannot carry, no definition name, no
 * `lazy`, `intersect`, `transform`, `function` or `is`. `defineTool` converts only the
 * schemas this cannot vouch for at definition time (to refuse what no model could be told
 * about); the others are converted on first use. False means "not sure", never "invalid".
 */
export function isPlainSchema(schema: Schema): boolean {
  const seen = new Set<Schema>()
  const plain = (node: Schema | undefined): boolean => {
    if (!isSchema(node) || seen.has(node) || seen.size >= MAX_NODES) return false
    seen.add(node)
    const { meta } = node
    if (!PLAIN.has(node.type) || (meta as Record<string, unknown>).definition !== undefined) return false
    switch (node.type) {
      case 'string':
        return !meta.pattern
      case 'number':
        return !meta.step || meta.min === undefined || meta.min === null || meta.min === 0
      case 'const':
        return node.value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof node.value)
      case 'object':
        return typeof node.dict === 'object' && node.dict !== null && Object.values(node.dict).every(plain)
      case 'array':
        return plain(node.inner)
      case 'dict':
        return plain(node.inner) && (node.sKey === undefined || plain(node.sKey))
      case 'tuple':
      case 'union':
        return Array.isArray(node.list) && node.list.every(plain)
      default:
        return true
    }
  }
  return plain(schema)
}
