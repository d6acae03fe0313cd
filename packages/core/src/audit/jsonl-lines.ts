import type { Logger } from '../logger'
import type { AuditRecord } from './audit-record'

/** `node:fs`, loaded when first needed: the core still loads in a browser. */
export type NodeFs = typeof import('node:fs')

let fsModule: NodeFs | undefined
export async function nodeFs(): Promise<NodeFs> {
  if (!fsModule) {
    const builtin = (globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined)?.getBuiltinModule
    fsModule = (builtin?.('node:fs') as NodeFs | undefined) ?? await import('node:fs')
  }
  return fsModule
}

/** A line as retention sees it. */
export interface Line {
  id: string | undefined
  at: number
  early: boolean
  text: string
}

/** What a file's lines gave: the records (when parsed), every good line, and how many did not parse. */
export interface FileLines {
  records: AuditRecord[]
  lines: Line[]
  bad: number
}

const HEAD = /^\{"id":"([^"\\]*)","at":(\d+),("early":true,)?/

/**
 * Reads a file's lines; `parse` also gives the records (else only each line's id, time and
 * mark, read cheaply). Bad lines are reported once per file (`reported` counts them).
 */
export async function readLines(file: string, parse: boolean, reported: Map<string, number>, logger: Logger): Promise<FileLines> {
  const fs = await nodeFs()
  let text: string
  try {
    text = await fs.promises.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], lines: [], bad: 0 }
    throw error
  }
  const lines = text.split('\n')
  const records: AuditRecord[] = []
  const good: Line[] = []
  let bad = 0
  let torn = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!line.trim()) continue
    // Lines the store wrote start `{"id":"…","at":<n>,` and, for early records,
    // `"early":true,`: retention needs only that. There, the mark cannot be a value the
    // model chose (an argument of that name comes later in the line).
    const head = parse ? null : HEAD.exec(line)
    if (head && line.endsWith('}')) {
      good.push({ id: head[1], at: Number(head[2]), early: head[3] !== undefined, text: line })
      continue
    }
    try {
      const record = JSON.parse(line)
      if (record && typeof record === 'object' && typeof record.at === 'number' && typeof record.tool === 'string') {
        records.push(record)
        good.push({ id: typeof record.id === 'string' ? record.id : undefined, at: record.at, early: record.early === true, text: line })
        continue
      }
    } catch {}
    bad++
    // The last line with no newline after it: a write cut short.
    if (i === lines.length - 1) torn = true
  }
  if (bad > (reported.get(file) ?? 0)) {
    logger.warn(torn && bad === 1
      ? 'skipped a torn last line of audit log %s (a write cut short); the records before it are intact'
      : 'skipped %d unreadable line(s) of audit log %s', ...(torn && bad === 1 ? [file] : [bad, file]))
    reported.set(file, bad)
  }
  return { records, lines: good, bad }
}

/** The items whose id was not seen before (a merge cut short leaves records in two files). */
export function distinct<T extends { id?: unknown }>(items: T[]): T[] {
  const seen = new Set<unknown>()
  return items.filter((item) => {
    if (item.id === undefined) return true
    if (seen.has(item.id)) return false
    seen.add(item.id)
    return true
  })
}

/** Whether a file ends with a newline (or is empty or missing): read synchronously, one byte. */
export function endsWithNewline(fs: NodeFs, file: string): boolean {
  let fd: number
  try {
    fd = fs.openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true
    throw error
  }
  try {
    const { size } = fs.fstatSync(fd)
    if (!size) return true
    const byte = Buffer.alloc(1)
    fs.readSync(fd, byte, 0, 1, size - 1)
    return byte[0] === 0x0a
  } finally {
    fs.closeSync(fd)
  }
}
