import { findSecrets, replaceSecrets, SECRET_MASK, type SecretPaths, secretTexts } from '../secret-fields'
import { lenientTokens } from './lenient-tokens'
import { FENCE, repairedFrom } from './repair-arguments'
import type { RepairRecord } from './repair-step'

/** What `from` says when its text cannot be masked string by string. */
export const UNMASKABLE_FROM = '(not shown: the arguments hold a secret field, and their text could not be masked string by string)'

/** Shorter secrets are masked where a string is the secret, not inside other strings. */
const MIN_MATCHED_LENGTH = 4
/** A JSON string holding JSON holding JSON: deeper than any repair reads. */
const MAX_DEPTH = 3

/**
 * The model's malformed arguments text with every secret value in it replaced by `••••`,
 * however it was written: the text is read into strings as the repair read it, and each
 * string is decoded before it is compared, so a secret spelled with escapes (`\u0073k-…`),
 * in other quotes, twice, inside a JSON string holding JSON, or in a comment is masked
 * too. `secrets` are the values the repaired arguments hold at their secret fields
 * (`secretTexts`). A text that cannot be read into strings is not shown at all.
 *
 * @example
 * maskRepairedText(`{key: '\\u0073k-live-1',}`, ['sk-live-1']) // "{key: '••••',}"
 */
export function maskRepairedText(text: string, secrets: readonly string[]): string {
  if (!secrets.length) return text
  return maskText(text, secrets, 0) ?? UNMASKABLE_FROM
}

/**
 * A repair's record with its `from` masked (`maskRepairedText`): the secrets are those
 * `values` (the repaired arguments, and them decoded) hold at the tool's secret fields, masked in the whole
 * text, which is then cut as a record keeps it (a cut never leaves a secret's start).
 */
export function maskRepairRecord(record: RepairRecord, text: string, values: readonly unknown[], paths: SecretPaths | undefined): RepairRecord {
  const secrets = paths ? secretTexts(values.flatMap((value) => findSecrets(value, paths))) : []
  if (!secrets.length) return record
  return { from: repairedFrom(maskRepairedText(text, secrets)), steps: record.steps }
}

function maskText(text: string, secrets: readonly string[], depth: number): string | undefined {
  const tokens = lenientTokens(text)
  if (!Array.isArray(tokens)) {
    const fence = FENCE.exec(text)
    if (!fence) return undefined
    const start = text.indexOf(fence[1])
    const inner = maskText(fence[1], secrets, depth)
    return inner === undefined ? undefined : text.slice(0, start) + inner + text.slice(start + fence[1].length)
  }
  const long = secrets.filter((secret) => secret.length >= MIN_MATCHED_LENGTH)
  let out = ''
  let from = 0
  const put = (at: number, end: number, replacement: string) => {
    out += text.slice(from, at) + replacement
    from = end
  }
  for (const token of tokens) {
    const written = text.slice(token.at, token.end)
    switch (token.kind) {
      case 'string': {
        const close = written[written.length - 1]
        if (secrets.includes(token.value)) {
          put(token.at, token.end, `${token.quote}${SECRET_MASK}${close}`)
          break
        }
        const trimmed = token.value.trim()
        // A JSON string holding the arguments: masked as a text of its own.
        let inner = (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('```')) && depth < MAX_DEPTH
          ? maskText(token.value, secrets, depth + 1)
          : token.value
        if (inner === undefined) return undefined
        inner = replaceSecrets(inner, long)
        if (inner !== token.value) put(token.at, token.end, JSON.stringify(inner))
        break
      }
      case 'number':
      case 'word':
        if (secrets.includes(token.text)) put(token.at, token.end, SECRET_MASK)
        break
      case 'comment': {
        const masked = replaceSecrets(written, long)
        if (masked !== written) put(token.at, token.end, masked)
        break
      }
    }
  }
  return out + text.slice(from)
}
