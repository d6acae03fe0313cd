import type { ToolPreview } from '@dogu/core'
import { clipText } from './clip-text'

/** A preview's fields in the order a question shows them: the words first, the diff last. */
export const PREVIEW_FIELDS = ['text', 'command', 'url', 'diff'] as const
export type PreviewField = (typeof PREVIEW_FIELDS)[number]

/** How much of a preview a question shows; `d` / `详情` posts the rest. */
export const PREVIEW_SHOWN = Object.freeze({
  /** Characters of `text`, `command` and `url` each. */
  chars: 400,
  /** Lines of `text`. */
  textLines: 8,
  /** Lines of `diff`. */
  diffLines: 15,
  /** Characters of `diff`, over its shown lines. */
  diffChars: 1500,
})

/** The most characters one message of a whole preview holds (Discord's limit is 2000). */
export const DETAILS_MESSAGE_CHARS = 1800

/** One field as a question shows it; `hidden` is what it leaves out. */
export interface ShownField {
  field: PreviewField
  text: string
  hidden?: { lines: number } | { chars: number }
}

/** The part of each field a question shows, and whether anything is left for `d`. */
export function shownPreview(preview: Readonly<ToolPreview> | undefined): { fields: ShownField[]; cut: boolean } {
  const fields: ShownField[] = []
  for (const field of PREVIEW_FIELDS) {
    const value = preview?.[field]
    if (!value) continue
    fields.push(field === 'diff' ? shownLines(field, value, PREVIEW_SHOWN.diffLines, PREVIEW_SHOWN.diffChars)
      : field === 'text' ? shownLines(field, value, PREVIEW_SHOWN.textLines, PREVIEW_SHOWN.chars)
      : shownChars(field, value, PREVIEW_SHOWN.chars))
  }
  return { fields, cut: fields.some((field) => field.hidden) }
}

function shownChars(field: PreviewField, value: string, max: number): ShownField {
  const { text, cut } = clipText(value, max)
  return cut ? { field, text: text + '…', hidden: { chars: value.length - text.length } } : { field, text }
}

// Whole lines while they fit; a first line too long for the budget is cut inside.
function shownLines(field: PreviewField, value: string, maxLines: number, maxChars: number): ShownField {
  const lines = value.replace(/\n$/, '').split('\n')
  const kept: string[] = []
  let chars = 0
  for (const line of lines) {
    if (kept.length === maxLines || (kept.length && chars + line.length > maxChars)) break
    if (!kept.length && line.length > maxChars) return shownChars(field, value, maxChars)
    kept.push(line)
    chars += line.length + 1
  }
  const hidden = lines.length - kept.length
  return hidden ? { field, text: kept.join('\n'), hidden: { lines: hidden } } : { field, text: kept.join('\n') }
}

/**
 * A whole preview as chat messages of at most `size` characters each: every field under
 * its label, split between lines where it can be and inside a line only when one line
 * alone is too long. Nothing is left out.
 */
export function previewMessages(preview: Readonly<ToolPreview>, label: (field: PreviewField) => string, size = DETAILS_MESSAGE_CHARS): string[] {
  const lines: string[] = []
  for (const field of PREVIEW_FIELDS) {
    const value = preview[field]
    if (!value) continue
    lines.push(label(field))
    for (let line of value.replace(/\n$/, '').split('\n')) {
      while (line.length > size) {
        const { text } = clipText(line, size)
        lines.push(text)
        line = line.slice(text.length)
      }
      lines.push(line)
    }
  }
  const messages: string[] = []
  let current: string | undefined
  for (const line of lines) {
    if (current !== undefined && current.length + 1 + line.length > size) {
      messages.push(current)
      current = line
    } else {
      current = current === undefined ? line : `${current}\n${line}`
    }
  }
  if (current !== undefined) messages.push(current)
  return messages
}
