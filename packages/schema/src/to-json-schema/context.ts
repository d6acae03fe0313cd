import Schema from 'schemastery'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { lazyInner } from '../lazy-inner'
import { addNull, mayAcceptNull, removeNull, splitAnnotations } from '../nullable'
import { annotationsOf } from './annotations'
import { definitionName, givenName } from '../definition'
import { isSchema } from '../is-schema'
import { jsonEqual } from '../json-value'

/** Where a node sits: its path (`$.a[0]`) and whether schemastery resolves it in strict mode. */
export interface Site {
  path: string
  /** `intersect` and `transform` resolve their inner schemas strictly (a dict then skips bad keys). */
  strict: boolean
}

/** Converts one schemastery type to the JSON Schema of its non-null values. */
export type Converter = (schema: Schema, ctx: Context, site: Site) => JsonSchema

interface Visit {
  path: string
  ref?: string
}

/** A named definition (see `definition()`): where it was first met and what it says. */
interface Definition {
  path: string
  /** Its body, once converted; until then a reference to it is a cycle. */
  body?: JsonSchema
  /** What each schema carrying the name converts to: `$ref`, with annotations of its own beside it. */
  uses: Map<Schema, JsonSchema>
}

/**
 * One conversion run. Two entry points mirror where schemastery checks for null:
 * `slot` is a place a nullish value can reach (the root, a property, an item),
 * `node` is the non-null part of a schema (a union branch, an intersect part).
 */
export class Context {
  readonly defs: Record<string, JsonSchema> = {}
  private visiting = new Map<Schema, Visit>()
  private refs = new Map<Schema, string>()
  private nullable = new Map<Schema, boolean>()
  private definitions = new Map<string, Definition>()
  // names given by the schema's author (which the names of cycles must not take), each with
  // every schema that carries it
  private names: Map<string, Set<Schema>>

  constructor(private converters: Record<string, Converter>, private root: Schema, readonly locale?: string) {
    this.names = namesIn(root)
  }

  /** The JSON Schema of a slot: `null` passes exactly when schemastery would let it through here. */
  slot(schema: Schema, path: string): JsonSchema {
    const body = this.node(schema, path, false)
    if (this.acceptsNull(schema)) return addNull(body)
    return mayAcceptNull(body) ? removeNull(body)! : body
  }

  /** The JSON Schema of the non-null values a schema accepts, with its annotations. */
  node(schema: Schema, path: string, strict: boolean): JsonSchema {
    if (!isSchema(schema)) throw new SchemaError('INVALID_SCHEMA', path, `expected a schemastery schema, got ${typeof schema}`)
    // the root is `#` itself: a name there would only move the arguments behind a `$ref`
    const name = this.isRoot(schema) ? undefined : definitionName(schema, path)
    if (name !== undefined) return this.named(schema, name, { path, strict })
    const ref = this.refs.get(schema)
    if (ref) return { $ref: ref }
    const visit = this.visiting.get(schema)
    if (visit) {
      // a cycle (Schema.lazy, or .set() on an ancestor): name it once and point at it
      visit.ref ??= schema === this.root ? '#' : `#/$defs/${this.reserve(visit.path)}`
      return { $ref: visit.ref }
    }
    const current: Visit = { path }
    this.visiting.set(schema, current)
    try {
      const body = this.body(schema, { path, strict })
      if (!current.ref || current.ref === '#') return body
      this.defs[current.ref.slice('#/$defs/'.length)] = body
      this.refs.set(schema, current.ref)
      return { $ref: current.ref }
    } finally {
      this.visiting.delete(schema)
    }
  }

  /**
   * Whether schemastery accepts `null`/`undefined` here. Asked of schemastery itself: a
   * non-required schema takes its default instead, and that default may fail (an object
   * default `{}` with required keys), which makes absence an error after all.
   */
  acceptsNull(schema: Schema): boolean {
    let result = this.nullable.get(schema)
    if (result === undefined) {
      try {
        Schema.resolve(null, schema, {})
        result = true
      } catch {
        result = false
      }
      this.nullable.set(schema, result)
    }
    return result
  }

