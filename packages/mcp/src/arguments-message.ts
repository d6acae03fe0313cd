/** The most problems of one call a short arguments message names. */
export const ARGUMENT_PROBLEMS_SHOWN = 3
/** The most characters of one line of it: a union's `expected …` can run long. */
const LINE_CHARS = 200
/** The most characters of a message that is not a list of problems (arguments that are not JSON). */
const TEXT_CHARS = 400

/**
 * The pipeline's `invalid_arguments` text cut to what a model acts on: the heading and
 * the first `ARGUMENT_PROBLEMS_SHOWN` problems (`- $.q: expected a string, got number 5`),
 * each line bounded, then how many more there are; any other text (arguments that are not
 * JSON) bounded to a few sentences.
 */
export function shortArgumentsMessage(content: string): string {
  const [heading, ...rest] = content.split('\n')
  const problems = rest.filter((line) => line.startsWith('- '))
  if (!problems.length) return cut(content.replace(/\s+/g, ' '), TEXT_CHARS)
  const shown = problems.slice(0, ARGUMENT_PROBLEMS_SHOWN).map((line) => cut(line, LINE_CHARS))
  const left = problems.length - shown.length
  if (left) shown.push(`- … and ${left} more problem${left === 1 ? '' : 's'}`)
  return [cut(heading, LINE_CHARS), ...shown].join('\n')
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
