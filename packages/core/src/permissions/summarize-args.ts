const MAX_VALUE = 40
const MAX_TOTAL = 160

/**
 * A one-line human summary of a call for permission prompts: `deploy(env=prod)`,
 * `write_file(path=src/a.ts, content="line1\nline2…")`. Long values are cut.
 */
export function summarizeArgs(tool: string, args: unknown): string {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return `${tool}(${args === undefined ? '' : cut(value(args))})`
  const parts: string[] = []
  for (const [key, item] of Object.entries(args)) {
    if (item === undefined) continue
    parts.push(`${key}=${cut(value(item))}`)
  }
  const inner = parts.join(', ')
  return `${tool}(${inner.length > MAX_TOTAL ? inner.slice(0, MAX_TOTAL - 1) + '…' : inner})`
}

function value(item: unknown): string {
  if (typeof item === 'string') return /^[\w./:@-]+$/.test(item) ? item : JSON.stringify(item)
  try {
    return JSON.stringify(item) ?? String(item)
  } catch {
    return String(item)
  }
}

function cut(text: string): string {
  return text.length > MAX_VALUE ? text.slice(0, MAX_VALUE - 1) + '…' : text
}
