import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { commitChange, lineCounts, readReplaceable } from '../commit-change'
import { FsError } from '../errors'
import type { TextFile } from '../fs-backend'
import { type FsContext, expectPermitted, permissionFor } from '../fs-context'
import { previewChange } from '../preview-change'
import { expectPreviewed } from '../previewed-file'

// A module-level schema: `run`'s argument types are inferred from it.
const Args = Schema.object({
  path: Schema.string().required().description('File path, relative to the working directory'),
  oldText: Schema.string().required().description('The exact text to replace (empty only to create a new file)'),
  newText: Schema.string().required().description('The replacement text'),
})

/** The `edit` tool: replace one exact occurrence of a text in a file. */
export function editTool(context: FsContext) {
  const { resolver, locks } = context
  return defineTool({
    name: `${context.prefix}edit`,
    description: 'Replace one exact occurrence of oldText with newText in a UTF-8 text file. oldText must occur exactly once, whitespace and indentation included; add surrounding lines to make it unique. An empty oldText creates a new file with newText as its content.',
    args: Args,
    permission: permissionFor(context, 'fs.write'),
    traits: { effect: 'write', timeout: 30_000, background: false },
    // The diff the call would apply, through the same path checks as `run`; never writes.
    preview: ({ path, oldText, newText }, call) => {
      if (oldText && oldText === newText) return { text: `${call.name} will be refused (NO_CHANGE): oldText and newText are the same; nothing to edit. Nothing would be written.` }
      const intent = oldText === '' ? 'create' : 'existing'
      return previewChange(
        context,
        call,
        path,
        () => resolver.resolve(path, call.session, { access: 'write', intent, expect: 'file' }).then((file) => expectPermitted(context, call, file)),
        (prior, file) => editedText(prior, oldText, newText, file.display),
      )
    },
    async run({ path, oldText, newText }, call) {
      if (oldText && oldText === newText) {
        throw new FsError('NO_CHANGE', 'oldText and newText are the same; nothing to edit')
      }
      const creating = oldText === ''
      const file = expectPermitted(context, call, await resolver.resolve(path, call.session, { access: 'write', intent: creating ? 'create' : 'existing', expect: 'file' }))
      return locks.run(file.target, async () => {
        const prior = await readReplaceable(context, file, 'edit')
        expectPreviewed(call, path, file, prior)
        const next = editedText(prior, oldText, newText, file.display)
        const change = await commitChange(context, file, prior, next, call)
        return {
          text: creating ? `Created ${file.display}.` : `Edited ${file.display}: ${lineCounts(change)}.`,
          data: { path: file.display, status: creating ? 'created' : 'edited', changeId: change.id, added: change.added, removed: change.removed },
          artifacts: [change],
        }
      })
    },
  })
}

/** The file's text after replacing the one `oldText` by `newText` (an empty `oldText` creates it); throws as the tool fails. */
function editedText(prior: TextFile | null, oldText: string, newText: string, display: string): string {
  if (oldText === '') {
    if (prior) throw new FsError('EXISTS', `${display} already exists; an empty oldText only creates new files. Give the exact text to replace, or use write to replace the whole file.`)
    return newText
  }
  if (!prior) throw new FsError('NOT_FOUND', `${display} does not exist`)
  const at = prior.text.indexOf(oldText)
  if (at === -1) {
    throw new FsError('NO_MATCH', `oldText was not found in ${display}. Read the file again and copy the text exactly, whitespace and indentation included.`)
  }
  if (prior.text.indexOf(oldText, at + 1) !== -1) {
    throw new FsError('AMBIGUOUS', `oldText occurs ${countOccurrences(prior.text, oldText)} times in ${display}; include more surrounding lines so it occurs exactly once.`)
  }
  return prior.text.slice(0, at) + newText + prior.text.slice(at + oldText.length)
}

/** Occurrences, overlapping ones included. */
function countOccurrences(text: string, part: string): number {
  let count = 0
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + 1)) count++
  return count
}
