import { useI18n } from 'vue-i18n'

/**
 * The words for a status, outcome or kind the server sends as a keyword (`running`,
 * `limit_exceeded`, `call-end`…): `label('statuses', task.status)`. A keyword the locale
 * does not know yet shows as it came.
 */
export function useLabels() {
  const { t, te } = useI18n()
  return (group: string, key: string): string => te(`${group}.${key}`) ? t(`${group}.${key}`) : key
}
