import Schema from 'schemastery'

// A small seeded generator of JSON values shaped after a schemastery schema: mostly near
// the schema (so both validators get past the first check), sometimes noise, with absent
// keys, nulls and extra keys mixed in.

/** mulberry32: a tiny seeded PRNG, so a failing value can be reproduced. */
export function seeded(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return { next, pick, int }
}

export type Random = ReturnType<typeof seeded>

const STRINGS = ['', 'a', 'b', 'ab', 'abc', 'abc1', 'abcdef', 'ABC', 'A1', 'x', 'y', 'x-a', 'k1', 'fast', 'slow',
  'staging', 'prod', 'auto', 'hello world', 'read', 'write']
const NUMBERS = [0, 1, -1, 2, 3, 5, 10, 15, 12, 0.5, 1.5, 0.25, 0.07, 0.01, 0.005, 0.99, 1.01, 80, 100, 101, -0.5, 42, 1e6]
const KEYS = ['a', 'b', 'c', 'x-a', 'x-y', 'k1', 'zz', 'extra']

function string(random: Random) {
  if (random.next() < 0.6) return random.pick(STRINGS)
  const length = random.int(0, 7)
  return Array.from({ length }, () => random.pick([...'abcxyz019-_ A'])).join('')
}

function number(random: Random) {
  const roll = random.next()
  if (roll < 0.5) return random.pick(NUMBERS)
  if (roll < 0.8) return random.int(-20, 120)
  return random.int(-100, 200) / 100
}

function date(random: Random) {
  const time = random.int(0, 2e9) * 1000
  return random.next() < 0.5 ? new Date(time).toISOString() : new Date(time).toISOString().slice(0, 10)
}

/** Any JSON value; `strings: false` leaves strings out (for date fields, whose parser JSON Schema cannot mirror). */
export function noise(random: Random, depth = 0, strings = true): unknown {
  const kinds = ['null', 'boolean', 'number', ...strings ? ['string'] : [], ...depth < 2 ? ['array', 'object'] : []]
  switch (random.pick(kinds)) {
    case 'null': return null
    case 'boolean': return random.next() < 0.5
    case 'number': return number(random)
    case 'string': return string(random)
    case 'array': return Array.from({ length: random.int(0, 3) }, () => noise(random, depth + 1, strings))
    default: return Object.fromEntries(Array.from({ length: random.int(0, 3) }, () => [random.pick(KEYS), noise(random, depth + 1, strings)]))
  }
}

const kSchema = Symbol.for('schemastery')

function isDate(schema: Schema): boolean {
  if (schema.type === 'union') return schema.list!.some(isDate)
  return schema.type === 'transform' && schema.inner?.meta.role === 'datetime'
}

/** A value shaped after `schema`. */
export function valueFor(schema: Schema, random: Random, depth = 0): unknown {
  if (schema.type === 'lazy') {
    if (!(schema.inner as any)?.[kSchema]) {
      // build the inner schema the way schemastery does on first use
      schema.inner = schema.builder!()
      schema.inner!.meta = { ...schema.meta, ...schema.inner!.meta }
    }
    return valueFor(schema.inner!, random, depth)
  }
  if (isDate(schema)) return random.next() < 0.85 ? date(random) : noise(random, depth, false)
  if (random.next() < 0.08) return noise(random, depth)
  switch (schema.type) {
    case 'string': return string(random)
    case 'number': {
      // half the time, a value that fits the bounds and the step
      const { min = -20, max = 120, step } = schema.meta
      if (random.next() < 0.5 || !Number.isFinite(min) || !Number.isFinite(max)) return number(random)
      const unit = step || 0.25
      return Number((min + unit * random.int(0, Math.floor((max - min) / unit))).toFixed(6))
    }
    case 'boolean': return random.next() < 0.5
    case 'const': return random.next() < 0.7 ? structuredClone(schema.value) : noise(random, depth)
    case 'any': case 'never': return noise(random, depth)
    case 'union': return valueFor(random.pick(schema.list!), random, depth)
    case 'transform': return valueFor(schema.inner!, random, depth)
    case 'bitset': {
      if (random.next() < 0.4) return random.pick([0, 1, 3, 7, 2.5, -1])
      return Array.from({ length: random.int(0, 3) }, () => random.next() < 0.9 ? random.pick([...Object.keys(schema.bits!), 'other']) : 1)
    }
    case 'array': {
      const length = depth > 3 ? 0 : random.int(0, 4)
      return Array.from({ length }, () => random.next() < 0.1 ? null : valueFor(schema.inner!, random, depth + 1))
    }
    case 'tuple': {
      const length = random.int(0, schema.list!.length + 1)
      return Array.from({ length }, (_, index) => {
        const inner = schema.list![index]
        return !inner || random.next() < 0.1 ? noise(random, depth + 1) : valueFor(inner, random, depth + 1)
      })
    }
    case 'dict': {
      const entries = Array.from({ length: random.int(0, 3) }, () => {
        const key = random.pick(KEYS)
        return [key, random.next() < 0.1 ? null : valueFor(schema.inner!, random, depth + 1)]
      })
      return Object.fromEntries(entries)
    }
    case 'object': {
      const result: Record<string, unknown> = {}
      for (const [key, inner] of Object.entries(schema.dict!)) {
        const roll = random.next()
        if (roll < 0.12) continue
        result[key] = roll < 0.2 ? null : valueFor(inner, random, depth + 1)
      }
      if (random.next() < 0.15) result[random.pick(KEYS)] = noise(random, depth + 1)
      return result
    }
    case 'intersect': {
      const parts = schema.list!.map(part => valueFor(part, random, depth))
      if (parts.every(part => part && typeof part === 'object' && !Array.isArray(part))) return Object.assign({}, ...parts.reverse())
      return parts[0]
    }
    default: return noise(random, depth)
  }
}
