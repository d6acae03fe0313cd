/** One `key = value` of a git config file: `section[.subsection].name`, value `null` for a bare key. */
export interface GitConfigEntry {
  /** Section and name lowercased (git compares them without case); the subsection as written. */
  key: string
  value: string | null
}

const NAME = /[A-Za-z0-9-]/
const SECTION = /[A-Za-z0-9.-]/

/**
 * Reads a git config file the way git's own parser does (`config.c`): sections
 * `[core]`, `[remote "origin"]` and the old `[remote.origin]`, keys on the header's line or
 * below, quotes, escapes, comments and backslash-newline continuations. Returns
 * `undefined` for anything git would reject or this reader does not follow, so a caller
 * can treat it as "not vouched for".
 */
export function parseGitConfig(text: string): GitConfigEntry[] | undefined {
  const entries: GitConfigEntry[] = []
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  let section: string | undefined
  const at = (offset = 0) => text[i + offset]
  while (i < text.length) {
    const char = at()
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      i++
    } else if (char === '#' || char === ';') {
      while (i < text.length && at() !== '\n') i++
    } else if (char === '[') {
      i++
      let name = ''
      while (i < text.length && SECTION.test(at())) name += text[i++]
      if (!name) return undefined
      if (at() === ']') {
        i++
        // `[remote.origin]`: the old spelling, whose subsection is lowercased by git.
        const dot = name.indexOf('.')
        section = dot < 0 ? name.toLowerCase() : `${name.slice(0, dot).toLowerCase()}.${name.slice(dot + 1).toLowerCase()}`
        continue
      }
      if (name.includes('.')) return undefined
      if (at() !== ' ' && at() !== '\t') return undefined
      while (at() === ' ' || at() === '\t') i++
      if (at() !== '"') return undefined
      i++
      let sub = ''
      for (;;) {
        const next = text[i++]
        if (next === undefined || next === '\n') return undefined
        if (next === '"') break
        if (next === '\\') {
          const escaped = text[i++]
          if (escaped === undefined || escaped === '\n') return undefined
          sub += escaped
        } else {
          sub += next
        }
      }
      if (at() !== ']') return undefined
      i++
      section = `${name.toLowerCase()}.${sub}`
    } else if (/[A-Za-z]/.test(char)) {
      if (section === undefined) return undefined
      let name = ''
      while (i < text.length && NAME.test(at())) name += text[i++]
      while (at() === ' ' || at() === '\t') i++
      const key = `${section}.${name.toLowerCase()}`
      if (i >= text.length || at() === '\n' || at() === '\r' || at() === '#' || at() === ';') {
        entries.push({ key, value: null })
        continue
      }
      if (at() !== '=') return undefined
      i++
      const value = readValue()
      if (value === undefined) return undefined
      entries.push({ key, value })
    } else {
      return undefined
    }
  }
  return entries

  // From after `=` to the end of the line, as git's parse_value.
  function readValue(): string | undefined {
    let value = ''
    let quoted = false
    let space = 0
    while (at() === ' ' || at() === '\t') i++
    for (;;) {
      const char = text[i++]
      if (char === undefined || (char === '\n' && !quoted)) break
      if (char === '\n') return undefined
      if (!quoted && (char === ';' || char === '#')) {
        while (i < text.length && at() !== '\n') i++
        break
      }
      if (!quoted && (char === ' ' || char === '\t' || char === '\r')) {
        space++
        continue
      }
      if (space) {
        if (value) value += ' '.repeat(space)
        space = 0
      }
      if (char === '\\') {
        const escaped = text[i++]
        if (escaped === '\n') continue
        if (escaped === '\r' && at() === '\n') {
          i++
          continue
        }
        const map: Record<string, string> = { n: '\n', t: '\t', b: '\b', '"': '"', '\\': '\\' }
        if (escaped === undefined || !(escaped in map)) return undefined
        value += map[escaped]
      } else if (char === '"') {
        quoted = !quoted
      } else {
        value += char
      }
    }
    return quoted ? undefined : value
  }
}
