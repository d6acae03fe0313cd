/** A key one object of a JSON text holds twice: `JSON.parse` keeps the last value and drops the other. */
export interface DuplicateKey {
  /** The key, decoded: `"a"` and `"\u0061"` are one key. */
  key: string
  /** Where, from the root `$`: `$.meta.tags`, `$.items[1]["a.b"]`. */
  path: string
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OBJECT = 1
const ARRAY = 0
/** Deeper than this, the parsed value is not counted: the text is scanned instead. */
const MAX_COUNTED_DEPTH = 64
/** An object's keys are compared one by one up to this many, then in a set. */
const LISTED_KEYS = 8
/** A string's first characters read one by one before `indexOf` looks for its end. */
const BY_HAND = 16
/** An empty object, to ask whether `Object.prototype` has gained enumerable keys. */
const PROBE: object = {}
/** A key longer than this is shown cut, in a path and in a message. */
const SHOWN_KEY_LENGTH = 40

/**
 * The first key that an object of `text` holds twice, or `undefined`. `text` is valid JSON and
 * `value` is what `JSON.parse(text)` returned, which kept one value of a repeated key: so a
 * text has a duplicate exactly when it has more members than `value` has keys. Every member
 * has one `:` outside a string, so when the text has no more colons than `value` has keys,
 * that settles it without reading the text again (most calls). When strings hold colons
 * (`07:30`, `https://`), the colons outside strings are counted in one pass; only a text that
 * has a duplicate is then read again, for its key and path.
 */
export function findDuplicateKey(text: string, value: unknown): DuplicateKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  // `countKeys` uses `for…in` (about three times as fast as `Object.keys` here): a polluted
  // prototype's enumerable keys would pad its count, so then the text is read instead.
  for (const _ in PROBE) return scan(text)
  const keys = countKeys(value, 0)
  // Counted only as far as one more colon than keys: then the members must be counted.
  let colons = 0
  for (let at = text.indexOf(':'); at >= 0 && colons <= keys; at = text.indexOf(':', at + 1)) colons++
  if (colons === keys || membersIn(text) === keys) return undefined
  return scan(text)
}

/** `JSON.stringify(key)`, cut when long: a model's key may be any length. */
export function shownKey(key: string): string {
  return JSON.stringify(key.length > SHOWN_KEY_LENGTH ? `${key.slice(0, SHOWN_KEY_LENGTH)}…` : key)
}

/** `path` and one member of it, as validation issues write paths: `$.city`, `$[0]`, `$["a.b"]`. */
export function childPath(path: string, member: string | number): string {
  if (typeof member === 'number') return `${path}[${member}]`
  return member.length <= SHOWN_KEY_LENGTH && /^[A-Za-z_$][\w$]*$/.test(member) ? `${path}.${member}` : `${path}[${shownKey(member)}]`
}

/** The keys of every object in `value`, or -1 when it is nested too deeply to count (no text has -1 colons). */
function countKeys(value: object, depth: number): number {
  if (depth > MAX_COUNTED_DEPTH) return -1
  let count = 0
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (typeof item !== 'object' || item === null) continue
      const inner = countKeys(item, depth + 1)
      if (inner < 0) return -1
      count += inner
    }
    return count
  }
  for (const key in value) {
    count++
    const item: unknown = (value as Record<string, unknown>)[key]
    if (typeof item !== 'object' || item === null) continue
    const inner = countKeys(item, depth + 1)
    if (inner < 0) return -1
    count += inner
  }
  return count
}

/** The members of every object in `text`: its colons outside strings. */
function membersIn(text: string): number {
  let members = 0
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (char === QUOTE) i = stringEnd(text, i)
    else if (char === COLON) members++
  }
  return members
}

/**
 * Where the string whose opening quote is at `at` ends (its closing quote). Its first
 * characters are read one by one; past them, the end is found with `indexOf`, which skips a
 * long string (a file's content) far faster.
 */
function stringEnd(text: string, at: number): number {
  const limit = at + 1 + BY_HAND
  let i = at + 1
  for (; i < limit; i++) {
    const char = text.charCodeAt(i)
    if (char === QUOTE) return i
    if (char === BACKSLASH) i++
  }
  let end = text.indexOf('"', i)
  while (end > 0 && text.charCodeAt(end - 1) === BACKSLASH && escaped(text, end)) end = text.indexOf('"', end + 1)
  // Only valid JSON comes here; a string that never ends must still end the loops reading it.
  return end < 0 ? text.length : end
}

/**
 * The first duplicate key of valid JSON, in one pass. `keys` holds the keys of the objects
 * open, outermost first, and `starts[d]` is where container `d`'s own keys begin in it, so an
 * object's last key (the member a path goes through) is the one before its child's start.
 */
function scan(text: string): DuplicateKey | undefined {
  const kinds: number[] = []
  const starts: number[] = []
  const indices: number[] = []
  const sets: (Set<string> | undefined)[] = []
  const keys: string[] = []
  let count = 0
  let depth = -1
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (char === QUOTE) {
      const end = stringEnd(text, i)
      if (expectKey) {
        let key = text.slice(i + 1, end)
        if (key.includes('\\')) key = JSON.parse(text.slice(i, end + 1)) as string
        if (seen(keys, count, starts[depth], sets, depth, key)) return { key, path: pathOf(kinds, starts, indices, keys, depth, key) }
        keys[count++] = key
        expectKey = false
      }
      i = end
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth++
      kinds[depth] = char === OPEN_BRACE ? OBJECT : ARRAY
      starts[depth] = count
      indices[depth] = 0
      sets[depth] = undefined
      expectKey = char === OPEN_BRACE
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      count = starts[depth]
      depth--
      expectKey = false
    } else if (char === COMMA) {
      if (kinds[depth] === ARRAY) indices[depth]++
      else expectKey = true
    }
  }
  return undefined
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let run = 0
  for (let i = at - 1; text.charCodeAt(i) === BACKSLASH; i--) run++
  return run % 2 === 1
}

/** Whether the object at `depth` (its keys `keys[start..count)`) holds `key` already. */
function seen(keys: string[], count: number, start: number, sets: (Set<string> | undefined)[], depth: number, key: string): boolean {
  const set = sets[depth]
  if (set) {
    if (set.has(key)) return true
    set.add(key)
    return false
  }
  for (let k = start; k < count; k++) if (keys[k] === key) return true
  // A model's object with thousands of keys is compared in a set, not pairwise.
  if (count - start >= LISTED_KEYS) sets[depth] = new Set(keys.slice(start, count)).add(key)
  return false
}

function pathOf(kinds: number[], starts: number[], indices: number[], keys: string[], depth: number, key: string): string {
  let path = '$'
  for (let d = 0; d < depth; d++) path = childPath(path, kinds[d] === OBJECT ? keys[starts[d + 1] - 1] : indices[d])
  return childPath(path, key)
}
