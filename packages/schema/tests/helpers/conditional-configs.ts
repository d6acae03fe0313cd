import Schema from 'schemastery'
import type { Random } from './seeded-values'

// Seeded Koishi conditional configs — `intersect([object({ key: base }), union([object({ key:
// narrowed, ...options }), other])])` — with values written the way a model sends them: the
// base's keys and one chosen branch's keys, each present or left out, from a pool that holds
// values the narrowed branch refuses. A branch that leaves the key undeclared takes any value
// there, so many of them are valid (`{ fwd: false }` beside `fwd: const(true)`).

type Kind = 'boolean' | 'mode' | 'count' | 'text'

const POOLS: Record<Kind, unknown[]> = {
  boolean: [true, false],
  mode: ['a', 'b', 'c'],
  count: [0, 1, 3, 7, 50, 400, 2.5, -1],
  text: ['', 'x', 'http://127.0.0.1:7897'],
}

/** A key's schema and the values a model might send for it. */
interface Key {
  name: string
  schema: Schema
  pool: unknown[]
}

/** One generated object schema: which keys a value may hold, by union branch. */
interface Group {
  schema: Schema
  /** The keys of the parts every value goes through (the base). */
  base: Key[]
  /** Per union, per branch: that branch's keys. */
  unions: Key[][][]
  /** The switch key, and for each union the branch that narrows it (to count crossings). */
  switch: { name: string, narrowed: Schema[] }
}

/** A value, and the schema of the branches it was written for: the base and one branch of each union. */
export interface Written {
  value: unknown
  through: Schema
}

export interface ConditionalConfig {
  name: string
  schema: Schema
  /**
   * Values in the model's shape: only keys the base or the chosen branches declare. Valid
   * when `through` accepts them (then the whole schema does too); some are, some are not.
   */
  values: Written[]
  /** Whether a value sends the switch key with a value a branch's narrowing refuses. */
  crossesNarrowing: (value: unknown) => boolean
}

function baseSchema(kind: Kind, random: Random): Schema {
  switch (kind) {
    case 'boolean': return Schema.boolean().default(random.next() < 0.5)
    case 'mode': return Schema.union(['a', 'b', 'c']).default(random.pick(['a', 'b', 'c']))
    case 'count': return Schema.number().min(0).max(400).default(random.pick([0, 7]))
    default: return Schema.string().default('')
  }
}

// A branch's narrower statement of the switch: a constant (required or not), a smaller enum, a tighter range.
function narrowedSchema(kind: Kind, random: Random): Schema {
  const constant = Schema.const(random.pick(POOLS[kind].slice(0, kind === 'count' ? 4 : undefined)) as any)
  const roll = random.next()
  if (roll < 0.45) return constant.required()
  if (roll < 0.7 || kind === 'boolean' || kind === 'text') return constant
  if (kind === 'mode') return Schema.union(['a', 'b']).required()
  return Schema.natural().max(3).required()
}

function optionKey(name: string, random: Random): Key {
  const kind = random.pick(['boolean', 'count', 'text'] as const)
  const inner = kind === 'boolean' ? Schema.boolean() : kind === 'count' ? Schema.natural().max(400) : Schema.string()
  const schema = random.next() < 0.3 ? inner.required() : random.next() < 0.5 ? inner.default(POOLS[kind][0] as never) : inner
  return { name, schema, pool: POOLS[kind] }
}

function objectOf(keys: Key[]): Schema {
  return Schema.object(Object.fromEntries(keys.map(key => [key.name, key.schema])))
}

function group(random: Random, prefix: string): Group {
  const kind = random.pick(['boolean', 'boolean', 'mode', 'count', 'text'] as const)
  const switchKey: Key = { name: `${prefix}on`, schema: baseSchema(kind, random), pool: POOLS[kind] }
  const base = [switchKey, ...random.next() < 0.4 ? [optionKey(`${prefix}shared`, random)] : []]
  const narrowed: Schema[] = []
  const unions: Key[][][] = []
  for (let u = 0; u < (random.next() < 0.25 ? 2 : 1); u++) {
    const narrowing = narrowedSchema(kind, random)
    narrowed.push(narrowing)
    const first = [{ name: switchKey.name, schema: narrowing, pool: POOLS[kind] }, optionKey(`${prefix}opt${u}`, random)]
    const others: Key[][] = []
    for (let b = 0; b < random.int(1, 2); b++) {
      const roll = random.next()
      if (roll < 0.5) others.push([])
      else if (roll < 0.75) others.push([optionKey(`${prefix}alt${u}${b}`, random)])
      else others.push([{ name: switchKey.name, schema: narrowedSchema(kind, random), pool: POOLS[kind] }])
    }
    unions.push(random.next() < 0.5 ? [first, ...others] : [...others, first])
  }
  const parts = [objectOf(base), ...unions.map(branches => Schema.union(branches.map(objectOf)))]
  return {
    schema: Schema.intersect(random.next() < 0.8 ? parts : parts.reverse()),
    base,
    unions,
    switch: { name: switchKey.name, narrowed },
  }
}

// A value through the base and one branch of each union: each key left out or taken from its pool.
function valueOf(g: Group, random: Random): { value: Record<string, unknown>, through: Schema[] } {
  const chosen = g.unions.map(branches => random.pick(branches))
  const value: Record<string, unknown> = {}
  for (const key of [...g.base, ...chosen.flat()]) {
    if (Object.hasOwn(value, key.name) || random.next() < 0.25) continue
    value[key.name] = random.pick(key.pool)
  }
  return { value, through: [objectOf(g.base), ...chosen.map(objectOf)] }
}

function refuses(schema: Schema, value: unknown): boolean {
  try {
    Schema.object({ v: schema })({ v: structuredClone(value) })
    return false
  } catch (error) {
    if (Schema.ValidationError.is(error)) return true
    throw error
  }
}

/**
 * `count` seeded configs: a group at the root, two groups side by side (ChatLuna's config), or
 * a group nested in a property, each with `values` model-shaped values.
 */
export function conditionalConfigs(random: Random, count: number, values: number): ConditionalConfig[] {
  return Array.from({ length: count }, (_, index) => {
    const layout = random.pick(['root', 'side by side', 'nested'] as const)
    const groups = layout === 'side by side' ? [group(random, 'a_'), group(random, 'b_')] : [group(random, '')]
    const crossesIn = (value: Record<string, unknown>) => groups.some(g => Object.hasOwn(value, g.switch.name)
      && g.switch.narrowed.some(narrowed => refuses(narrowed, value[g.switch.name])))
    const written = (): Written => {
      const parts = groups.map(g => valueOf(g, random))
      return { value: Object.assign({}, ...parts.map(part => part.value)), through: Schema.intersect(parts.flatMap(part => part.through)) }
    }
    if (layout === 'nested') {
      const outer = (options: Schema) => Schema.object({ name: Schema.string().required(), options })
      return {
        name: `#${index} nested`,
        schema: outer(groups[0]!.schema),
        values: Array.from({ length: values }, () => {
          const { value, through } = written()
          return random.next() < 0.2 ? { value: { name: 'n' }, through: outer(through) } : { value: { name: 'n', options: value }, through: outer(through) }
        }),
        crossesNarrowing: (value) => crossesIn(((value as any).options ?? {}) as Record<string, unknown>),
      }
    }
    return {
      name: `#${index} ${layout}`,
      schema: groups.length === 1 ? groups[0]!.schema : Schema.intersect(groups.map(g => g.schema)),
      values: Array.from({ length: values }, written),
      crossesNarrowing: (value) => crossesIn(value as Record<string, unknown>),
    }
  })
}
