import { minimatch, type MinimatchOptions } from 'minimatch'
import type { AuthorizeResult, Decision } from '../permission-gate'
import type { Session } from '../session'
import { compileCommandGlob } from './command-glob'
import { PermissionError } from './permission-error'
import type { PermissionRule, RuleCondition, RuleSource } from './permission-rule'
import { checkApprovers, freezeApprovers, names as namesApprovers } from './rule-approvers'
import { enUS } from '../messages/en-us'
import type { RuleCause } from '../types/denial'

/**
 * Permission names (`fs.write`, `deploy:run`) contain no `/`, so path semantics cost them
 * nothing; targets are paths or URLs, which need `dot` files and `//` kept as written.
 */
const GLOB: MinimatchOptions = { dot: true, nocomment: true, nonegate: true, preserveMultipleSlashes: true }
/** Characters that make a permission glob more than a literal. */
const MAGIC = /[*?[\]{}()!+@\\]/
const DECISIONS = new Set<Decision>(['allow', 'ask', 'deny'])
const LIST_FIELDS = ['users', 'channels', 'guilds', 'platforms'] as const
/** The built-in rule fields; a host's conditions add to them (`RuleCondition`). */
export const RULE_FIELDS: ReadonlySet<string> = new Set(['permission', 'target', 'command', ...LIST_FIELDS, 'authority', 'sandboxed', 'approvers', 'decision', 'name'])

let ruleCounter = 0

/** A rule with its globs compiled once, ready for the index. */
export interface CompiledRule {
  readonly id: string
  readonly decision: Decision
  /** The permission name when the glob is a plain literal: indexed by exact name. */
  readonly exact?: string
  /** The literal text before the first glob character: indexed by prefix. */
  readonly prefix: string
  readonly source: RuleSource
  /** The result `authorize` returns when this rule decides, built once. */
  readonly result: Readonly<AuthorizeResult>
  /**
   * The rule names its own approvers: its questions are answered afresh every time, since
   * a remembered answer (given by the caller under another rule, say) is not theirs.
   */
  readonly ownApprovers: boolean
  matchName(name: string): boolean
  /**
   * Target and subject; the name already matched. `path` is the target with `.` and `..`
   * segments resolved (see `normalizeTarget`), for path globs; command globs see `target`.
   * `sandboxed` is the call's `PermissionSpec.sandboxed`, as the tool gave it. Facts about
   * the call are plain arguments, not an object, so the loop over candidates allocates
   * nothing; a later fact (who may answer an ask) is one more argument and one more check.
   */
  matchCall(session: Session, target: string | undefined, path: string | undefined, sandboxed: boolean | undefined): boolean
}

/**
 * Checks and compiles a rule. Throws `PermissionError('INVALID_RULE')` naming the field
 * and where the rule came from, so a typo in config fails at load, not at the first call.
 */
export function compileRule(rule: PermissionRule, origin: string, conditions?: ReadonlyMap<string, RuleCondition>): CompiledRule {
  const fail = (message: string): never => {
    throw new PermissionError('INVALID_RULE', `${origin}: ${message}`)
  }
  if (!rule || typeof rule !== 'object' || Array.isArray(rule)) fail('a rule must be an object like { permission, decision }')
  // A host's fields, with their values, in the rule's key order.
  const extra: [RuleCondition, unknown][] = []
  for (const key of Object.keys(rule)) {
    if (RULE_FIELDS.has(key)) continue
    const condition = conditions?.get(key)
    if (!condition) fail(`unknown field "${key}" (known: ${[...RULE_FIELDS, ...conditions?.keys() ?? []].join(', ')})`)
    const value = (rule as unknown as Record<string, unknown>)[key]
    if (value === undefined) continue
    const problem = condition!.check?.(value)
    if (problem) fail(`"${key}" ${problem}`)
    extra.push([condition!, value])
  }
  const { permission, target, command, decision, authority, sandboxed, name } = rule
  if (typeof permission !== 'string' || !permission.trim()) fail('"permission" must be a non-empty glob string, e.g. "tool:deploy" or "fs.*"')
  if (!DECISIONS.has(decision)) fail(`"decision" must be "allow", "ask" or "deny", got ${JSON.stringify(decision)}`)
  if (target !== undefined && (typeof target !== 'string' || !target)) fail('"target" must be a non-empty glob string when set')
  if (command !== undefined && (typeof command !== 'string' || !command)) fail('"command" must be a non-empty glob string when set')
  if (target !== undefined && command !== undefined) fail('set "target" (a path glob) or "command" (a command-line glob), not both')
  if (authority !== undefined && !(typeof authority === 'number' && authority >= 0 && Number.isFinite(authority))) fail('"authority" must be a number ≥ 0 when set')
  if (sandboxed !== undefined && typeof sandboxed !== 'boolean') fail(`"sandboxed" must be true or false when set, got ${JSON.stringify(sandboxed)}`)
  if (name !== undefined && typeof name !== 'string') fail('"name" must be a string when set')
  if (rule.approvers !== undefined) {
    const problem = checkApprovers(rule.approvers, decision)
    if (problem) fail(problem)
  }
  const lists: Partial<Record<typeof LIST_FIELDS[number], ReadonlySet<string>>> = {}
  for (const key of LIST_FIELDS) {
    const list = rule[key]
    if (list === undefined) continue
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || !item)) fail(`"${key}" must be an array of non-empty strings when set`)
    // Config forms give `[]` for a field left blank: an empty list does not narrow.
    if (list.length) lists[key] = new Set(list)
  }

  const nameRe = MAGIC.test(permission) ? makeRe(permission, fail, 'permission') : undefined
  // A target glob with whitespace is a command line (`*rm -rf*`, `POST https://x/*`), where
  // a path glob's `*` stopping at `/` would let a deny rule miss.
  const text = command ?? (target !== undefined && /\s/.test(target) ? target : undefined)
  const pathRe = target !== undefined && text === undefined ? makeRe(target, fail, 'target') : undefined
  const commandRe = text !== undefined ? compileCommandGlob(text) : undefined
  const { users, channels, guilds, platforms } = lists

  const frozen: PermissionRule = Object.freeze({
    ...rule,
    ...Object.fromEntries(LIST_FIELDS.filter((key) => rule[key]).map((key) => [key, Object.freeze([...rule[key]!])])),
    ...(rule.approvers ? { approvers: freezeApprovers(rule.approvers) } : {}),
  })
  const id = `rule_${++ruleCounter}`
  const source: RuleSource = Object.freeze({ kind: 'rule', id, rule: frozen, origin })
  const cause: RuleCause = Object.freeze({
    kind: 'rule', decision, permission, origin,
    ...(name ? { name } : {}), ...(target ? { target } : {}), ...(command ? { command } : {}), ...(sandboxed === undefined ? {} : { sandboxed }),
  })

  return {
    id,
    decision,
    exact: nameRe ? undefined : permission,
    prefix: nameRe ? permission.slice(0, permission.search(MAGIC)) : permission,
    source,
    result: Object.freeze({ decision, reason: enUS.decided(cause), cause, rule: source }),
    ownApprovers: namesApprovers(frozen.approvers),
    matchName: nameRe ? (value) => nameRe.test(value) : (value) => value === permission,
    matchCall(session, value, path, isSandboxed) {
      // Only `=== true` is a sandbox: `false`, unset and any junk a tool returns are not.
      if (sandboxed !== undefined && sandboxed !== (isSandboxed === true)) return false
      if (pathRe && (path === undefined || !pathRe.test(path))) return false
      if (commandRe && (value === undefined || !commandRe.test(value))) return false
      if (authority !== undefined && !((session.authority ?? 0) >= authority)) return false
      if (platforms && !(session.platform !== undefined && platforms.has(session.platform))) return false
      if (users && !inList(users, session.platform, session.userId)) return false
      if (channels && !inList(channels, session.platform, session.channelId)) return false
      if (guilds && !inList(guilds, session.platform, session.guildId)) return false
      for (const [condition, value] of extra) if (!condition.match(value, session, decision)) return false
      return true
    },
  }
}

