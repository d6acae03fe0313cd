import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { commitChange, lineCounts, readReplaceable } from '../commit-change'
import { FsError } from '../errors'
import { formatBytes } from '../fs-backend'
import { type FsContext, expectPermitted, permissionFor } from '../fs-context'
import { previewChange } from '../preview-change'
import { expectPreviewed } from '../previewed-file'

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  path: Schema.string().required().description('File path, relative to the working directory'),
  content: Schema.string().required().description('The complete new content of the file'),
})

/** The `write` tool: create a file, or replace a whole text file, atomically. */
export function writeTool(context: FsContext) {
  const { resolver, limits, locks } = context
  return defineTool({
    name: `${context.prefix}write`,
    description: `Write a whole UTF-8 text file: create it (and missing parent directories) or replace all of its content. For a small change to an existing file, use edit. At most ${formatBytes(limits.writeBytes)}.`,
    args: Args,
    permission: permissionFor(context, 'fs.write'),
    traits: { effect: 'write', timeout: 30_000, background: false },
    // The diff the call would apply, through the same path checks as `run`; never writes.
    preview: ({ path, content }, call) => previewChange(
      context,
      call,
      path,
      () => resolver.resolve(path, call.session, { access: 'write', intent: 'create', expect: 'file' }).then((file) => expectPermitted(context, call, file)),
      () => content,
    ),
    async run({ path, content }, call) {
      const size = Buffer.byteLength(content)
      if (size > limits.writeBytes) {
        throw new FsError('TOO_LARGE', `the content is ${formatBytes(size)}, over the ${formatBytes(limits.writeBytes)} limit for write`)
      }
      const file = expectPermitted(context, call, await resolver.resolve(path, call.session, { access: 'write', intent: 'create', expect: 'file' }))
      return locks.run(file.target, async () => {
        const prior = await readReplaceable(context, file, 'write')
        expectPreviewed(call, path, file, prior)
        if (prior?.text === content) {
          return { text: `No change: ${file.display} already has this content.`, data: { path: file.display, status: 'unchanged' } }
        }
        const change = await commitChange(context, file, prior, content, call)
        const status = prior ? 'overwritten' : 'created'
        const lines = content ? content.split('\n').length - (content.endsWith('\n') ? 1 : 0) : 0
        const text = prior ? `Overwrote ${file.display}: ${lineCounts(change)}.` : `Created ${file.display} (${lines} line${lines === 1 ? '' : 's'}).`
        return {
          text,
          data: { path: file.display, status, changeId: change.id, added: change.added, removed: change.removed },
          artifacts: [change],
        }
      })
    },
  })
}
