/** How much of each deferred tool `tool_search`'s description lists. */
export type SummaryStyle = 'names' | 'brief' | 'none'

/** A one-line description is cut here; the full one comes with `tool_search`'s results. */
const BRIEF_LENGTH = 100

/** Each frozen tool's brief line: a toolset in search mode is built per request, its tools rarely change. */
const briefLines = new WeakMap<object, string>()

/**
 * The compact list of deferred tools that goes into `tool_search`'s description:
 * `names` (comma-separated), `brief` (one line each: name and the first sentence of its
 * description) or `none` (only how many there are).
 *
 * @example
 * summarizeTools([{ name: 'get_weather', description: 'Weather for a city. Uses …' }], 'brief')
 * // '- get_weather: Weather for a city.'
 */
export function summarizeTools(tools: readonly { name: string; description: string }[], style: SummaryStyle): string {
  if (!tools.length || style === 'none') return ''
  if (style === 'names') return tools.map((tool) => tool.name).join(', ')
  return tools.map(briefLine).join('\n')
}

function briefLine(tool: { name: string; description: string }): string {
  let line = briefLines.get(tool)
  if (line === undefined) {
    const brief = briefDescription(tool.description)
    line = brief ? `- ${tool.name}: ${brief}` : `- ${tool.name}`
    // A record that may still change is summarized afresh every time.
    if (Object.isFrozen(tool)) briefLines.set(tool, line)
  }
  return line
}

/** The first sentence of a description, on one line and at most `BRIEF_LENGTH` characters. */
export function briefDescription(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim()
  // A sentence ends at . ! ? followed by a space, or at a CJK full stop.
  const end = flat.search(/[.!?](?=\s)|[。！？]/)
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat
  return sentence.length > BRIEF_LENGTH ? sentence.slice(0, BRIEF_LENGTH - 1).trimEnd() + '…' : sentence
}
