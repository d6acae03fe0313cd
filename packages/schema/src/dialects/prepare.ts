import type { Dialect, JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'
import { mayAcceptNull, removeNull, splitAnnotations } from '../nullable'
import { mergeObjects } from '../object-merge'
import { limitsOf } from './limits'
import { mapChildren, refuse } from './walk'

/**
 * The steps every provider dialect shares: copy, drop `$schema`, merge intersections of
 * plain objects, and narrow what our 2020-12 output widens only to mirror schemastery's
 * leniency. Items, dict values and optional properties there also admit `null`, because
 * schemastery treats null as "absent"; a provider should rather be told to omit the value.
 * The narrowed schema still only describes values schemastery accepts.
 */
export function prepare(input: JsonSchema, dialect: Dialect): JsonSchema {
  if (!isPlain(input)) refuse('$', `expected a JSON Schema object, got ${JSON.stringify(input)}`)
  const { $schema: _, $id: __, ...rest } = structuredClone(input)
  const root = narrow(rest, '$')
  if (limitsOf(dialect).rootObject) {
    if (Array.isArray(root.allOf)) {
      refuse('$', `${dialect} tool parameters must be one object at the root; this intersection cannot be merged into one (its parts are not plain objects, or define a key differently)`)
    }
    if (root.type !== 'object') {
      refuse('$', `${dialect} tool parameters must be an object at the root, got ${JSON.stringify(root.type ?? 'no type')}`)
    }
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      if (key in root) refuse('$', `${dialect} tool parameters cannot use ${key} at the root`)
    }
  }
  return root
}

function narrow(input: JsonSchema, path: string): JsonSchema {
  const schema = mergeAllOf(mapChildren(input, path, narrow))
  if (isPlain(schema.items)) schema.items = withoutNull(schema.items)
  if (Array.isArray(schema.prefixItems)) schema.prefixItems = schema.prefixItems.map(withoutNull)
  if (isPlain(schema.additionalProperties)) schema.additionalProperties = withoutNull(schema.additionalProperties)
  if (isPlain(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : [])
    schema.properties = Object.fromEntries(Object.entries(schema.properties).map(([key, value]) => {
      return [key, required.has(key) ? value : withoutNull(value as JsonSchema)]
    }))
  }
  return schema
}

// Only an explicit null is taken out; an open schema (`{}`) stays open rather than growing a `not`.
function withoutNull(schema: JsonSchema): JsonSchema {
  const explicit = schema.type !== undefined || Array.isArray(schema.enum) || 'const' in schema || Array.isArray(schema.anyOf)
  if (!explicit || !mayAcceptNull(schema)) return schema
  return removeNull(schema) ?? schema
}

function mergeAllOf(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.allOf)) return schema
  const { allOf, ...rest } = schema
  const [annotations, assertions] = splitAnnotations(rest)
  const parts = Object.keys(assertions).length ? [assertions, ...allOf as JsonSchema[]] : allOf as JsonSchema[]
  const merged = mergeObjects(parts)
  return merged ? { ...merged, ...annotations } : schema
}
