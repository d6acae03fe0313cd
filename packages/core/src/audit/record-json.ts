import type { AuditRecord } from './audit-record'

/**
 * The arguments' JSON of a batch's records, by batch, where the log made it while finishing
 * them (to check their length): a file store writes it instead of serializing them again.
 * Entries are `undefined` where the record has none or it was not made.
 */
export const preparedArgs = new WeakMap<readonly AuditRecord[], readonly (string | undefined)[]>()

/** JSON of the objects records share (a session's caller, a rule's decider), made once each. */
const sharedJson = new WeakMap<object, string>()
/** `,"key":` for each key seen. */
const keyJson = new Map<string, string>()

/**
 * A record's line: `JSON.stringify(record)`, to the byte, but the objects records share
 * (`caller`, `decided`: the log makes one per session and per rule) are serialized once
 * rather than per record, and `args` is taken from `argsJson` when given. Records are plain
 * JSON data.
 */
export function lineOf(record: AuditRecord, argsJson?: string): string {
  let line = ''
  for (const key in record) {
    const value = (record as unknown as Record<string, unknown>)[key]
    if (value === undefined || typeof value === 'function') continue
    let json: string
    if (typeof value === 'number') json = Number.isFinite(value) ? String(value) : 'null'
    else if (typeof value === 'string') json = JSON.stringify(value)
    else if ((key === 'caller' || key === 'decided') && value && typeof value === 'object') {
      json = sharedJson.get(value)!
      if (json === undefined) sharedJson.set(value, json = JSON.stringify(value))
    } else if (key === 'args' && argsJson !== undefined) json = argsJson
    else json = JSON.stringify(value)
    if (json === undefined) continue
    let head = keyJson.get(key)
    if (head === undefined) keyJson.set(key, head = `,${JSON.stringify(key)}:`)
    line += line ? head + json : `{${head.slice(1)}${json}`
  }
  return line ? `${line}}` : '{}'
}
