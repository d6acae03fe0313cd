import type { MessageCatalogue } from '../messages/catalogue'
import { catalogueFor } from '../messages/describe-result'
import type { MessageLocale } from '../messages/message-locale'
import type { PermissionSpec } from '../types/effect'

/** Characters a value keeps when it has the whole budget to itself. */
const MAX_VALUE = 120
/** The least a value keeps however many arguments share the budget. */
const MIN_VALUE = 24
/** Characters of values the argument list keeps in all. */
const MAX_TOTAL = 320
/** Characters of the permission target kept. */
const MAX_TARGET = 200
const MAX_KEY = 40
/** Arguments kept from each end of a longer list. */
const KEEP_ARGS = 6

/**
 * A one-line human summary of a call for permission prompts: `deploy(env=prod)`,
 * `write_file(path=src/a.ts, content="line1\nline2")`. With the permission, the target it
 * asks about follows: `bash(command="rm -rf build") — shell.exec "rm -rf build"`.
 *
 * Nothing is cut from the end: a long value, target or argument list is folded in the
 * middle, and the fold says how much it hides, so the head and the tail (where
 * `… && curl x | sh` would be) always show:
 * `bash(command="npm test -- --rep … [312 characters folded] … && curl x | sh")`.
 * Control, format (bidirectional overrides, zero-width) and line-separator characters are
 * written as `\u{…}` escapes, so a value cannot reorder or hide its own text. The fold is
 * worded in `locale` (`[已折叠 312 个字符]` in zh-CN); `PermissionRequest.summary` is en-US.
 */
export function summarizeArgs(tool: string, args: unknown, permission?: Pick<PermissionSpec, 'name' | 'target'>, options: { locale?: MessageLocale | string } = {}): string {
  const words = catalogueFor(options.locale)
  const call = `${visible(tool)}(${argumentList(args, words)})`
  if (!permission || typeof permission.name !== 'string') return call
  const target = typeof permission.target === 'string' ? ` ${quote(permission.target, MAX_TARGET, words)}` : ''
  return `${call} — ${visible(permission.name)}${target}`
}

function argumentList(args: unknown, words: MessageCatalogue): string {
  if (args === undefined) return ''
  if (!args || typeof args !== 'object' || Array.isArray(args)) return render(args, MAX_VALUE, words)
  const entries = Object.entries(args).filter(([, item]) => item !== undefined)
  const budget = Math.max(MIN_VALUE, Math.min(MAX_VALUE, Math.floor(MAX_TOTAL / Math.max(1, Math.min(entries.length, 2 * KEEP_ARGS)))))
  // A key that is not a plain word is quoted, so it cannot pass for `, other=…` or a target.
  const parts = entries.map(([key, item]) => `${/^[\w.-]+$/.test(key) ? fold(key, MAX_KEY, words) : quote(key, MAX_KEY, words)}=${render(item, budget, words)}`)
  if (parts.length <= 2 * KEEP_ARGS + 1) return parts.join(', ')
  const hidden = parts.length - 2 * KEEP_ARGS
  return [...parts.slice(0, KEEP_ARGS), `… ${words.folded(hidden, 'arguments')} …`, ...parts.slice(-KEEP_ARGS)].join(', ')
}

/** A value as the prompt shows it: a plain word bare, other strings quoted, the rest as JSON. */
function render(item: unknown, budget: number, words: MessageCatalogue): string {
  if (typeof item === 'string') return /^[\w./:@-]+$/.test(item) ? fold(item, budget, words) : quote(item, budget, words)
  let text: string
  try {
    text = JSON.stringify(item) ?? String(item)
  } catch {
    text = String(item)
  }
  return fold(visible(text), budget, words)
}

/** A string in double quotes, folded in the middle, escaped as JSON and beyond. */
function quote(text: string, budget: number, words: MessageCatalogue): string {
  const chars = Array.from(text)
  if (chars.length <= budget) return escape(text)
  const { head, tail, folded } = split(chars, budget)
  return `${escape(head).slice(0, -1)} … ${words.folded(folded, 'characters')} … ${escape(tail).slice(1)}`
}

/** Text (already escaped) folded in the middle when it is longer than `budget`. */
function fold(text: string, budget: number, words: MessageCatalogue): string {
  const chars = Array.from(text)
  if (chars.length <= budget) return text
  const { head, tail, folded } = split(chars, budget)
  return `${head} … ${words.folded(folded, 'characters')} … ${tail}`
}

function split(chars: string[], budget: number) {
  const head = Math.floor(budget / 2)
  const tail = budget - head
  return { head: chars.slice(0, head).join(''), tail: chars.slice(chars.length - tail).join(''), folded: chars.length - head - tail }
}

// Cc: controls; Cf: format (bidi overrides and isolates, zero-width); Zl, Zp: line and
// paragraph separators. JSON.stringify escapes only the C0 controls among them.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

function escape(text: string): string {
  return visible(JSON.stringify(text))
}

function visible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`)
}
