/**
 * The tokens of a model's almost-JSON arguments, as written: strings in any quotes, bare
 * words, numbers, punctuation (full-width too) and comments. Not a parser: it knows where
 * strings begin and end, which is what folding punctuation outside them and comparing a
 * repair with its input need. `jsonrepair` does the repairing.
 */
export type LenientToken =
  | { kind: 'string'; value: string; quote: string; at: number; end: number }
  | { kind: 'number'; text: string; at: number; end: number }
  | { kind: 'word'; text: string; at: number; end: number }
  | { kind: 'punct'; char: string; fullWidth: boolean; at: number; end: number }
  | { kind: 'comment'; at: number; end: number }

/** A text the lexer stops at: a string that never ends, or a character no JSON-like text has. */
export interface LexProblem {
  problem: 'unterminated-string' | 'unexpected' | 'bad-escape'
  at: number
}

/** Full-width punctuation a Chinese model writes outside strings, and its ASCII. */
const FULL_WIDTH: Readonly<Record<string, string>> = { '，': ',', '：': ':', '｛': '{', '｝': '}', '［': '[', '］': ']' }
/** Opening quotes and the quote that closes each. */
const QUOTES: Readonly<Record<string, string>> = { '"': '"', "'": "'", '“': '”', '‘': '’' }
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '/': '/', '\\': '\\', '"': '"', "'": "'" }
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WORD = /[\p{L}_$][\p{L}\p{N}_$-]*/uy
const SPACE = /[\s\u3000\ufeff]/

/** Splits `text` into lenient tokens, or says where it cannot. */
export function lenientTokens(text: string): LenientToken[] | LexProblem {
  const tokens: LenientToken[] = []
  let i = 0
  while (i < text.length) {
    const char = text[i]
    if (SPACE.test(char)) {
      i++
      continue
    }
    if (char === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i)
      const stop = end < 0 ? text.length : end
      tokens.push({ kind: 'comment', at: i, end: stop })
      i = stop
      continue
    }
    if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      if (end < 0) return { problem: 'unexpected', at: i }
      tokens.push({ kind: 'comment', at: i, end: end + 2 })
      i = end + 2
      continue
    }
    if ('{}[],:'.includes(char)) {
      tokens.push({ kind: 'punct', char, fullWidth: false, at: i, end: i + 1 })
      i++
      continue
    }
    if (FULL_WIDTH[char]) {
      tokens.push({ kind: 'punct', char: FULL_WIDTH[char], fullWidth: true, at: i, end: i + 1 })
      i++
      continue
    }
    if (QUOTES[char]) {
      const string = readString(text, i, QUOTES[char])
      if (!string) return { problem: 'unterminated-string', at: i }
      if (typeof string === 'number') return { problem: 'bad-escape', at: string }
      tokens.push(string)
      i = string.end
      continue
    }
    NUMBER.lastIndex = i
    const number = NUMBER.exec(text)
    if (number) {
      tokens.push({ kind: 'number', text: number[0], at: i, end: i + number[0].length })
      i += number[0].length
      continue
    }
    WORD.lastIndex = i
    const word = WORD.exec(text)
    if (word) {
      tokens.push({ kind: 'word', text: word[0], at: i, end: i + word[0].length })
      i += word[0].length
      continue
    }
    return { problem: 'unexpected', at: i }
  }
  return tokens
}

/**
 * The string starting at `at` (its opening quote), decoded; `undefined` when it never
 * closes, or the position of an escape JSON has not (`C:\Users`: dropping the backslash, as
 * a repair would, changes the path).
 */
function readString(text: string, at: number, close: string): LenientToken | number | undefined {
  let value = ''
  for (let i = at + 1; i < text.length; i++) {
    const char = text[i]
    if (char === close) return { kind: 'string', value, quote: text[at], at, end: i + 1 }
    if (char !== '\\') {
      value += char
      continue
    }
    const next = text[++i]
    if (next === undefined) return undefined
    if (next === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) return i - 1
      value += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16))
      i += 4
    } else if (ESCAPES[next] !== undefined) {
      value += ESCAPES[next]
    } else {
      return i - 1
    }
  }
  return undefined
}

/**
 * `text` with full-width punctuation outside strings made ASCII (a `，` inside a string
 * stays), for the library, which reads `：` as text. `undefined` when nothing was folded.
 */
export function foldFullWidth(text: string, tokens: readonly LenientToken[]): string | undefined {
  let folded = ''
  let from = 0
  for (const token of tokens) {
    if (token.kind !== 'punct' || !token.fullWidth) continue
    folded += text.slice(from, token.at) + token.char
    from = token.end
  }
  return from ? folded + text.slice(from) : undefined
}
