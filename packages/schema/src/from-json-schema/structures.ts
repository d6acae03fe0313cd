import Schema from 'schemastery'
import { compileValidator } from '../compile-validator'
import type { JsonSchema } from '../json-schema'
import { childPath } from '../path'
import { escapeRegExp, excludedKeysPattern, otherKeysPattern } from '../key-patterns'
import type { Converter } from './converter'
import type { Json } from './keywords'
import { checkLinearly, type LinearPattern, linearCheckOf } from '../linear-pattern'
import { convertString, foreignPattern } from './scalars'

/**
 * schemastery gives objects, dicts, arrays and tuples a `{}`/`[]` default, which would fill
 * in (and then validate) a value JSON Schema leaves absent.
 */
function bare(schema: Schema): Schema {
  return schema.default(undefined as never)
}

/** A schema that also takes "absent"; a lazy is wrapped, as cloning it would rebuild its target. */
function optional(schema: Schema): Schema {
  return schema.type === 'lazy' ? Schema.union([schema]) : schema.required(false)
}

export function convertObject(c: Converter, json: JsonSchema, path: string): Schema {
  const properties = (json.properties ?? {}) as Record<string, Json>
  const required = (json.required ?? []) as string[]
  const patterns = (json.patternProperties ?? {}) as Record<string, Json>
  const keys = [...new Set([...Object.keys(properties), ...required])]
  const dict: Record<string, Schema> = {}
  const nullRejecting: string[] = []
  for (const key of keys) {
    const at = childPath(`${path}.properties`, key)
    // schemastery reads `data[key]`, which finds Object.prototype members on every object
    if (key in Object.prototype) c.fail(at, `a property named "${key}" reads Object.prototype in schemastery`)
    const inner = Object.hasOwn(properties, key) ? properties[key]! : true
    const schema = c.convert(inner, at)
    const nullable = c.acceptsNull(inner)
    if (required.includes(key) && !nullable) {
      dict[key] = schema
      continue
    }
    if (required.includes(key) && c.exact) c.fail(`${path}.required`, `schemastery cannot require "${key}" while its value may be null`)
    if (!nullable && c.exact) nullRejecting.push(key)
    dict[key] = withDefault(optional(schema), inner)
  }
  const parts = [bare(Schema.object(dict))]
  if (nullRejecting.length) {
    // present-but-null is rejected by checking just these keys; a strict dict skips the others
    parts.push(bare(Schema.dict(Schema.any().required(), Schema.union(nullRejecting.map((key) => Schema.const(key))))))
  }
  const sources: string[] = []
  const linears: LinearPattern[] = []
  // A key pattern the linear-time engine cannot run decides nothing: its values go
  // unchecked, and so does `additionalProperties`, which would need to know its keys.
  let unknownKeys = false
  for (const [pattern, inner] of Object.entries(patterns)) {
    const at = childPath(`${path}.patternProperties`, pattern)
    const linear = foreignPattern(c, pattern, at, `${path}.patternProperties`)
    if (!linear) {
      unknownKeys = true
      continue
    }
    sources.push(pattern)
    linears.push(linear)
    parts.push(bare(Schema.dict(c.convert(inner, at), keyPattern(c, pattern, path, linear.test))))
  }
  const additional = json.additionalProperties as Json | undefined
  if (additional !== undefined && additional !== true) {
    if (unknownKeys) {
      c.loosen(`${path}.additionalProperties`, 'not enforced: a patternProperties pattern it depends on cannot run on the linear-time engine')
    } else {
      const source = otherKeysPattern(Object.keys(properties), sources)
      const declared = new Set(Object.keys(properties))
      const other = (key: string) => !declared.has(key) && !linears.some((linear) => linear.test(key))
      parts.push(bare(Schema.dict(c.convert(additional, `${path}.additionalProperties`), keyPattern(c, source, path, other))))
    }
  }
  const names = propertyNamesPattern(c, json.propertyNames as Json | undefined, `${path}.propertyNames`)
  if (names !== undefined) {
    // keys the pattern refuses get a never value, so any such key fails
    const { source, check } = names
    parts.push(bare(Schema.dict(Schema.never().required(), keyPattern(c, source === '' ? '' : excludedKeysPattern(source), path, check && ((key) => !check(key))))))
  }
  // inside an intersect every part runs strict, so each dict checks only the keys its pattern takes
  return parts.length === 1 ? parts[0]! : Schema.intersect(parts)
}

