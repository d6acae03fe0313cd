// The key patterns `fromJsonSchema` gives its strict dicts, shared with `toJsonSchema`, which
// reads them back as the keywords they came from. Each is exact on its own: a strict dict
// inside an intersect checks only the keys its pattern takes, and leaves the others alone.

export function escapeRegExp(text: string) {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
}

/**
 * The keys `additionalProperties` applies to: neither declared in `properties` nor matched
 * by a `patternProperties` source.
 */
export function otherKeysPattern(declared: readonly string[], sources: readonly string[]): string {
  const notDeclared = declared.length ? `(?!(?:${declared.map(escapeRegExp).join('|')})$)` : ''
  return '^' + notDeclared + sources.map((source) => `(?![\\s\\S]*?(?:${source}))`).join('')
}

const EXCLUDED_START = '^(?![\\s\\S]*?(?:'
const EXCLUDED_END = '))'

/** The keys a `propertyNames` pattern refuses: a strict dict with never values over them says "every key matches". */
export function excludedKeysPattern(source: string): string {
  return EXCLUDED_START + source + EXCLUDED_END
}

/** The `propertyNames` pattern an {@link excludedKeysPattern} was made from, if it is one. */
export function excludedSource(pattern: string): string | undefined {
  if (!pattern.startsWith(EXCLUDED_START) || !pattern.endsWith(EXCLUDED_END)) return
  const source = pattern.slice(EXCLUDED_START.length, -EXCLUDED_END.length)
  try {
    // the middle must be a pattern of its own, or the brackets were not ours
    new RegExp(source, 'u')
    return source
  } catch {}
}
