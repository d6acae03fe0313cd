// Just enough YAML to read the provider profiles in the corpora folder (block mappings and
// sequences, plain/quoted scalars, folded `>` text); anything else throws.

interface Line {
  indent: number
  text: string
}

export function parseYaml(source: string): unknown {
  const lines: Line[] = []
  for (const raw of source.split(/\r?\n/)) {
    const text = raw.trimStart()
    if (!text || text.startsWith('#')) continue
    lines.push({ indent: raw.length - text.length, text: text.trimEnd() })
  }
  let index = 0

  const scalar = (text: string): unknown => {
    if (text.startsWith('"')) return JSON.parse(text)
    if (text.startsWith("'")) return text.slice(1, -1).replaceAll("''", "'")
    if (text === 'true' || text === 'false') return text === 'true'
    if (text === 'null' || text === '~') return null
    if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text)
    if (/^[[{&*!|]/.test(text)) throw new Error(`unsupported YAML: ${text}`)
    return text
  }

  const folded = (indent: number) => {
    const parts: string[] = []
    while (index < lines.length && lines[index].indent > indent) parts.push(lines[index++].text)
    return parts.join(' ') + '\n'
  }

  const value = (rest: string, indent: number): unknown => {
    if (rest === '>' || rest === '>-') return folded(indent)
    if (rest) return scalar(rest)
    const next = lines[index]
    if (!next || next.indent < indent || (next.indent === indent && !next.text.startsWith('- '))) return null
    return block(next.indent)
  }

  const block = (indent: number): unknown => {
    if (lines[index].text.startsWith('- ')) {
      const list: unknown[] = []
      while (index < lines.length && lines[index].indent === indent && lines[index].text.startsWith('- ')) {
        const content = lines[index].text.slice(2).trimStart()
        if (/^("[^"]*"|[^\s"'][^:]*):(\s|$)/.test(content)) {
          // "- key: value" opens a mapping whose keys sit two columns further in
          lines[index] = { indent: indent + 2, text: content }
          list.push(block(indent + 2))
        } else {
          index++
          list.push(value(content, indent))
        }
      }
      return list
    }
    const map: Record<string, unknown> = {}
    while (index < lines.length && lines[index].indent === indent && !lines[index].text.startsWith('- ')) {
      const match = /^("[^"]*"|[^\s"'][^:]*):(?:\s+(.*))?$/.exec(lines[index].text)
      if (!match) throw new Error(`unsupported YAML line: ${lines[index].text}`)
      index++
      const key = match[1].startsWith('"') ? JSON.parse(match[1]) : match[1]
      map[key] = value(match[2] ?? '', indent)
    }
    return map
  }

  const result = block(lines[0].indent)
  if (index !== lines.length) throw new Error(`unparsed YAML from: ${lines[index].text}`)
  return result
}