// Rules repeat their globs (`src/**` for many users); a RegExp without flags is stateless.
const compiled = new Map<string, RegExp>()

function makeRe(pattern: string, fail: (message: string) => never, field: string): RegExp {
  let re = compiled.get(pattern)
  if (!re) {
    const made = minimatch.makeRe(pattern, GLOB)
    if (!made) fail(`"${field}" ${JSON.stringify(pattern)} is not a valid glob`)
    re = made as RegExp
    if (compiled.size >= 4096) compiled.clear()
    compiled.set(pattern, re)
  }
  return re
}

function inList(list: ReadonlySet<string>, platform: string | undefined, id: string | undefined): boolean {
  if (id === undefined) return false
  return list.has(id) || (platform !== undefined && list.has(`${platform}:${id}`))
}

const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/
/** `scheme://` anywhere: a URL, or a line holding one (`GET https://…`), not a file path. */
const URL_LIKE = /[A-Za-z][A-Za-z0-9+.-]*:\/\//

/**
 * The target path globs see. A file path (no `scheme://` in it) goes through
 * `normalizePathTarget`: `//`, `.` and `..` are folded, so `src//../secrets/x` meets the
 * rules for `secrets/x`. A target holding a URL keeps its slashes (URLs need `//`) and has
 * only its `.`/`..` segments resolved, as before; URL normalization is not done here. Path
 * folding only removes slashes, so a path never turns into something URL-like.
 */
export function normalizeTarget(target: string): string {
  return URL_LIKE.test(target) ? foldDotSegments(target) : normalizePathTarget(target)
}

/**
 * A file path folded lexically, as POSIX resolution would without links: repeated `/` are
 * one, `.` segments go, `..` removes the segment before it (`/..` is `/`), a trailing `/`
 * goes. A `..` that climbs above a relative start stays (`../x`), and path globs for the
 * workspace never match it. `''` stays `''`; a relative path that folds to nothing is `.`.
 */
export function normalizePathTarget(target: string): string {
  if (!target) return target
  const absolute = target.startsWith('/')
  const out: string[] = []
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop()
      else if (!absolute) out.push(part)
      continue
    }
    out.push(part)
  }
  const path = out.join('/')
  return absolute ? `/${path}` : path || '.'
}

/**
 * Resolves `.` and `..` segments lexically, so `https://h/a/../b` meets the rules for
 * `https://h/b`. Repeated slashes stay; a `..` that climbs above the start stays too.
 */
function foldDotSegments(target: string): string {
  if (!DOT_SEGMENT.test(target)) return target
  const out: string[] = []
  const parts = target.split('/')
  for (const part of parts) {
    if (part === '.') continue
    if (part === '..' && out.length && out[out.length - 1] !== '..' && out[out.length - 1] !== '') {
      out.pop()
      continue
    }
    out.push(part)
  }
  return out.join('/') || '.'
}
