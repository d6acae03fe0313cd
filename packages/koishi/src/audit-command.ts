import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { type AuditFilter, type AuditRecord, messageTerms, TOOL_STATUSES, type ToolStatus } from '@dogu/core'
import type { Context, Session as KoishiSession } from 'koishi'
import { defineLocales } from './locales'
import { commandLocale } from './person-locale'
// For the `ctx.audit` declaration this command reads.
import type {} from './audit-service'

export interface AuditCommandConfig {
  /** The lowest authority `dogu.audit` needs. @default 3 (as `dogu.grants` and `dogu.revoke`) */
  authority?: number
  /** Records shown without `-n`. @default 20 */
  listLimit?: number
}


/**
 * `dogu.audit [-u user] [-t tool] [-o outcome] [-n count] [--export]`: the newest audit
 * records, one line each (time, user, tool, outcome, what decided, who answered and how,
 * how long it waited and ran), for the bot's admins. `--export` writes the matching records,
 * oldest first, to `data/dogu/audit-export-<time>.jsonl` under Koishi's base directory.
 */
export function auditCommand(ctx: Context, config: AuditCommandConfig = {}): void {
  defineLocales(ctx, 'commands.dogu.audit', (locale) => locale.audit)
  const authority = config.authority ?? 3
  const listLimit = config.listLimit ?? 20

  ctx.command('dogu.audit', { authority })
    .option('user', '-u <user:string>')
    .option('tool', '-t <tool:string>')
    .option('outcome', '-o <outcome:string>')
    .option('count', '-n <count:string>')
    .option('export', '--export')
    // Without a database Koishi checks no authority: Dogu's own view of the caller decides then.
    .check(async ({ session }) => {
      // Dogu's permissions service is part of the Dogu plugin; loaded alone, Koishi's check stands.
      if (typeof ctx.permissions.resolveSession !== 'function') return
      const { authority: held = 0 } = await ctx.permissions.resolveSession(session!)
      if (held < authority) return session!.text('internal.low-authority')
    })
    .action(async ({ session, options }) => {
      const audit = ctx.audit
      if (!audit.enabled) return session!.text('.disabled')
      const filter: AuditFilter = {}
      if (options!.user) filter.user = String(options!.user)
      if (options!.tool) filter.tool = String(options!.tool)
      if (options!.outcome !== undefined) {
        const outcome = String(options!.outcome)
        if (!TOOL_STATUSES.includes(outcome as ToolStatus)) return session!.text('.bad-outcome', { outcome, outcomes: TOOL_STATUSES.join(', ') })
        filter.outcome = outcome as ToolStatus
      }
      let count: number | undefined
      if (options!.count !== undefined) {
        const text = String(options!.count).trim()
        count = /^\d+$/.test(text) ? Number(text) : NaN
        if (!(count >= 1)) return session!.text('.bad-count', { count: text })
      }
      if (options!.export) {
        // The newest `count` when given, else every match; oldest first, as `export` gives them.
        const records = count === undefined ? await audit.export(filter) : (await audit.query({ ...filter, limit: count })).reverse()
        const dir = resolve(ctx.baseDir ?? process.cwd(), 'data/dogu')
        const path = join(dir, `audit-export-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`)
        await mkdir(dir, { recursive: true })
        await writeFile(path, records.map((record) => JSON.stringify(record) + '\n').join(''), { mode: 0o600 })
        return session!.text('.exported', { count: records.length, path })
      }
      const records = await audit.query({ ...filter, limit: count ?? listLimit })
      if (!records.length) return session!.text('.none')
      return [session!.text('.header', { count: records.length }), ...records.map((record) => line(session!, record))].join('\n')
    })
}

