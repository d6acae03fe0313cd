import { computed } from 'vue'
import { useI18n } from 'vue-i18n'
// The core's message catalogue, from its source: it imports nothing the browser lacks, where
// `@dogu/core`'s entry brings the Node-only stores along. One wording per thing, shared with
// the chat and with the model's English (`describe*` in en-US is what the model reads).
import { catalogueFor, describeProblem, describeResult, describeRevision, messageTerms } from '../../core/src/messages'
import type { ArgumentsRefusal, RevisionRefusal } from '../../core/src/result-params'
import type { ToolResult } from '../../core/src/tool-result'

export type { ArgumentsRefusal, RevisionRefusal }

/** What a validation problem carries: its path, kind and parameters (`ValidationIssue`, `ArgumentProblem`). */
export type Problem = Parameters<typeof describeProblem>[0] & { path: string }

/**
 * The core's words in the page's locale: the terms for statuses, codes, modes, effects and
 * scopes, and the sentences for a result, a validation problem, a refused edit and arguments
 * that do not parse.
 */
export function useMessages() {
  const { locale } = useI18n()
  const terms = computed(() => messageTerms(locale.value))
  return {
    terms,
    /** `$.limit: 必须 ≤ 5，实际是 99`: a problem with its path. */
    problem: (problem: Problem) => `${problem.path}${locale.value === 'zh-CN' ? '：' : ': '}${describeProblem(problem, locale.value)}`,
    /** A problem's text alone, without its path. */
    problemText: (problem: Problem) => describeProblem(problem, locale.value),
    /** What a person reads of a result (for en-US, the model's `content`). */
    result: (result: ToolResult) => describeResult(result, locale.value),
    revision: (refusal: RevisionRefusal) => describeRevision(refusal, locale.value),
    arguments: (refusal: ArgumentsRefusal) => catalogueFor(locale.value).results.invalid_arguments(refusal),
    /** The same refusal as the model reads it. */
    englishArguments: (refusal: ArgumentsRefusal) => catalogueFor('en-US').results.invalid_arguments(refusal),
  }
}
