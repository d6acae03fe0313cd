import type { ToolPreview } from '@dogu/core'

// What a person was shown of a file when asked about a `write` or `edit` of it: read back
// from the preview itself (docs/fs-tools.md, Previews), never from the disk, which may have
// changed since. The harness's files are a few lines long, so a diff holds all of them.

/** The file as the preview showed it: its text, `null` (shown being created), `refused`, or `undefined` when the preview does not show all of it. */
export type ShownFile = string | null | 'refused' | undefined

export function shownFile(preview: Readonly<ToolPreview> | undefined, args: unknown): ShownFile {
  if (!preview) return undefined
  const text = preview.text ?? ''
  if (/ will be refused \(/.test(text)) return 'refused'
  // `write` of the content already there: the file is that content.
  if (text.startsWith('No change:')) {
    const content = (args as { content?: unknown } | undefined)?.content
    return typeof content === 'string' ? content : undefined
  }
  const lines = preview.diff?.split('\n')
  if (!lines?.length) return undefined
  if (lines[0] === '--- /dev/null') return null
  const hunks = lines.filter((line) => line.startsWith('@@ '))
  // One hunk from the first line, nothing folded: the whole file is in it.
  if (hunks.length !== 1 || !/^@@ -(1|0)[ ,]/.test(hunks[0]) || lines.some((line) => line.startsWith('… '))) return undefined
  let old = ''
  let last = ''
  for (const line of lines.slice(lines.indexOf(hunks[0]) + 1)) {
    // jsdiff marks the line before it as having no newline at the end.
    if (line.startsWith('\\')) {
      if (last === ' ' || last === '-') old = old.slice(0, -1)
      continue
    }
    last = line[0]
    if (last === ' ' || last === '-') old += `${line.slice(1)}\n`
  }
  return old
}
