import type Schema from 'schemastery'

export type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'function' | '*'

/** Which kinds of value a schema can accept, to pick the branch a failed union most likely meant. */
export function kindsOf(schema: Schema, seen = new Set<Schema>()): Set<Kind> {
  if (seen.has(schema)) return new Set(['*'])
  seen.add(schema)
  switch (schema.type) {
    case 'string': case 'number': case 'boolean': case 'function': return new Set([schema.type as Kind])
    case 'object': case 'dict': case 'is': return new Set(['object'])
    case 'array': case 'tuple': return new Set(['array'])
    case 'bitset': return new Set(['number', 'array'])
    case 'const': return new Set([kindOfData(schema.value)])
    case 'transform': return kindsOf(schema.inner!, seen)
    case 'union': case 'intersect': return new Set(schema.list!.flatMap((inner) => [...kindsOf(inner, seen)]))
    default: return new Set(['*'])
  }
}

export function kindOfData(data: unknown): Kind {
  if (Array.isArray(data)) return 'array'
  const type = typeof data
  return type === 'string' || type === 'number' || type === 'boolean' || type === 'function' ? type : type === 'object' ? 'object' : '*'
}
