import type { Decision } from '../types/decision'
import type { Session } from '../session'

/**
 * One permission rule, as written in config or passed to `ctx.permissions.rule()`.
 * Every field but `permission` and `decision` narrows the rule; a rule matches a call
 * when all of its fields match.
 *
 * @example
 * // Only admins may deploy to prod; everybody else is asked.
 * { permission: 'deploy:run', target: 'prod', authority: 4, decision: 'allow' }
 * { permission: 'deploy:run', decision: 'ask' }
 */
export interface PermissionRule {
  /** A glob over permission names (`tool:deploy`, `fs.*`, `deploy:*`). */
  permission: string
  /**
   * A glob over the call's target. Without whitespace it is a path glob (minimatch: `*`
   * stops at `/`, `**` crosses it, `.`/`..` segments of the target are resolved first):
   * `src/**`, `prod`, `https://api.example.com/**`. With whitespace it is a command-line
   * glob like `command`: `*rm -rf*`, `POST https://api.example.com/*`. A rule with a
   * target never matches a call without one.
   */
  target?: string
  /**
   * A command-line glob over the call's target, where `*` matches any run of characters,
   * `/` and spaces included, `?` one character and `\` escapes: `git status*`, `rm *`.
   * Exclusive with `target`; use it for command lines, where a path glob could miss.
   */
  command?: string
  /** User ids (`123`) or platform-qualified ids (`discord:123`). An empty list, like a missing one, does not narrow. */
  users?: string[]
  /** Channel ids, plain or platform-qualified. */
  channels?: string[]
  /** Guild ids, plain or platform-qualified. */
  guilds?: string[]
  platforms?: string[]
  /** Minimum session authority (Koishi: 1 user, 4 admin, 5 owner). A session without one counts as 0. */
  authority?: number
  /**
   * Whether the call runs inside an OS sandbox (`PermissionSpec.sandboxed`). `true` matches
   * only calls whose tool says `sandboxed: true`; `false` matches every other call, those
   * that say `false` and those that say nothing, so a deny rule cannot miss a tool that
   * never set the flag.
   *
   * @example
   * // Sandboxed shell commands run without asking; the rest are asked as before.
   * { permission: 'shell', sandboxed: true, decision: 'allow' }
   */
  sandboxed?: boolean
  /**
   * Who may answer the questions this rule asks (`ask` rules only), instead of the engine's
   * `approvers` (`approverAuthority`, `callerMayApprove`). See `RuleApprovers`.
   *
   * @example
   * // Deploys to prod are asked of the ops team, never of the caller.
   * { permission: 'deploy:run', target: 'prod', decision: 'ask', approvers: { users: ['discord:42'], permissions: ['dogu.ops'], caller: false } }
   */
  approvers?: RuleApprovers
  decision: Decision
  /** A label for audit logs and denial messages. */
  name?: string
}

/** A compiled rule and where it came from: what decided a call, when a rule did. */
export interface RuleSource {
  kind: 'rule'
  id: string
  rule: Readonly<PermissionRule>
  /** Where the rule came from: `config.rules[2]`, `plugin "ops"`. */
  origin: string
}

/**
 * Who may answer an `ask` rule's questions. Anyone who meets **one** of `users`, `authority`
 * and `permissions` may answer; when the rule names none of them (or only `caller`), the
 * engine's `approvers.authority` still applies. Empty lists (what a config form leaves
 * behind) name nobody, like missing ones.
 */
export interface RuleApprovers {
  /** User ids (`42`, any platform) or platform-qualified ids (`discord:42`, that platform only). */
  users?: string[]
  /** Anyone at or above this authority (Koishi: 1 user, 4 admin, 5 owner). */
  authority?: number
  /**
   * Host permission names (Koishi: `authority:3`, `dogu.ops`). Only the host can test them:
   * a person counts when the asker that reports their answer attests they hold one
   * (`Approver.permissions`).
   */
  permissions?: string[]
  /**
   * Whether the caller may answer their own request, as the caller. `false` does not bar a
   * caller who is also among `users`, `authority` or `permissions`.
   * @default the engine's `approvers.caller` (`callerMayApprove`)
   */
  caller?: boolean
}

/**
 * A rule field a host adds, beside the built-in ones (Koishi adds `koishiPermission`).
 * `authorize` is synchronous, so `match` reads only what the host put into the session
 * before the call (an async host check is resolved into the session first, not here).
 *
 * @example
 * new PermissionEngine({
 *   conditions: {
 *     role: {
 *       check: (value) => typeof value === 'string' ? undefined : 'must be a role name',
 *       match: (value, session) => (session as { roles?: string[] }).roles?.includes(value as string) ?? false,
 *     },
 *   },
 * })
 */
export interface RuleCondition {
  /** Checks the field's value when a rule is compiled: a problem (`must be a string`), or nothing. */
  check?(value: unknown): string | undefined
  /**
   * Whether the field holds for the call's session. `decision` is the rule's own, for a
   * host that must decide what a fact it could not establish means (deny and ask rules
   * match, allow rules do not, is the cautious answer).
   */
  match(value: unknown, session: Session, decision: Decision): boolean
}