/** One record, compactly: `12-01 18:20:31 discord:alice save: ok · rule … · alice answered allow (button) · waited 1.2 s, ran 5 ms`. */
function line(session: KoishiSession, record: AuditRecord): string {
  const { caller, ask } = record
  const user = caller.userId === undefined ? caller.sessionId || '?' : caller.platform ? `${caller.platform}:${caller.userId}` : caller.userId
  const parts = [session.text('.item', {
    time: timeOf(record.at),
    user,
    tool: record.tool,
    outcome: session.i18n(`.outcome.${record.outcome}`),
  })]
  // Calls nobody authorized, coalesced: how many, in place of what decided.
  // An answer after a restart (`permissions.durable`): the ask it answers, in place of a check no rule made now.
  const resumed = record.resumes && (record.resumes.askedAt !== undefined ? session.text('.resumed', { time: timeOf(record.resumes.askedAt) }) : session.text('.resumed-unknown'))
  parts.push(record.early
    ? session.text(`${record.code === 'unknown_tool' ? '.early.unknown' : '.early.other'}${(record.count ?? 1) > 1 ? '' : '-one'}`, { count: record.count ?? 1, tool: record.tool, code: record.code ?? record.outcome })
    : resumed && !record.decided ? resumed : decidedText(session, record))
  if (resumed && record.decided) parts.push(resumed)
  if (ask) {
    if (ask.ended === 'answer') {
      const by = ask.by ? (ask.by.platform ? `${ask.by.platform}:${ask.by.id}` : ask.by.id) : '?'
      const decision = session.i18n(`.decision.${ask.decision}`)
      const answered = ask.via ? session.text('.answered-via', { by, decision, via: viaText(session, ask.via) }) : session.text('.answered', { by, decision })
      parts.push(ask.edited ? answered + session.text('.edited') : answered)
    } else if (ask.ended === 'elsewhere' && ask.elsewhere?.by && ask.elsewhere.instance) {
      // Answered on another instance, which ran the call: its record has the answer in full.
      parts.push(session.text('.ended.elsewhere-by', ask.elsewhere))
    } else if (ask.ended === 'stopped' && record.reason?.startsWith(INTERRUPTED)) {
      // Stopped while waiting, its request kept: asked again after the restart.
      parts.push(session.text('.ended.interrupted'))
    } else {
      parts.push(session.text(`.ended.${ask.ended}`))
    }
  }
  const ran = session.text('.ran', { duration: durationText(session, record.durationMs) })
  parts.push(record.waitMs ? `${session.text('.waited', { duration: durationText(session, record.waitMs) })}${session.text('.and')}${ran}` : ran)
  return parts.join(' · ')
}

/** How the engine words a call whose kept request the stop cut off (`PermissionEngine.stop`). */
const INTERRUPTED = 'interrupted while waiting for approval'

/** What decided, in the reply's language: decisions, scopes, modes and effects by the chat's terms; a rule's name as written. */
function decidedText(session: KoishiSession, record: AuditRecord): string {
  const decided = record.decided
  const terms = messageTerms(commandLocale(session))
  switch (decided?.kind) {
    case 'rule': return session.text('.decided.rule', { rule: decided.name ?? decided.permission, decision: session.text(`.decision.${decided.decision}`), origin: decided.origin })
    case 'grant': return session.text('.decided.grant', { id: decided.id, scope: termOf(terms.scope, decided.scope) })
    case 'mode': return session.text('.decided.mode', { mode: termOf(terms.mode, decided.mode) })
    case 'default': return session.text('.decided.default', { effect: termOf(terms.effect, decided.effect) })
    case 'middleware': return session.text('.decided.middleware', { name: decided.name })
    case 'quota': return session.text('.decided.quota', { name: decided.name })
    default: return session.text('.decided.none')
  }
}

/** A term of the catalogue, or the word as recorded when it names none (a record from another version). */
function termOf<K extends string>(words: Readonly<Record<K, string>>, word: string): string {
  return Object.hasOwn(words, word) ? words[word as K] : word
}

/** Where an answer came from (`text`: 文字消息); a channel the locale does not name, as the asker gave it. */
function viaText(session: KoishiSession, via: string): string {
  return VIAS.has(via) ? session.text(`.via.${via}`) : via
}

/** The answer channels the locales word (`via.*`). */
const VIAS: ReadonlySet<string> = new Set(['text', 'button', 'console', 'mcp', 'terminal'])

function durationText(session: KoishiSession, ms: number): string {
  return ms < 1000 ? session.text('.ms', [Math.round(ms)]) : session.text('.s', [(ms / 1000).toFixed(1)])
}

/** `MM-DD HH:mm:ss` in the bot's local time. */
function timeOf(at: number): string {
  const date = new Date(at)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
}
