/**
 * The English words left in a text written for a reader of another language (zh-CN), once
 * what is not prose is taken out: each of `names` (tool names, argument values, quota names:
 * what a person or a tool wrote), code identifiers (`backticked`, snake_case, camelCase,
 * dotted, `$.paths`, `platform:id`, words with digits), JSON and URLs, and single letters
 * (the answers `y`, `n`, `e`). A test asserts the list is empty; what it returns names what
 * was left in English.
 *
 * @example
 * englishWords('权限被拒绝：mock:alice 拒绝了') // []
 * englishWords('deploy：被拒绝\nPermission denied: mock:alice declined it', ['deploy']) // ['Permission', 'denied', 'declined', 'it']
 */
export function englishWords(text: string, names: readonly string[] = []): string[] {
  let rest = text
  // Longest first, so a name inside another is not cut out of it first; only where it stands
  // apart from Latin letters and digits, so a value `J` does not leave `SON` of `JSON` behind,
  // and not as part of an identifier (`deploy` of `deploy:run`, which goes whole below).
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    if (name) rest = rest.replace(new RegExp(`(?<![A-Za-z0-9_]|[A-Za-z0-9_][.:])${escapeRegExp(name)}(?![A-Za-z0-9_]|[.:][A-Za-z0-9_])`, 'g'), ' ')
  }
  rest = rest
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    // JSON text (`{"limit": 5}`, `["x"]`): a value a person types, not prose; a marker in
    // brackets (`[80 characters folded]`) is prose.
    .replace(/\{\s*(?:"[^{}\n]*)?\}|\[\s*(?:(?:"[^"\n]*"|-?\d[\d.]*|true|false|null)\s*,?\s*)*\]/g, ' ')
  const words: string[] = []
  for (const token of rest.split(/[^\w$.:/@#-]+/u)) {
    if (!token || isIdentifier(token)) continue
    for (const word of token.match(/[A-Za-z]{2,}/g) ?? []) if (!TERMS.has(word)) words.push(word)
  }
  return words
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Words every language writes as they are: a format, the product's name. */
const TERMS: ReadonlySet<string> = new Set(['JSON', 'Dogu'])

function isIdentifier(token: string): boolean {
  const word = token.replace(/^[.:-]+|[.:-]+$/g, '')
  return /[_$/@#\d]/.test(word)
    || /[a-z][A-Z]/.test(word)
    || /\w[.:]\w/.test(word)
}
