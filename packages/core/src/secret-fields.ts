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

/** A secret field's value found in a call's arguments, and where (`$.auth.token`, as validation problems name paths). */
export interface FoundSecret {
  path: string
  value: unknown
}

/**
 * Every secret field (see `secretPaths`) present in `value`, with its path: what a text built
 * from the arguments (a validation problem, a repaired text) must not show. Walks any value,
 * valid or not, so it serves arguments that failed validation too.
 */
export function findSecrets(value: unknown, paths: SecretPaths | undefined): FoundSecret[] {
  const found: FoundSecret[] = []
  if (paths) collectSecrets(value, paths, '$', found, 0)
  return found
}

/**
 * The texts a secret's value is written as: a string as itself, a number or boolean as its
 * JSON, an object or array as each of its scalar leaves. Empty strings are left out (there
 * is nothing to hide, and replacing them everywhere would mean nothing).
 */
export function secretTexts(found: readonly FoundSecret[]): string[] {
  const texts = new Set<string>()
  const add = (value: unknown, depth: number): void => {
    if (typeof value === 'string') {
      if (value) texts.add(value)
    } else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      texts.add(String(value))
    } else if (value && typeof value === 'object' && depth < MAX_DEPTH) {
      for (const inner of Object.values(value)) add(inner, depth + 1)
    }
  }
  for (const { value } of found) add(value, 0)
  // Longest first: a secret that holds another is replaced whole.
  return [...texts].sort((a, b) => b.length - a.length)
}

function collectSecrets(value: unknown, paths: SecretPaths, path: string, found: FoundSecret[], depth: number): void {
  if (paths.secret) {
    if (value !== undefined) found.push({ path, value })
    return
  }
  if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = paths.keys?.get(String(i)) ?? paths.each
      if (inner) collectSecrets(value[i], inner, `${path}[${i}]`, found, depth + 1)
    }
    return
  }
  const fields = value as Record<string, unknown>
  for (const key of Object.keys(fields)) {
    const inner = paths.keys?.get(key) ?? paths.each
    if (inner) collectSecrets(fields[key], inner, /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, found, depth + 1)
  }
}

/** How long a string value a validation problem quotes before it cuts it (`preview` in @dogu/schema). */
const QUOTED_PREFIX = 57

/** `text` with every secret written in it, as itself, JSON-escaped, or cut as a problem quotes it, replaced by `••••`. */
export function replaceSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) {
    const forms = new Set([secret, JSON.stringify(secret).slice(1, -1)])
    if (secret.length > QUOTED_PREFIX + 3) forms.add(secret.slice(0, QUOTED_PREFIX))
    for (const form of forms) if (form) out = out.split(form).join(SECRET_MASK)
  }
  return out
}
