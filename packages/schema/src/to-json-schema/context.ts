import Schema from 'schemastery'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { lazyInner } from '../lazy-inner'
import { addNull, mayAcceptNull, removeNull } from '../nullable'
import { annotationsOf } from './annotations'
import { isSchema } from '../is-schema'

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

  constructor(private converters: Record<string, Converter>, private root: Schema, readonly locale?: string) {}

  /** The JSON Schema of a slot: `null` passes exactly when schemastery would let it through here. */
  slot(schema: Schema, path: string): JsonSchema {
    const body = this.node(schema, path, false)
    if (this.acceptsNull(schema)) return addNull(body)
    return mayAcceptNull(body) ? removeNull(body)! : body
  }

  /** The JSON Schema of the non-null values a schema accepts, with its annotations. */
  node(schema: Schema, path: string, strict: boolean): JsonSchema {
    if (!isSchema(schema)) throw new SchemaError('INVALID_SCHEMA', path, `expected a schemastery schema, got ${typeof schema}`)
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
    for (let index = 2; Object.hasOwn(this.defs, name) || [...this.visiting.values()].some(visit => visit.ref === `#/$defs/${name}`); index++) {
      name = `${base}_${index}`
    }
    return name
  }
}
