import { SchemaError } from './errors'
import { childPath } from './path'

type Segment = { key: string } | { index: number } | { each: 'item' | 'value' }

/**
 * Decodes the values a dialect sends as JSON-encoded strings (`DialectConversion.encoded`),
 * leaving the input untouched: the result shares every part the paths do not reach. Paths
 * are those `convertToDialect` writes: `$.a`, `$["a b"]`, `[*]` for every array item, `.*` for
 * every dict value, `[0]` for a tuple position. A path that does not reach a value (absent,
 * `null`, not an object or array where one is expected) is skipped: the exact validator
 * judges what is there. A value that is not a string is left as it is, too: an encoded field
 * is a string in the dialect's schema, so anything else cannot be an encoding; it is taken as
 * the value itself, which the exact validator then accepts or rejects.
 *
 * @throws {SchemaError} `INVALID_ENCODING`, naming the concrete path (`$.headers`), when a
 * string there is not JSON text.
 * @example decodeEncoded({ headers: '{"x-a":"1"}' }, ['$.headers']) // { headers: { 'x-a': '1' } }
 */
export function decodeEncoded(value: unknown, encoded: readonly string[]): unknown {
  let result = value
  for (const path of encoded) result = decodeAt(result, parsePath(path), 0, '$')
  return result
}

function decodeAt(value: unknown, path: Segment[], index: number, at: string): unknown {
  if (value === null || value === undefined) return value
  if (index === path.length) return typeof value === 'string' ? parse(value, at) : value
  const segment = path[index]!
  if ('key' in segment) {
    if (!isObject(value) || !Object.hasOwn(value, segment.key)) return value
    return replace(value, segment.key, decodeAt(value[segment.key], path, index + 1, childPath(at, segment.key)))
  }
  if ('index' in segment) {
    if (!Array.isArray(value) || segment.index >= value.length) return value
    return replace(value, segment.index, decodeAt(value[segment.index], path, index + 1, `${at}[${segment.index}]`))
  }
  if (segment.each === 'item') {
    if (!Array.isArray(value)) return value
    let result = value
    value.forEach((item, i) => { result = replace(result, i, decodeAt(item, path, index + 1, `${at}[${i}]`)) })
    return result
  }
  if (!isObject(value)) return value
  let result: Record<string, unknown> = value
  for (const key of Object.keys(value)) result = replace(result, key, decodeAt(value[key], path, index + 1, childPath(at, key)))
  return result
}

function parse(text: string, at: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)
    throw new SchemaError('INVALID_ENCODING', at,
      `must be a JSON-encoded string (JSON text, as its description says), got ${shown}: ${(error as Error).message}`)
  }
}

/** `container` with one member changed, copied only when it does change. */
function replace<T extends Record<string, unknown> | unknown[]>(container: T, key: string | number, value: unknown): T {
  if ((container as any)[key] === value) return container
  const copy: any = Array.isArray(container) ? [...container] : { ...container }
  // defineProperty, so that a key named __proto__ stays a key
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true })
  return copy
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

/** `$.a["b c"][*].*[0]` as segments; a path this grammar does not read is a developer error. */
function parsePath(path: string): Segment[] {
  if (!path.startsWith('$')) throw new SchemaError('INVALID_SCHEMA', path, 'an encoded path starts with $')
  const segments: Segment[] = []
  let i = 1
  while (i < path.length) {
    const rest = path.slice(i)
    const name = /^\.([A-Za-z_$][\w$]*)/.exec(rest)
    if (name) {
      segments.push({ key: name[1]! })
      i += name[0].length
    } else if (rest.startsWith('.*')) {
      segments.push({ each: 'value' })
      i += 2
    } else if (rest.startsWith('[*]')) {
      segments.push({ each: 'item' })
      i += 3
    } else if (/^\[\d+\]/.test(rest)) {
      const digits = /^\[(\d+)\]/.exec(rest)!
      segments.push({ index: Number(digits[1]) })
      i += digits[0].length
    } else if (rest.startsWith('["')) {
      const end = closingQuote(rest)
      if (end < 0 || rest[end + 1] !== ']') throw new SchemaError('INVALID_SCHEMA', path, 'an unterminated ["key"] segment')
      segments.push({ key: JSON.parse(rest.slice(1, end + 1)) })
      i += end + 2
    } else {
      throw new SchemaError('INVALID_SCHEMA', path, `cannot read the path from ${JSON.stringify(rest)}`)
    }
  }
  return segments
}

// The index of the quote that closes the JSON string starting at index 1.
function closingQuote(text: string): number {
  for (let i = 2; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === '"') return i
  }
  return -1
}
