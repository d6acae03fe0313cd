import { type MessageLocale, type PermissionSpec, summarizeArgs } from '@dogu/core'

/** What a question or a kept record says of its call: the tool, its (masked) arguments, its permission, and its en-US summary. */
export interface SummarizedCall {
  tool: string
  args?: unknown
  permission: Pick<PermissionSpec, 'name' | 'target'>
  summary: string
}

const shown = new WeakMap<object, Map<MessageLocale, string>>()

/**
 * A call's one-line summary (`deploy(env=prod) — deploy:run "prod"`) with its folds worded in
 * `locale` (`… [已折叠 312 个字符] …`). The engine's `summary` is en-US; it is made again from
 * the arguments only when it is the engine's own (`summarizeArgs` of them), else shown as it is.
 */
export function summaryIn(call: Readonly<SummarizedCall>, locale: MessageLocale): string {
  if (locale === 'en-US' || call.args === undefined) return call.summary
  let byLocale = shown.get(call)
  const known = byLocale?.get(locale)
  if (known !== undefined) return known
  // As the engine made it: the permission follows only when it names a target.
  const permission = call.permission?.target === undefined ? undefined : call.permission
  const text = summarizeArgs(call.tool, call.args, permission) === call.summary
    ? summarizeArgs(call.tool, call.args, permission, { locale })
    : call.summary
  if (!byLocale) shown.set(call, byLocale = new Map())
  byLocale.set(locale, text)
  return text
}
