import { useI18n } from 'vue-i18n'
import { useMessages } from './messages'

/**
 * The groups whose words are the core's terms (`messageTerms`), shared with the chat and the
 * model's messages: one term per thing. Other groups (task statuses, log kinds…) are the
 * console's own messages.
 */
const CORE_TERMS = { statuses: 'status', codes: 'code', modes: 'mode', effects: 'effect', scopes: 'scope' } as const

/**
 * The words for a status, outcome or kind the server sends as a keyword (`running`,
 * `permission_denied`, `call-end`…): `label('statuses', task.status)`. A keyword neither the
 * core's terms nor the locale know shows as it came.
 */
export function useLabels() {
  const { t, te } = useI18n()
  const { terms } = useMessages()
  return (group: string, key: string): string => {
    const core = (CORE_TERMS as Record<string, keyof typeof terms.value | undefined>)[group]
    const word = core ? (terms.value[core] as Readonly<Record<string, string>>)[key] : undefined
    if (word !== undefined && Object.hasOwn(terms.value[core!], key)) return word
    return te(`${group}.${key}`) ? t(`${group}.${key}`) : key
  }
}
