import type { IssueDetail } from '@dogu/schema'
import type { ArgumentProblem, ResultMessage, RevisionRefusal } from '../result-params'
import type { ToolResult } from '../tool-result'
import type { Denial } from '../types/denial'
import type { MessageCatalogue, MessageLocale, MessageTerms, RevisionBy } from './catalogue'
import { enUS } from './en-us'
import { zhCN } from './zh-cn'

const CATALOGUES: Readonly<Record<MessageLocale, MessageCatalogue>> = Object.freeze({ 'en-US': enUS, 'zh-CN': zhCN })

/**
 * The catalogue's locale for a locale a host has (a Koishi session's `zh-CN`, a browser's
 * `zh-Hans-CN`, a list of them in preference order): the first that is Chinese or English
 * decides; anything else, or nothing, is `en-US`.
 */
export function messageLocale(locale?: string | readonly string[]): MessageLocale {
  for (const tag of typeof locale === 'string' ? [locale] : locale ?? []) {
    if (typeof tag !== 'string') continue
    const lower = tag.toLowerCase()
    if (lower === 'zh' || lower.startsWith('zh-') || lower.startsWith('zh_')) return 'zh-CN'
    if (lower === 'en' || lower.startsWith('en-') || lower.startsWith('en_')) return 'en-US'
  }
  return 'en-US'
}

/** The catalogue for a locale (see `messageLocale`). */
export function catalogueFor(locale?: string | readonly string[]): MessageCatalogue {
  return CATALOGUES[messageLocale(locale)]
}

/** The words for statuses, codes, modes, effects and scopes in a locale. */
export function messageTerms(locale?: string | readonly string[]): MessageTerms {
  return catalogueFor(locale).terms
}

/**
 * A result's `code` with its `params`, as one value whose `switch (message.code)` the compiler
 * checks is exhaustive; `undefined` for a result without both (an `ok` one, one a middleware made).
 */
export function resultMessage(result: Pick<ToolResult, 'code' | 'params'>): ResultMessage | undefined {
  if (!result?.code || !result.params) return undefined
  return { code: result.code, params: result.params } as ResultMessage
}

/** Codes of calls refused before they were prepared: their `content` has no notes, even when the arguments were repaired. */
const UNPREPARED = new Set(['unknown_tool', 'invalid_arguments'])

/**
 * What a person reads of a result, in their locale: rendered from its `status`, `code` and
 * `params`, with the notes its `content` starts with (the arguments were repaired, a person
 * edited them). For `en-US` it is the text the model read (`content`, before the cut to
 * `maxContentLength`). A result without `params` (an `ok` one, one a middleware made) is its
 * `content`, the notes rendered. A tool's own words (its output, its error message, its
 * `call.deny` reason) are shown as written.
 *
 * @example
 * describeResult(result, 'zh-CN') // '权限被拒绝：mock:alice 拒绝了'
 */
export function describeResult(result: ToolResult, locale?: string | readonly string[]): string {
  return renderResult(result, catalogueFor(locale))
}

/** `describeResult` with a catalogue. */
export function renderResult(result: ToolResult, catalogue: MessageCatalogue): string {
  const notes = notesOf(result, catalogue)
  const message = resultMessage(result)
  if (message) {
    const body = (catalogue.results[message.code] as (params: unknown) => string)(message.params)
    return notes.length ? [...notes, body].join('\n\n') : body
  }
  if (!notes.length) return result.content
  // The model read the same notes in English before the tool's own text.
  const english = notesOf(result, enUS).join('\n\n') + '\n\n'
  const own = result.content.startsWith(english) ? result.content.slice(english.length) : result.content
  return [...notes, own].join('\n\n')
}

function notesOf(result: ToolResult, catalogue: MessageCatalogue): string[] {
  const notes: string[] = []
  if (result.repaired && !(result.code && UNPREPARED.has(result.code))) notes.push(catalogue.repaired(result.repaired.steps))
  if (result.edits?.length && result.status !== 'denied') notes.push(catalogue.edited(result.edits))
  return notes
}

/**
 * One validation problem in a locale, without its path: for `en-US` the issue's `message`
 * (`must be one of "staging", "prod" (got "dev")`).
 */
export function describeProblem(problem: IssueDetail | ArgumentProblem, locale?: string | readonly string[]): string {
  return catalogueFor(locale).problem(problem)
}

/** Why a call was denied, in a locale: for `en-US` the decision's `reason`. */
export function describeDenial(denial: Denial, locale?: string | readonly string[]): string {
  return catalogueFor(locale).denial(denial)
}

/** Why an approver's edit (`by: 'edit'`, the default) or a middleware's rewrite was refused, in a locale. */
export function describeRevision(refusal: RevisionRefusal, locale?: string | readonly string[], by: RevisionBy = 'edit'): string {
  return catalogueFor(locale).revision(refusal, by)
}
