import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { formatBytes } from '../fs-backend'
import { type FsContext, expectPermitted, permissionFor } from '../fs-context'
import { readLines } from '../read-lines'

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  path: Schema.string().required().description('File path, relative to the working directory'),
  offset: Schema.natural().default(0).description('Zero-based line to start at'),
  limit: Schema.natural().min(1).max(2000).description('Most lines to return (1-2000); the rest of the file when omitted'),
})

/** The `read` tool: a UTF-8 text file, whole or a page of lines. */
export function readTool(context: FsContext) {
  const { resolver, limits } = context
  return defineTool({
    name: `${context.prefix}read`,
    description: `Read a UTF-8 text file. Returns its text as is (no line numbers). Use offset/limit to page through a long file. At most ${formatBytes(limits.readBytes)} of text per call; binary files are refused.`,
    args: Args,
    permission: permissionFor(context, 'fs.read'),
    traits: { effect: 'read', timeout: 30_000, background: false },
    async run({ path, offset, limit }, call) {
      const file = expectPermitted(context, call, await resolver.resolve(path, call.session, { access: 'read', intent: 'existing', expect: 'file' }))
      const read = await readLines(file, { offset, limit, maxBytes: limits.readBytes })
      const notes: string[] = []
      const first = offset + 1
      const last = offset + read.count
      if (read.total !== undefined && offset >= read.total && read.total > 0) {
        notes.push(`[offset ${offset} is past the end: ${file.display} has ${read.total} lines]`)
      } else if (read.stoppedBy === 'limit') {
        notes.push(`[lines ${first}-${last}; more follow: continue with offset=${last}]`)
      } else if (read.stoppedBy === 'bytes') {
        notes.push(read.cut
          ? `[line ${first} is longer than ${formatBytes(limits.readBytes)} and was cut]`
          : `[stopped at the ${formatBytes(limits.readBytes)} limit after line ${last}; continue with offset=${last}]`)
      } else if (offset > 0 && read.count) {
        notes.push(`[lines ${first}-${last} of ${read.total}]`)
      } else if (read.total === 0) {
        notes.push('[empty file]')
      }
      const text = notes.length ? (read.text && !read.text.endsWith('\n') ? `${read.text}\n` : read.text) + notes.join('\n') : read.text
      return {
        text,
        data: {
          path: file.display,
          offset,
          lines: read.count,
          totalLines: read.total,
          size: read.size,
          truncated: read.stoppedBy !== undefined,
        },
      }
    },
  })
}