/**
 * The pattern every key must match under `propertyNames`: `undefined` when any key passes,
 * `''` when none does (then the never-valued dict takes every key). Key schemas are strings;
 * a string schema (pattern, lengths) or a list of names converts, anything else is refused.
 */
function propertyNamesPattern(c: Converter, json: Json | undefined, path: string): { source: string; check?: (key: string) => boolean } | undefined {
  if (json === undefined || json === true) return
  if (json === false) return { source: '' }
  const { enum: values, const: constant, type } = json as { enum?: unknown[]; const?: unknown; type?: unknown }
  const listed = Array.isArray(values) ? values : 'const' in json ? [constant] : undefined
  if (listed) {
    if (!listed.every((value) => typeof value === 'string')) c.fail(path, 'propertyNames lists a name that is not a string')
    const set = new Set(listed as string[])
    return { source: `^(?:${(listed as string[]).map(escapeRegExp).join('|')})$`, check: (key) => set.has(key) }
  }
  const known = new Set(['type', 'pattern', 'minLength', 'maxLength', 'description', 'title', '$comment'])
  if ((type !== undefined && type !== 'string') || Object.keys(json).some((key) => !known.has(key))) {
    c.fail(path, 'only a string pattern, string lengths or a list of names can check property names')
  }
  const schema = convertString(c, json, path)
  const source = schema.meta.pattern?.source
  // a foreign pattern runs on the linear-time engine; lengths alone are safe as they are
  return source === undefined ? undefined : { source, check: linearCheckOf(schema.meta.pattern) }
}

/** A key schema; `check`, when given, is what validators run in place of the pattern. */
function keyPattern(c: Converter, source: string, path: string, check?: (key: string) => boolean): Schema {
  let schema: Schema
  try {
    schema = Schema.string().pattern(new RegExp(source, 'u'))
  } catch (error) {
    c.fail(`${path}.patternProperties`, `not a valid unicode regexp: ${(error as Error).message}`)
  }
  return check ? checkLinearly(schema, check) : schema
}

/** Keeps a `default` only where schemastery accepts it; JSON Schema treats it as an annotation. */
function withDefault(schema: Schema, json: Json): Schema {
  if (typeof json !== 'object' || !('default' in json) || json.default === null) return schema
  const candidate = schema.default(json.default)
  // compileValidator, not schemastery: it runs imported patterns on the linear-time engine
  return compileValidator(candidate)(undefined).ok ? candidate : schema
}

export function convertArray(c: Converter, json: JsonSchema, path: string): Schema {
  const { minItems, maxItems } = json as { minItems?: number; maxItems?: number }
  const items = json.items as Json | undefined
  const bounded = (schema: Schema) => {
    if (minItems !== undefined) schema = schema.min(minItems)
    if (maxItems !== undefined) schema = schema.max(maxItems)
    return bare(schema)
  }
  if (!Array.isArray(json.prefixItems)) {
    if (items === false) return bounded(Schema.array(Schema.any()).max(0))
    return bounded(Schema.array(items === undefined ? Schema.any() : c.convert(items, `${path}.items`)))
  }
  const list = (json.prefixItems as Json[]).map((inner, i) => {
    const at = `${path}.prefixItems[${i}]`
    const schema = c.convert(inner, at)
    if ((minItems ?? 0) > i || c.acceptsNull(inner)) return (minItems ?? 0) > i ? schema : optional(schema)
    if (c.exact) c.fail(at, 'a position that may be missing cannot reject null in schemastery')
    return optional(schema)
  })
  if (items !== undefined && items !== true && items !== false && Object.keys(items).length) {
    c.fail(`${path}.items`, 'items beside prefixItems has no schemastery form')
  }
  const tuple = bare(Schema.tuple(list))
  const limit = items === false ? Math.min(maxItems ?? Infinity, list.length) : maxItems
  if (minItems === undefined && limit === undefined) return tuple
  let length = Schema.array(Schema.any())
  if (minItems !== undefined) length = length.min(minItems)
  if (limit !== undefined) length = length.max(limit)
  return Schema.intersect([tuple, bare(length)])
}
