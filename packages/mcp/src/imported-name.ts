import { createHash } from 'node:crypto'

const NAME_RULE = /^[a-zA-Z0-9_-]{1,64}$/
/** A server's name in config: it starts every imported tool's name. */
export const SERVER_NAME_RULE = /^[a-zA-Z0-9-]{1,32}$/

/**
 * The Dogu name of an MCP server's tool: `<server>_<tool>`, within Dogu's name rule.
 * Characters the rule refuses become `_`; a name over 64 characters keeps its first 55
 * and ends with a hash of the original, so two long names stay apart.
 *
 * @example importedName('fs', 'read.file') // 'fs_read_file'
 */
export function importedName(server: string, tool: string): string {
  const joined = `${server}_${tool}`
  if (NAME_RULE.test(joined)) return joined
  const safe = joined.replace(/[^a-zA-Z0-9_-]/g, '_')
  if (safe.length <= 64) return safe
  return `${safe.slice(0, 55)}_${createHash('sha256').update(joined).digest('hex').slice(0, 8)}`
}
