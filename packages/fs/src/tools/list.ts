import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import type { EntryKind } from '../checked-path'
import { readDirectory } from '../fs-backend'
import { type FsContext, expectPermitted, permissionFor } from '../fs-context'

const SUFFIX: Record<EntryKind, string> = { file: '', directory: '/', symlink: '@', other: '?' }

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  path: Schema.string().description('Directory, relative to the working directory (default: the working directory)'),
  offset: Schema.natural().default(0).description('Zero-based entry to start at'),
  limit: Schema.natural().min(1).max(2000).default(200).description('Most entries to return (1-2000)'),
})

/** The `list` tool: one directory level, sorted, paged. */
export function listTool(context: FsContext) {
  const { resolver } = context
  return defineTool({
    name: `${context.prefix}list`,
    description: 'List one directory level, sorted by name. Directories end with "/", symbolic links with "@", other special files with "?". Page with offset/limit.',
    args: Args,
    permission: permissionFor(context, 'fs.read'),
    traits: { effect: 'read', timeout: 30_000, background: false },
    async run({ path, offset, limit }, call) {
      const dir = expectPermitted(context, call, await resolver.resolve(path || '.', call.session, { access: 'read', intent: 'existing', expect: 'directory' }))
      const all = await readDirectory(dir)
      const page = all.slice(offset, offset + limit)
      const lines = page.map((entry) => entry.name + SUFFIX[entry.kind])
      if (!all.length) lines.push(`[${dir.display} is empty]`)
      else if (!page.length) lines.push(`[offset ${offset} is past the end: ${dir.display} has ${all.length} entries]`)
      else if (offset > 0 || page.length < all.length) {
        const more = offset + page.length < all.length ? `; continue with offset=${offset + page.length}` : ''
        lines.push(`[entries ${offset + 1}-${offset + page.length} of ${all.length}${more}]`)
      }
      return { text: lines.join('\n'), data: { path: dir.display, total: all.length, offset, entries: page } }
    },
  })
}
