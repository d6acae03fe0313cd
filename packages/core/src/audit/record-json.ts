import { TOOL_STATUSES } from '../tool-result'
import type { AuditRecord } from './audit-record'

const STATUSES: ReadonlySet<string> = new Set(TOOL_STATUSES)

/**
 * How the log made a batch's records, by batch: for each, the arguments' JSON made while
 * finishing it (to check its length; `undefined` where none was made) and whether the
 * finisher built the record from a call's draft (its keys are then in a known order, which
 * `finishedLine` writes without looking them up). A file store reads it; others ignore it.
 */
export interface PreparedBatch {
  readonly argsJson: readonly (string | undefined)[]
  readonly fromDraft: readonly boolean[]
}
export const preparedBatches = new WeakMap<readonly AuditRecord[], PreparedBatch>()

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
    if (typeof value === 'number') json = numberJson(value)
    else if (typeof value === 'string') json = stringJson(value)
    else if ((key === 'caller' || key === 'decided') && value && typeof value === 'object') json = shared(value)
    else if (key === 'args' && argsJson !== undefined) json = argsJson
    else json = JSON.stringify(value)
    if (json === undefined) continue
    let head = keyJson.get(key)
    if (head === undefined) keyJson.set(key, head = `,${JSON.stringify(key)}:`)
    line += line ? head + json : `{${head.slice(1)}${json}`
  }
  return line ? `${line}}` : '{}'
}

/**
 * The line of a record the finisher built from a call's draft: the same bytes as `lineOf`,
 * written field by field in the order `RecordFinisher.finish` sets them, with no key
 * lookups (a record's serialization was a third of what auditing cost a call).
 */
export function finishedLine(record: AuditRecord, argsJson: string | undefined): string {
  // The finisher's ids are its prefix and a base-36 counter; outcomes are `ToolStatus` words.
  let line = '{"id":"' + record.id + '","at":' + numberJson(record.at)
  if (record.early === true) line += ',"early":true'
  line += ',"endedAt":' + numberJson(record.endedAt) + ',"tool":' + nameJson(record.tool) + ',"callId":' + stringJson(record.callId)
    + ',"caller":' + shared(record.caller) + ',"outcome":' + (STATUSES.has(record.outcome) ? '"' + record.outcome + '"' : stringJson(record.outcome)) + ',"durationMs":' + numberJson(record.durationMs)
  if (record.count !== undefined) line += ',"count":' + numberJson(record.count)
  if (record.decided !== undefined) line += ',"decided":' + shared(record.decided)
  if (record.ask !== undefined) line += ',"ask":' + JSON.stringify(record.ask)
  if (record.code !== undefined) line += ',"code":' + stringJson(record.code)
  if (record.reason !== undefined) line += ',"reason":' + stringJson(record.reason)
  if (record.taskId !== undefined) line += ',"taskId":' + stringJson(record.taskId)
  if (record.waitMs !== undefined) line += ',"waitMs":' + numberJson(record.waitMs)
  if (record.repaired !== undefined) line += ',"repaired":' + JSON.stringify(record.repaired)
  if (record.resumes !== undefined) line += ',"resumes":' + JSON.stringify(record.resumes)
  if (record.args !== undefined) {
    const json = argsJson ?? JSON.stringify(record.args)
    if (json !== undefined) line += ',"args":' + json
  } else if (record.argsHash !== undefined) line += ',"argsHash":' + stringJson(record.argsHash)
  return line + '}'
}

/** Characters JSON never escapes: such a string is its own JSON between quotes (the common id or name). */
const PLAIN = /^[\w .:@/+-]*$/

function stringJson(value: string): string {
  return value.length <= 64 && PLAIN.test(value) ? '"' + value + '"' : JSON.stringify(value)
}

/** Tool names repeat from record to record: their JSON is kept (for a bounded number of them). */
const names = new Map<string, string>()

function nameJson(name: string): string {
  let json = names.get(name)
  if (json === undefined) {
    json = stringJson(name)
    if (names.size < 1024) names.set(name, json)
  }
  return json
}

function numberJson(value: number): string {
  return Number.isFinite(value) ? '' + value : 'null'
}

function shared(value: object): string {
  let json = sharedJson.get(value)
  if (json === undefined) sharedJson.set(value, json = JSON.stringify(value))
  return json
}
