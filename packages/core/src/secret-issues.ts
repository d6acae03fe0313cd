import { formatIssues, type ValidationIssue } from '@dogu/schema'
import { type FoundSecret, findSecrets, replaceSecrets, SECRET_MASK, type SecretPaths, secretTexts } from './secret-fields'

/** Shorter secrets are hidden by their place only: a two-letter one would be masked inside every number. */
const MIN_MATCHED_LENGTH = 4
const GOT = /^([\s\S]*?)(\(got |got )[\s\S]*$/

/**
 * Validation problems with no secret value in them: the result of a call whose arguments
 * failed validation goes to the model, the logs, the `tools/call-end` event and the audit
 * log. A problem at or below a secret field says what was expected, not what it got
 * (`got ••••`); any other problem has each secret the call carries (`findSecrets`) replaced
 * where it quotes one, whole or cut, in case the model put a secret in another field too.
 */
export function maskIssues(issues: readonly ValidationIssue[], found: readonly FoundSecret[]): ValidationIssue[] {
  if (!found.length) return [...issues]
  const texts = secretTexts(found)
  const matched = texts.filter((text) => text.length >= MIN_MATCHED_LENGTH)
  return issues.map((issue) => {
    const atSecret = found.some(({ path }) => issue.path === path || issue.path.startsWith(`${path}.`) || issue.path.startsWith(`${path}[`))
    return { ...issue, message: atSecret ? maskAtSecret(issue.message, texts) : replaceSecrets(issue.message, matched) }
  })
}

/** A problem about a secret field itself: the expectation stays, the value goes. */
function maskAtSecret(message: string, texts: readonly string[]): string {
  const got = GOT.exec(message)
  if (got) return `${got[1]}${got[2]}${SECRET_MASK}${got[2].startsWith('(') ? ')' : ''}`
  return replaceSecrets(message, texts)
}

/** `formatIssues` of the problems of `value` (arguments that failed validation), with the secrets it holds masked (`maskIssues`). */
export function formatMaskedIssues(issues: ValidationIssue[], value: unknown, paths: SecretPaths | undefined): string {
  return formatIssues(paths ? maskIssues(issues, findSecrets(value, paths)) : issues)
}

/**
 * A `JSON.parse` message without the excerpt of the text V8 quotes, nor the token, which may
 * be a letter of a secret (`Unexpected token '}', ..."k-live-42" }" is not valid JSON`): for
 * a tool with secret fields, whose arguments did not parse, so where a secret lies cannot be known.
 */
export function withoutQuotedText(message: string): string {
  return message.replace(/Unexpected token '[\s\S]', (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON/, 'Unexpected token: where, and the text around it, is not shown, as the tool has secret fields')
}
