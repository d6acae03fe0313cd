/**
 * Compiles a command-line glob: `*` matches any run of characters (`/` and spaces
 * included), `?` one character, `\` escapes the next one; everything else is literal.
 * Path globs would let `rm *` miss `rm -rf /tmp`, which for a deny rule is a hole.
 */
export function compileCommandGlob(pattern: string): RegExp {
  let source = '^'
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === '\\' && i + 1 < pattern.length) source += escape(pattern[++i])
    else if (char === '*') source += '[^]*'
    else if (char === '?') source += '[^]'
    else source += escape(char)
  }
  return new RegExp(source + '$', 'u')
}

function escape(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? '\\' + char : char
}
