/**
 * Where Markdown code that starts at `at` ends: a fenced block (``` or ~~~ at the start of a
 * line, to its closing fence or the end of the text), or an inline span (a run of backticks to
 * the next run of the same length). Undefined when no code starts there.
 */
export function codeEnd(text: string, at: number): number | undefined {
  const char = text[at]
  if (char !== '`' && char !== '~') return undefined
  let run = at
  while (text[run] === char) run++
  const length = run - at
  const lineStart = text.lastIndexOf('\n', at - 1) + 1
  if (length >= 3 && /^ {0,3}$/.test(text.slice(lineStart, at))) {
    const close = new RegExp(`\\n {0,3}${char === '`' ? '`' : '~'}{${length},}[ \\t]*(?=\\n|$)`, 'g')
    close.lastIndex = run
    const match = close.exec(text)
    return match ? match.index + match[0].length : text.length
  }
  if (char !== '`') return undefined
  const span = new RegExp(`(?<!\`)\`{${length}}(?!\`)`, 'g')
  span.lastIndex = run
  const match = span.exec(text)
  // A run of backticks with no partner is literal text.
  return match ? match.index + length : run
}
