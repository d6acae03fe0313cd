import Schema from 'schemastery'
import { defineTool } from '@dogu/core'
import { commitChange, lineCounts, readReplaceable } from '../commit-change'
import { FsError } from '../errors'
import { type FsContext, expectPermitted, permissionFor } from '../fs-context'

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
    async run({ path, oldText, newText }, call) {
      if (oldText && oldText === newText) {
        throw new FsError('NO_CHANGE', 'oldText and newText are the same; nothing to edit')
      }
      const creating = oldText === ''
      const file = expectPermitted(context, call, await resolver.resolve(path, call.session, { access: 'write', intent: creating ? 'create' : 'existing', expect: 'file' }))
      return locks.run(file.target, async () => {
        const prior = await readReplaceable(context, file, 'edit')
        let next: string
        if (creating) {
          if (prior) throw new FsError('EXISTS', `${file.display} already exists; an empty oldText only creates new files. Give the exact text to replace, or use write to replace the whole file.`)
          next = newText
        } else {
          if (!prior) throw new FsError('NOT_FOUND', `${file.display} does not exist`)
          const at = prior.text.indexOf(oldText)
          if (at === -1) {
            throw new FsError('NO_MATCH', `oldText was not found in ${file.display}. Read the file again and copy the text exactly, whitespace and indentation included.`)
          }
          if (prior.text.indexOf(oldText, at + 1) !== -1) {
            throw new FsError('AMBIGUOUS', `oldText occurs ${countOccurrences(prior.text, oldText)} times in ${file.display}; include more surrounding lines so it occurs exactly once.`)
          }
          next = prior.text.slice(0, at) + newText + prior.text.slice(at + oldText.length)
        }
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

/** Occurrences, overlapping ones included. */
function countOccurrences(text: string, part: string): number {
  let count = 0
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + 1)) count++
  return count
}
