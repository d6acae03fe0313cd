/**
 * JSON with object keys sorted at every level, so equal values give equal text (and equal
 * hashes) whatever order their keys were written in. `undefined` members are left out, as
 * `JSON.stringify` does; a value JSON cannot hold (a cycle, a BigInt) throws.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, new Set()))
}

function sortKeys(value: unknown, seen: Set<object>): unknown {
  if (value === null || typeof value !== 'object') return value
  const json = (value as { toJSON?: () => unknown }).toJSON
  if (typeof json === 'function') return sortKeys(json.call(value), seen)
  if (seen.has(value)) throw new TypeError('the value holds a cycle')
  seen.add(value)
  let out: unknown
  if (Array.isArray(value)) {
    out = value.map((item) => sortKeys(item, seen) ?? null)
  } else {
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const item = sortKeys((value as Record<string, unknown>)[key], seen)
      if (item !== undefined && typeof item !== 'function' && typeof item !== 'symbol') sorted[key] = item
    }
    out = sorted
  }
  seen.delete(value)
  return out
}

/** `sha256:<hex>` of a text, through Web Crypto (Node 20 and browsers alike). */
export async function sha256(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  let hex = ''
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0')
  return `sha256:${hex}`
}
