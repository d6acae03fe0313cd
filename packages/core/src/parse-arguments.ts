export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string }

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/**
 * Accepts a model's `arguments` as a JSON string or an object. Never throws: malformed JSON,
 * non-objects, oversized input and prototype-polluting keys become messages for the model.
 */
export function parseArguments(input: unknown, maxLength: number): ParsedArguments {
  let value: unknown
  if (input === undefined || input === null || input === '') return { ok: true, value: {} }
  if (typeof input === 'string') {
    if (input.length > maxLength) {
      return { ok: false, message: `Arguments are too large: ${input.length} characters, at most ${maxLength} are accepted.` }
    }
    try {
      value = JSON.parse(input)
    } catch (error) {
      return { ok: false, message: `Arguments are not valid JSON (${(error as Error).message}). Send a JSON object.` }
    }
    // Only scan keys when the text could hold a forbidden one: most calls skip the walk.
    if (!mayHoldForbiddenKey(input)) return checkObject(value)
  } else {
    value = input
  }
  const checked = checkObject(value)
  if (!checked.ok) return checked
  const bad = findForbiddenKey(value, '$', 0)
  if (bad) return { ok: false, message: `Arguments use a forbidden key at ${bad}. Rename or remove it.` }
  return checked
}

// One regexp scan is about twice as fast as three `includes` on typical arguments.
const MAY_HOLD_FORBIDDEN = /proto|constructor/

function mayHoldForbiddenKey(text: string): boolean {
  return MAY_HOLD_FORBIDDEN.test(text)
}

function checkObject(value: unknown): ParsedArguments {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
    return { ok: false, message: `Arguments must be a JSON object, got ${kind}.` }
  }
  return { ok: true, value: value as Record<string, unknown> }
}

function findForbiddenKey(value: unknown, path: string, depth: number): string | undefined {
  if (depth > 64) return `${path} (nested too deeply)`
  if (typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findForbiddenKey(value[i], `${path}[${i}]`, depth + 1)
      if (bad) return bad
    }
    return
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return `${path}.${key}`
    const bad = findForbiddenKey((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1)
    if (bad) return bad
  }
}
