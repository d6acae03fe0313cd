/** A command line split into simple commands, or why it could not be followed. */
export type SplitCommandLine =
  | { ok: true; commands: string[][] }
  | { ok: false; reason: string }

const SEPARATORS = new Set(['|', '||', '&&', ';', '\n'])
// Separators after which bash needs another command.
const CONTINUES = new Set(['|', '||', '&&'])

// Characters that make bash do more than run programs with literal words: expansions,
// redirections, subshells, globs, background jobs, history. `~` and `#` only count at the
// start of a word and `{` only outside `@{…}` (git's reflog syntax), where bash treats
// them as literal.
const SPECIAL: Record<string, string> = {
  '$': 'expansion `$`',
  '`': 'command substitution `` ` ``',
  '\\': 'escape `\\`',
  '<': 'redirection `<`',
  '>': 'redirection `>`',
  '(': 'subshell `(`',
  ')': 'subshell `)`',
  '*': 'glob `*`',
  '?': 'glob `?`',
  '[': 'glob `[`',
  ']': 'glob `]`',
  '!': 'history or negation `!`',
  '&': 'background job `&`',
  '\r': 'carriage return',
}

/**
 * Splits a command line into simple commands (words after quote removal) at `|`, `||`,
 * `&&`, `;` and newlines. Anything else bash would interpret — expansions, redirections,
 * subshells, globs, escapes — makes it give up with a reason: the read-only check only
 * vouches for command lines it can follow completely.
 */
export function splitCommandLine(line: string): SplitCommandLine {
  const commands: string[][] = []
  let words: string[] = []
  let word = ''
  let inWord = false
  const endWord = () => {
    if (inWord) words.push(word)
    word = ''
    inWord = false
  }
  let last = ''
  const endCommand = (separator: string) => {
    endWord()
    // Blank lines are fine; `| ls` or `ls && && ls` are not.
    if (!words.length && (separator !== '\n' || CONTINUES.has(last))) return `empty command before \`${separator === '\n' ? '\\n' : separator}\``
    if (words.length) commands.push(words)
    words = []
    last = separator
  }
  for (let i = 0; i < line.length; i++) {
    const char = line[i]
    if (char === ' ' || char === '\t') {
      endWord()
    } else if (char === "'") {
      const close = line.indexOf("'", i + 1)
      if (close < 0) return { ok: false, reason: 'unterminated quote `\'`' }
      word += line.slice(i + 1, close)
      inWord = true
      i = close
    } else if (char === '"') {
      const close = line.indexOf('"', i + 1)
      if (close < 0) return { ok: false, reason: 'unterminated quote `"`' }
      const quoted = line.slice(i + 1, close)
      const special = /[$`\\!]/.exec(quoted)
      if (special) return { ok: false, reason: `${SPECIAL[special[0]]} inside double quotes` }
      word += quoted
      inWord = true
      i = close
    } else if (char === '|' || char === '&' || char === ';' || char === '\n') {
      const pair = line.slice(i, i + 2)
      const separator = SEPARATORS.has(pair) ? pair : char
      if (!SEPARATORS.has(separator) || pair === '|&' || pair === ';;') {
        return { ok: false, reason: SPECIAL[char] ?? `operator \`${pair}\`` }
      }
      const error = endCommand(separator)
      if (error) return { ok: false, reason: error }
      i += separator.length - 1
    } else if (char === '#' && !inWord) {
      return { ok: false, reason: 'comment `#`' }
    } else if (char === '~' && (!inWord || line[i - 1] === '=' || line[i - 1] === ':')) {
      return { ok: false, reason: 'home directory expansion `~`' }
    } else if (char === '{' && line[i - 1] !== '@') {
      return { ok: false, reason: 'brace `{`' }
    } else if (char === '}' && !word.includes('@{')) {
      return { ok: false, reason: 'brace `}`' }
    } else if (SPECIAL[char] || char < ' ') {
      return { ok: false, reason: SPECIAL[char] ?? 'a control character' }
    } else {
      word += char
      inWord = true
    }
  }
  endWord()
  if (words.length) commands.push(words)
  else if (CONTINUES.has(last)) return { ok: false, reason: `the command line ends with \`${last}\`` }
  if (!commands.length) return { ok: false, reason: 'empty command' }
  return { ok: true, commands }
}
