// The envelope a model writes a call in, `{"name": …, "arguments": …}`, read by a lexer of
// JSON's structure (strings, brackets, top-level keys), not a parser: the arguments must stay
// the text the model wrote, malformed or not, for the pipeline to repair or refuse.

/** A tool's name as a model writes it: wider than Dogu's own rule, since an unknown name is the pipeline's to answer. */
export const NAME = /^[\w.:-]{1,128}$/

export function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at])) at++
  return at
}

/**
 * The object `{"name": …, "arguments": …}` at `at`: its name (a string) and the arguments'
 * text as written, found by a lexer of the top-level keys only, so a malformed argument value
 * (single quotes, trailing comma, a cut-off tail) is kept for the repair. The keys may be
 * single-quoted or bare, and the separators full-width, as models write them; the arguments
 * may be under `arguments`, `parameters` (Qwen, Llama) or `args` (seen from Ollama's models).
 * `ending` says whether the object closed, the text ended inside it (`cut-off`), or something
 * that is not JSON's structure came first (`malformed`); `keys` lists its top-level keys in order.
 */
export function envelope(text: string, at: number): Envelope | undefined {
  if (text[at] !== '{') return undefined
  let cursor = skipSpace(text, at + 1)
  let name: string | undefined
  let args: string | undefined
  const keys: string[] = []
  while (cursor < text.length && text[cursor] !== '}') {
    const key = keyAt(text, cursor)
    if (!key) return undefined
    keys.push(key.key)
    cursor = skipSpace(text, key.end)
    if (text[cursor] !== ':' && text[cursor] !== '：') return undefined
    cursor = skipSpace(text, cursor + 1)
    const end = valueEnd(text, cursor)
    const raw = text.slice(cursor, end).trim()
    // Two names, or arguments given twice (`arguments` and `parameters`): which one was meant is a guess.
    if (key.key === 'name') {
      if (name !== undefined) return undefined
      name = stringValue(raw) ?? ''
    } else if (ARGUMENT_KEYS.has(key.key)) {
      if (args !== undefined) return undefined
      args = raw
    }
    cursor = skipSpace(text, end)
    if (text[cursor] === ',' || text[cursor] === '，') cursor = skipSpace(text, cursor + 1)
    else if (text[cursor] !== '}') break
  }
  if (!name || !NAME.test(name)) return undefined
  const ending = text[cursor] === '}' ? 'closed' : cursor >= text.length ? 'cut-off' : 'malformed'
  return { call: { name, arguments: args || '{}' }, end: ending === 'closed' ? cursor + 1 : text.length, ending, keys }
}

export interface Envelope {
  call: { name: string; arguments: string }
  /** Past the closing brace; the end of the text when the object did not close. */
  end: number
  ending: 'closed' | 'cut-off' | 'malformed'
  keys: string[]
}

const ARGUMENT_KEYS: ReadonlySet<string> = new Set(['arguments', 'parameters', 'args'])

function keyAt(text: string, at: number): { key: string; end: number } | undefined {
  const quote = text[at]
  if (quote === '"' || quote === "'" || quote === '“') {
    const end = stringEnd(text, at)
    return { key: text.slice(at + 1, end - 1), end }
  }
  const match = /^[A-Za-z_]\w*/.exec(text.slice(at, at + 64))
  return match ? { key: match[0], end: at + match[0].length } : undefined
}

function stringValue(raw: string): string | undefined {
  if (raw.length < 2 || raw.at(-1) !== (CLOSING_QUOTE[raw[0]] ?? '')) return undefined
  if (raw[0] === '"') {
    try {
      return JSON.parse(raw) as string
    } catch {
      return undefined
    }
  }
  return raw.slice(1, -1)
}

/** The quotes a string may open with, as models write them, and the quote that closes each. */
const CLOSING_QUOTE: Readonly<Record<string, string>> = Object.freeze({ '"': '"', "'": "'", '“': '”' })

/** Where the string that opens at `at` closes (after its quote), or the end of the text. */
export function stringEnd(text: string, at: number): number {
  const quote = CLOSING_QUOTE[text[at]]
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === quote) return i + 1
  }
  return text.length
}

/**
 * Where the value that starts at `at` ends: a bracketed value to its matching bracket (strings
 * skipped, so a `}` inside one does not count), a string to its quote, anything else to the
 * next `,` or `}` of this level. A cut-off value runs to the end of the text.
 */
export function valueEnd(text: string, at: number): number {
  const open = text[at]
  if (CLOSING_QUOTE[open]) return stringEnd(text, at)
  if (open !== '{' && open !== '[') {
    let i = at
    while (i < text.length && !',，}]'.includes(text[i])) i++
    return i
  }
  let depth = 0
  for (let i = at; i < text.length; i++) {
    const char = text[i]
    // A single quote inside a word is an apostrophe; one after `{ [ , :` opens a string.
    if (char === '"' || char === '“' || (char === "'" && /[{[,:，：\s]/.test(text[i - 1] ?? ''))) {
      i = stringEnd(text, i) - 1
    } else if (char === '{' || char === '[') {
      depth++
    } else if (char === '}' || char === ']') {
      if (--depth === 0) return i + 1
    }
  }
  return text.length
}
