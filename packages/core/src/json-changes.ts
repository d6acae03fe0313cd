/**
 * What changed between two JSON values, one line per changed leaf, by path:
 * `$.limit: 5 → 2`, `+ $.dryRun: true`, `- $.force`. For telling a model (and an audit
 * log) how a person edited its call: short, exact, and readable without a diff viewer.
 * Arrays compare by index; a value that changes type is one change at its path. A few
 * dozen lines of our own: the diff libraries at hand diff text, not JSON by path.
 */
export function jsonChanges(before: unknown, after: unknown, path = '$'): string[] {
  if (Object.is(before, after)) return []
  if (isContainer(before) && isContainer(after) && Array.isArray(before) === Array.isArray(after)) {
    const changes: string[] = []
    const keys = new Set([...Object.keys(before), ...Object.keys(after)])
    for (const key of keys) {
      const at = Array.isArray(before) ? `${path}[${key}]` : `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`
      const had = Object.hasOwn(before, key)
      const has = Object.hasOwn(after, key)
      if (had && !has) changes.push(`- ${at}`)
      else if (!had && has) changes.push(`+ ${at}: ${show((after as Record<string, unknown>)[key])}`)
      else changes.push(...jsonChanges((before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key], at))
    }
    return changes
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return []
  return [`${path}: ${show(before)} → ${show(after)}`]
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null
}

/** A value on one line, long ones cut: the line says what changed, the call holds the rest. */
function show(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value)
  return text.length > 120 ? `${text.slice(0, 117)}…` : text
}
