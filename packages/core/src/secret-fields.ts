import type Schema from 'schemastery'

/** What a secret field's value is shown as, whatever its type. */
export const SECRET_MASK = '••••'

/**
 * Where a tool's arguments hold secrets (fields marked `.role('secret')`), as a tree: the
 * value here is a secret (`secret`), or secrets lie under some of its keys (`keys`: object
 * properties and tuple indexes) and/or under every item of an array and every value of a
 * dict (`each`). Frozen; built once per schema by `secretPaths`.
 */
export interface SecretPaths {
  readonly secret?: true
  readonly keys?: ReadonlyMap<string, SecretPaths>
  readonly each?: SecretPaths
}

interface Node {
  secret?: true
  keys?: Map<string, Node>
  each?: Node
}

const cache = new WeakMap<Schema, SecretPaths | null>()

/**
 * The secret fields of a schema: every field marked `.role('secret')` (schemastery keeps it
 * in `schema.meta.role`), through objects, arrays, tuples, dicts, unions, intersections and
 * transforms. A field a union's branch marks secret is secret whichever branch the value
 * takes. `undefined` when the schema has none, so a call without secrets pays nothing.
 * Cached per schema: `defineTool` computes it once per tool.
 */
export function secretPaths(schema: Schema): SecretPaths | undefined {
  if (!schema) return undefined
  let found = cache.get(schema)
  if (found === undefined) {
    const node: Node = {}
    collect(schema, node, new Set())
    found = isEmpty(node) ? null : freeze(node)
    cache.set(schema, found)
  }
  return found ?? undefined
}

function collect(schema: Schema | undefined, node: Node, seen: Set<Schema>): void {
  if (!schema || seen.has(schema)) return
  if (schema.meta?.role === 'secret') {
    node.secret = true
    return
  }
  seen.add(schema)
  switch (schema.type) {
    case 'object':
      for (const [key, inner] of Object.entries(schema.dict ?? {}) as [string, Schema][]) collectUnder(inner, child(node, key), node, key, seen)
      break
    case 'array':
    case 'dict':
      collect(schema.inner, node.each ??= {}, seen)
      break
    case 'tuple':
      (schema.list ?? []).forEach((inner, index) => collectUnder(inner, child(node, String(index)), node, String(index), seen))
      break
    case 'union':
    case 'intersect':
      for (const inner of schema.list ?? []) collect(inner, node, seen)
      break
    case 'transform':
      collect(schema.inner, node, seen)
      break
  }
  seen.delete(schema)
}

function child(node: Node, key: string): Node {
  const keys = node.keys ??= new Map()
  let found = keys.get(key)
  if (!found) keys.set(key, found = {})
  return found
}

// A key that turned out to hold nothing secret is dropped, so the tree holds only the way to secrets.
function collectUnder(schema: Schema, target: Node, parent: Node, key: string, seen: Set<Schema>): void {
  collect(schema, target, seen)
  if (isEmpty(target)) parent.keys!.delete(key)
  if (!parent.keys!.size) delete parent.keys
}

function isEmpty(node: Node): boolean {
  return !node.secret && !node.keys?.size && (!node.each || isEmpty(node.each))
}

function freeze(node: Node): SecretPaths {
  if (node.secret) return Object.freeze({ secret: true })
  const result: { keys?: ReadonlyMap<string, SecretPaths>; each?: SecretPaths } = {}
  if (node.keys?.size) result.keys = new Map([...node.keys].map(([key, inner]) => [key, freeze(inner)]))
  if (node.each && !isEmpty(node.each)) result.each = freeze(node.each)
  return Object.freeze(result)
}

/**
 * A copy of `value` with every secret field (see `secretPaths`) replaced by `••••`. Never
 * mutates `value`: objects and arrays on the way to a secret are copied, the rest is shared.
 * Only the fields the schema marks are masked; a value that appears elsewhere too stays
 * there. Without paths, or with nothing to mask, returns `value` itself.
 */
export function maskSecrets<T>(value: T, paths: SecretPaths | undefined): T {
  if (!paths || value === undefined) return value
  return mapSecrets(value, undefined, paths, masked, 0) as T
}

/**
 * `edited` with every secret field still shown as `••••` given back its value in
 * `original`: an approver who edits a call sees its secrets masked (`maskSecrets`) and
 * keeps them by leaving the mask. A secret is matched by its place (key, index), so a
 * field the approver typed anew is kept as typed. Never mutates either value.
 */
export function restoreSecrets<T>(edited: T, original: unknown, paths: SecretPaths | undefined): T {
  if (!paths || edited === undefined) return edited
  return mapSecrets(edited, original, paths, restored, 0) as T
}

/** Deeper than any arguments a call can carry; stops a cyclic value. */
const MAX_DEPTH = 64

const masked = (value: unknown) => value === undefined ? value : SECRET_MASK
const restored = (value: unknown, original: unknown) => value === SECRET_MASK ? original : value

/**
 * `value` with each secret field replaced by `leaf(field, the same place in original)`:
 * objects and arrays on the way to a changed secret are copied, the rest is shared.
 */
function mapSecrets(value: unknown, original: unknown, paths: SecretPaths, leaf: (value: unknown, original: unknown) => unknown, depth: number): unknown {
  if (paths.secret) return leaf(value, original)
  if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return value
  const source = original && typeof original === 'object' ? original as Record<string, unknown> : undefined
  const at = (key: string) => source && Object.hasOwn(source, key) ? source[key] : undefined
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const inner = paths.keys?.get(String(i)) ?? paths.each
      if (!inner) continue
      const mapped = mapSecrets(value[i], at(String(i)), inner, leaf, depth + 1)
      if (mapped !== value[i]) (copy ??= [...value])[i] = mapped
    }
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  const fields = value as Record<string, unknown>
  const visit = (key: string, inner: SecretPaths) => {
    if (!Object.hasOwn(fields, key)) return
    const mapped = mapSecrets(fields[key], at(key), inner, leaf, depth + 1)
    // Defined, not assigned: a key named `__proto__` stays a key.
    if (mapped !== fields[key]) Object.defineProperty(copy ??= { ...fields }, key, { value: mapped, enumerable: true, writable: true, configurable: true })
  }
  if (paths.each) for (const key of Object.keys(fields)) visit(key, paths.keys?.get(key) ?? paths.each)
  else if (paths.keys) for (const [key, inner] of paths.keys) visit(key, inner)
  return copy ?? value
}
