import type { IssueDetail } from '@dogu/schema'
import type { PermissionMode } from '../permissions/permission-modes'
import type { RepairStep } from '../repair/repair-step'
import type { ArgumentProblem, ResultParamsByCode, RevisionRefusal } from '../result-params'
import type { ToolResultCode, ToolStatus } from '../tool-result'
import type { AskScope } from '../types/approver'
import type { AskedFor, Denial, RuleCause } from '../types/denial'
import type { Effect } from '../types/effect'
import type { DurationOptions } from './format-duration-for'
import type { MessageLocale } from './message-locale'

export type { MessageLocale } from './message-locale'

/** Who proposed new arguments for a call: an approver's edit, or a middleware's rewrite. */
export type RevisionBy = 'edit' | 'middleware'

/**
 * One locale's wording of every message a result is told with: a table with an entry per
 * `code`, per denial cause, per problem kind. The en-US catalogue is the model's English
 * (what `content` says); the others render the same parameters for a person.
 */
export interface MessageCatalogue {
  readonly locale: MessageLocale
  /** One word per thing, for every view that names it (chat, consoles, these messages). */
  readonly terms: MessageTerms
  /** The whole message of each code, from its parameters. */
  readonly results: { readonly [C in keyof ResultParamsByCode]: (params: ResultParamsByCode[C]) => string }
  /** Why a call was denied (what follows "Permission denied: "). */
  denial(denial: Denial): string
  /** Why a rule, mode, default or grant decided as it did (an `AuthorizeResult.reason`), or why approval was asked. */
  decided(cause: RuleCause | AskedFor): string
  /** One validation problem, without its path. */
  problem(problem: IssueDetail): string
  /** One validation problem with its path (a line of an `invalid_arguments` message). */
  problemLine(problem: ArgumentProblem): string
  /** Why new arguments for a call were refused. */
  revision(refusal: RevisionRefusal, by: RevisionBy): string
  /** The note before the result of a call whose arguments were repaired. */
  repaired(steps: readonly RepairStep[]): string
  /** The note before the result of a call a person edited. */
  edited(changes: readonly string[]): string
  /** The marker a summary folds a long value (`characters`) or argument list (`arguments`) with: `[312 characters folded]`. */
  folded(count: number, unit: 'characters' | 'arguments'): string
  /** A duration in words. */
  duration(ms: number, options?: DurationOptions): string
}

/**
 * The names of the things results and permissions speak of, in one locale: a status, a code,
 * a permission mode, an effect, an approval's scope. One term per thing, so a chat and a
 * console say the same (`总是`, not `永久` in one of them).
 */
export interface MessageTerms {
  readonly status: Readonly<Record<ToolStatus, string>>
  readonly code: Readonly<Record<ToolResultCode, string>>
  readonly mode: Readonly<Record<PermissionMode, string>>
  readonly effect: Readonly<Record<Effect, string>>
  readonly scope: Readonly<Record<AskScope, string>>
  readonly repairStep: Readonly<Record<RepairStep, string>>
}
