import { type IssueDetail, issueMessage, type ShownValue, type ValidationIssue } from '@dogu/schema'
import type { ArgumentProblem } from './result-params'
import { type FoundSecret, findSecrets, replaceSecrets, SECRET_MASK, type SecretPaths, secretTexts } from './secret-fields'

/** Shorter secrets are hidden by their place only: a two-letter one would be masked inside every number. */
const MIN_MATCHED_LENGTH = 4
const GOT = /^([\s\S]*?)(\(got |got )[\s\S]*$/
const SECRET: ShownValue = Object.freeze({ type: 'secret' })

/**
 * Validation problems with no secret value in them: the result of a call whose arguments
 * failed validation goes to the model, the logs, the `tools/call-end` event and the audit
 * log. A problem at or below a secret field says what was expected, not what it got
 * (`got ••••`); any other problem has each secret the call carries (`findSecrets`) replaced
 * where it quotes one, whole or cut, in case the model put a secret in another field too.
 * The parameters are masked alike, and the message is their English again.
 */
export function maskIssues(issues: readonly ValidationIssue[], found: readonly FoundSecret[]): ValidationIssue[] {
  if (!found.length) return [...issues]
  const texts = secretTexts(found)
  const matched = texts.filter((text) => text.length >= MIN_MATCHED_LENGTH)
  return issues.map((issue) => {
    const atSecret = found.some(({ path }) => issue.path === path || issue.path.startsWith(`${path}.`) || issue.path.startsWith(`${path}[`))
    const detail = atSecret ? maskAtSecret(issue, texts) : maskDetail(issue, (text) => replaceSecrets(text, matched))
    return { ...detail, path: issue.path, message: issueMessage(detail) } as ValidationIssue
  })
}

/** A problem about a secret field itself: the expectation stays, the value goes. */
function maskAtSecret(detail: IssueDetail, texts: readonly string[]): IssueDetail {
  if (detail.kind === 'other') {
    const got = GOT.exec(detail.params.message)
    const message = got ? `${got[1]}${got[2]}${SECRET_MASK}${got[2].startsWith('(') ? ')' : ''}` : replaceSecrets(detail.params.message, texts)
    return { kind: 'other', params: { message } }
  }
  return maskDetail(detail, (text) => text, true)
}

/** `detail` with `mask` applied to each text it quotes, and every value it got hidden when `hideGot`. */
function maskDetail(detail: IssueDetail, mask: (text: string) => string, hideGot = false): IssueDetail {
  const params = { ...detail.params } as Record<string, unknown>
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'string') params[key] = mask(value)
    else if (Array.isArray(value)) params[key] = value.map((item) => typeof item === 'string' ? mask(item) : item)
  }
  if ('got' in params) params.got = hideGot ? SECRET : maskShown(params.got as ShownValue, mask)
  if (detail.kind === 'property_name') params.problem = maskDetail(detail.params.problem, mask, hideGot)
  return { kind: detail.kind, params } as IssueDetail
}

function maskShown(value: ShownValue, mask: (text: string) => string): ShownValue {
  return 'text' in value ? { ...value, text: mask(value.text) } : value
}

/** The problems of `value` (arguments that failed validation), with the secrets it holds masked (`maskIssues`), without their English. */
export function maskedProblems(issues: ValidationIssue[], value: unknown, paths: SecretPaths | undefined): ArgumentProblem[] {
  const masked = paths ? maskIssues(issues, findSecrets(value, paths)) : issues
  return masked.map(({ message: _, ...problem }) => problem as ArgumentProblem)
}

/**
 * A `JSON.parse` message without the excerpt of the text V8 quotes, nor the token, which may
 * be a letter of a secret (`Unexpected token '}', ..."k-live-42" }" is not valid JSON`): for
 * a tool with secret fields, whose arguments did not parse, so where a secret lies cannot be known.
 */
export function withoutQuotedText(message: string): string {
  return message.replace(/Unexpected token '[\s\S]', (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON/, 'Unexpected token: where, and the text around it, is not shown, as the tool has secret fields')
}
