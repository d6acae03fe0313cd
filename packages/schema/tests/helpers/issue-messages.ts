import type { ValidationResult } from '../../src'

/** A verdict with each issue cut to its path and English message: what these specs of the wording compare (issue-kinds.spec.ts checks `kind` and `params`). */
export function messagesOf(result: ValidationResult): ValidationResult | { ok: false; issues: { path: string; message: string }[] } {
  return result.ok ? result : { ok: false, issues: result.issues.map(({ path, message }) => ({ path, message })) }
}
