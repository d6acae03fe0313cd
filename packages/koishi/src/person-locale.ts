import { type MessageLocale, messageLocale } from '@dogu/core'
import type { Context, Session } from 'koishi'

/**
 * The locale of Dogu's message catalogue (`describeResult`, `describeRevision`) for text shown
 * beside the plugin's own messages of a locale section (`dogu.approvals`, `dogu.notices`):
 * the locale Koishi renders that section in for `locales`, in its fallback order (the
 * channel's and the user's, then `i18n.locales`). Each section names its own locale
 * (`locale: 'zh-CN'`), so a reply never mixes two languages.
 */
export function catalogueLocale(ctx: Context, locales: readonly string[], section: string): MessageLocale {
  return messageLocale(plain(ctx.i18n.render([...locales], [`${section}.locale`], {})))
}

/** `catalogueLocale` for a command's reply: the locale its messages (`.locale`) are rendered in for the session. */
export function commandLocale(session: Session): MessageLocale {
  return messageLocale(plain(session.i18n('.locale')))
}

function plain(elements: readonly { toString(strip?: boolean): string }[]): string {
  return elements.map((element) => element.toString(true)).join('')
}