  /**
   * A schema given a name: its body goes to `$defs` once, and every use is a `$ref`. Copies
   * made by modifiers share the name; the definition keeps the annotations all of them agree
   * on, and a copy's own (a description of its own) sit beside its `$ref`.
   */
  private named(schema: Schema, name: string, site: Site): JsonSchema {
    const ref: JsonSchema = { $ref: `#/$defs/${name}` }
    // a lazy and the schema it builds are one definition (the built one inherits the name)
    const target = resolveLazy(schema)
    let definition = this.definitions.get(name)
    if (!definition) {
      definition = { path: site.path, uses: new Map([[schema, ref], [target, ref]]) }
      this.definitions.set(name, definition)
      const [annotations, assertions] = splitAnnotations(this.body(target, site))
      const shared = this.sharedAnnotations(name, annotations)
      definition.body = { ...assertions, ...shared }
      this.defs[name] = definition.body
      return this.use(definition, schema, ref, annotations)
    }
    const known = definition.uses.get(schema) ?? definition.uses.get(target)
    if (known) return known
    // another copy with the same name, met inside the definition itself: trust the name
    if (!definition.body) return ref
    const [annotations, assertions] = splitAnnotations(this.body(target, site))
    if (!jsonEqual(assertions, splitAnnotations(definition.body)[1])) {
      throw new SchemaError('INVALID_SCHEMA', site.path,
        `the definition "${name}" is given to two schemas that accept different values (the other at ${definition.path})`)
    }
    return this.use(definition, schema, ref, annotations)
  }

  /** A use of a definition: its `$ref`, and the annotations the definition does not carry. */
  private use(definition: Definition, schema: Schema, ref: JsonSchema, annotations: JsonSchema): JsonSchema {
    const defined = definition.body!
    const own = Object.entries(annotations).filter(([key, value]) => !jsonEqual(defined[key], value))
    const use = own.length ? { ...ref, ...Object.fromEntries(own) } : ref
    definition.uses.set(schema, use)
    return use
  }

  /** The annotations every schema carrying the name agrees on, out of the first one's. */
  private sharedAnnotations(name: string, annotations: JsonSchema): JsonSchema {
    const targets = this.names.get(name) ?? []
    const all = [...targets].map(target => annotationsOf(target, this.locale))
    return Object.fromEntries(Object.entries(annotations).filter(([key, value]) => all.every(other => jsonEqual(other[key], value))))
  }

  private isRoot(schema: Schema) {
    return schema === this.root || (this.root.type === 'lazy' && schema === resolveLazy(this.root))
  }

  private body(schema: Schema, site: Site): JsonSchema {
    if (schema.type === 'lazy') return this.node(lazyInner(schema), site.path, site.strict)
    const annotations = annotationsOf(schema, this.locale)
    // a loose schema catches its own failures and returns its default: any non-null value passes
    if (schema.meta.loose) return annotations
    const converter = Object.hasOwn(this.converters, schema.type) ? this.converters[schema.type] : undefined
    if (!converter) throw new SchemaError('UNSUPPORTED_TYPE', site.path, `Schema<${schema.type}> has no JSON Schema form`)
    return { ...converter(schema, this, site), ...annotations }
  }

  private reserve(path: string) {
    const base = /([A-Za-z_][\w]*)\W*$/.exec(path)?.[1] ?? 'node'
    let name = base
    for (let index = 2; this.names.has(name) || Object.hasOwn(this.defs, name) || [...this.visiting.values()].some(visit => visit.ref === `#/$defs/${name}`); index++) {
      name = `${base}_${index}`
    }
    return name
  }
}

/** The schema a lazy stands for, following lazies of lazies; any other schema itself. */
function resolveLazy(schema: Schema): Schema {
  const seen = new Set<Schema>()
  while (schema.type === 'lazy' && !seen.has(schema)) {
    seen.add(schema)
    schema = lazyInner(schema)
  }
  return schema
}

/**
 * Every definition name in a schema tree, with the schemas that carry it (a lazy counts as what
 * it builds); read before converting, so that cycles get other names.
 */
function namesIn(root: Schema): Map<string, Set<Schema>> {
  const names = new Map<string, Set<Schema>>()
  const seen = new Set<Schema>()
  const visit = (schema: Schema | undefined) => {
    if (!isSchema(schema) || seen.has(schema)) return
    seen.add(schema)
    if (schema.type === 'lazy') return visit(lazyInner(schema))
    const name = givenName(schema)
    if (name !== undefined) {
      if (!names.has(name)) names.set(name, new Set())
      names.get(name)!.add(schema)
    }
    visit(schema.inner)
    visit(schema.sKey)
    schema.list?.forEach(visit)
    if (schema.dict) Object.values(schema.dict).forEach(visit)
  }
  visit(root)
  return names
}
