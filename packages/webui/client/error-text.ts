import { useI18n } from 'vue-i18n'
import { useMessages } from './messages'
import { TransportError } from './transport'

/**
 * What a failed request says to the person, in the page's language. A refusal the console
 * coded (`TransportError.code`: a `ConsoleError` code, or Koishi's console's `LOGIN`) reads
 * as the locale's `errors.<code>`; in English the server's own message, which names the
 * tool, question or field, except for `LOGIN`, whose message is the console's bare
 * `unauthorized`. Anything else shows its message as it came.
 */
export function useErrorText() {
  const { t, te, locale } = useI18n()
  return (error: unknown): string => {
    const message = error instanceof Error ? error.message : String(error)
    if (!(error instanceof TransportError) || !te(`errors.${error.code}`)) return message
    if (locale.value === 'en-US' && error.code !== 'LOGIN' && message) return message
    return t(`errors.${error.code}`)
  }
}

/** Codes whose message is the validation's account of the values: which path is wrong, and how. */
const DETAILED = new Set(['INVALID_EDIT', 'INVALID_FORM'])

/**
 * `useErrorText` for why an answer was refused (an edit, a form): the validation's own words
 * for values it refused (the path matters), else the coded text.
 */
export function useRefusalText() {
  const errorText = useErrorText()
  const messages = useMessages()
  return (error: unknown): string => {
    if (!(error instanceof TransportError) || !DETAILED.has(error.code)) return errorText(error)
    // In the page's language when the console sent why in its structured form.
    if (error.refusal) return messages.revision(error.refusal)
    return error.message || errorText(error)
  }
}
