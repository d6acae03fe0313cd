import { type AuditFilter, type AuditRecord, TOOL_STATUSES, type ToolStatus } from '@dogu/core'
import type { Context } from 'cordis'
import { mkdirSync, writeFileSync } from 'node:fs'
import { isAbsolute, join, relative } from 'node:path'
import { parseArgs } from 'node:util'
// For the `ctx.audit` declaration.
import type {} from '@dogu/cordis'

/** As `help` lists it: no longer than the longest usage there, so the list keeps its columns. */
export const AUDIT_USAGE = 'audit [-u user] [-t tool] [-o outcome]'


/** Records `audit` prints without `-n`, and the most it prints with one. */
const DEFAULT_COUNT = 20
const MAX_COUNT = 1000
/** The longest outcome (`rate_limited`): the tool names after it line up. */
const OUTCOME_WIDTH = Math.max(...TOOL_STATUSES.map((status) => status.length))

export interface AuditCommandScope {
  ctx: Context
  print(text: string): void
  /** Where `--export` writes: the playground's data folder. */
  dataDir: string
}

/**
 * `audit [-u user] [-t tool] [-o outcome] [-n count]`: the newest audit records, one line
 * each. `audit --export` (with the same filters, no count) writes every matching record,
 * oldest first, as JSON Lines under `<dataDir>/exports/`, and says where and how many.
 */
export async function auditCommand(args: string, { ctx, print, dataDir }: AuditCommandScope): Promise<void> {
  const usage = () => print(`Usage: audit [-u user] [-t tool] [-o outcome] [-n count], or audit --export [-u user] [-t tool] [-o outcome] (outcome: ${TOOL_STATUSES.join('|')}; count: 1-${MAX_COUNT}, default ${DEFAULT_COUNT})`)
  let values: { user?: string; tool?: string; outcome?: string; count?: string; export?: boolean }
  try {
    ({ values } = parseArgs({
      args: args.split(/\s+/).filter(Boolean),
      options: {
        user: { type: 'string', short: 'u' },
        tool: { type: 'string', short: 't' },
        outcome: { type: 'string', short: 'o' },
        count: { type: 'string', short: 'n' },
        export: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    print((error as Error).message)
    return usage()
  }
  if (values.outcome !== undefined && !TOOL_STATUSES.includes(values.outcome as ToolStatus)) {
    print(`Unknown outcome "${values.outcome}".`)
    return usage()
  }
  const count = values.count === undefined ? DEFAULT_COUNT : Number(values.count)
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    print(`-n takes a whole number from 1 to ${MAX_COUNT}, not "${values.count}".`)
    return usage()
  }
  if (values.export && values.count !== undefined) {
    print('--export writes every matching record: -n does not apply.')
    return usage()
  }
  const audit = ctx.get('audit')
  if (!audit) return print('The audit service is not loaded: nothing is recorded.')
  if (!audit.enabled) return print('Auditing is off (dogu.audit.enabled: false): nothing is recorded.')
  const filter: AuditFilter = {
    ...(values.user ? { user: values.user } : {}),
    ...(values.tool ? { tool: values.tool } : {}),
    ...(values.outcome ? { outcome: values.outcome as ToolStatus } : {}),
  }

  if (values.export) {
    const records = await audit.export(filter)
    const folder = join(dataDir, 'exports')
    mkdirSync(folder, { recursive: true })
    const file = uniqueFile(folder, `audit-${fileStamp(new Date())}`)
    writeFileSync(file, records.map((record) => JSON.stringify(record) + '\n').join(''))
    return print(`Exported ${records.length} audit record${records.length === 1 ? '' : 's'} (oldest first) to ${shown(file)}`)
  }

  const records = await audit.query({ ...filter, limit: count })
  if (!records.length) return print(Object.keys(filter).length ? 'No audit records match.' : 'No audit records yet.')
  print(`${records.length} audit record${records.length === 1 ? '' : 's'}, newest first:`)
  for (const record of records) print(describeRecord(record))
}

/**
 * One record on one line: when, outcome, tool, caller, what decided, the ask, the time taken.
 * `2026-12-01 18:24:07  denied        write  terminal:u1  default (write)  asked: deny by u1 via terminal, once  permission_denied  2.0 ms, waited 23 ms`
 */
export function describeRecord(record: AuditRecord): string {
  const { caller } = record
  const who = caller.userId ? (caller.platform ? `${caller.platform}:${caller.userId}` : caller.userId) : `session ${caller.sessionId}`
  const parts = [localTime(record.at), record.outcome.padEnd(OUTCOME_WIDTH), record.tool, who, decided(record)]
  if (record.ask) {
    const { ask } = record
    const answer = ask.ended === 'answer'
      ? `${ask.decision} by ${ask.by?.id ?? '?'}${ask.via ? ` via ${ask.via}` : ''}${ask.scope ? `, ${ask.scope}` : ''}${ask.edited ? ' (edited)' : ''}`
      : `${ask.ended}, ${ask.decision}`
    parts.push(`asked: ${answer}`)
  }
  if (record.code && record.outcome !== 'ok') parts.push(record.code)
  parts.push(`${record.durationMs.toFixed(1)} ms${record.waitMs !== undefined ? `, waited ${record.waitMs.toFixed(0)} ms` : ''}`)
  return parts.join('  ')
}

function decided(record: AuditRecord): string {
  const d = record.decided
  // A refusal before any permission check, coalesced: one line for a flood of them.
  if (record.early) return record.count && record.count > 1 ? `${record.count} calls, before any check` : 'before any check'
  switch (d?.kind) {
    case undefined: return 'no check'
    case 'rule': return `rule ${d.name ? `"${d.name}"` : d.id} (${d.origin}): ${d.decision}`
    // The id's start: enough to tell grants apart, as `grants` lists them.
    case 'grant': return `grant ${d.id.slice(0, 14)} (${d.scope})`
    case 'mode': return `mode ${d.mode}`
    case 'default': return `default (${d.effect})`
    case 'middleware': return `middleware "${d.name}": deny`
    case 'quota': return `quota "${d.name}": used up`
  }
}

const pad = (n: number) => String(n).padStart(2, '0')

/** `2026-12-01 13:40:02`, local time. */
function localTime(at: number): string {
  const date = new Date(at)
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** `20261201-134002`, local time: a file name that sorts by time. */
function fileStamp(date: Date): string {
  return `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`
}

/** `<folder>/<base>.jsonl`, or `<base>-2.jsonl`… when an export of the same second is there. */
function uniqueFile(folder: string, base: string): string {
  for (let n = 1; ; n++) {
    const file = join(folder, `${base}${n === 1 ? '' : `-${n}`}.jsonl`)
    try {
      writeFileSync(file, '', { flag: 'wx' })
      return file
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}

/** The path relative to the working directory when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}
