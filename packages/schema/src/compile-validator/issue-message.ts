import { describeShown, previewShown } from './values'
import type { ExpectedValue, IssueDetail } from './validation'

/**
 * A validation problem in English, as the model reads it (`ValidationIssue.message`): the
 * one place each kind's English wording lives. `@dogu/core`'s en-US catalogue renders
 * problems with it; other locales render `kind` and `params` their own way.
 *
 * @example
 * issueMessage({ kind: 'enum', params: { options: ['"staging"', '"prod"'], got: { type: 'string', text: '"dev"' } } })
 * // 'must be one of "staging", "prod" (got "dev")'
 */
export function issueMessage(detail: IssueDetail): string {
  switch (detail.kind) {
    case 'required': return detail.params.property ? 'missing required property' : 'missing required value'
    case 'type': return `${expectedText(detail.params.expected)}, got ${describeShown(detail.params.got)}`
    case 'enum': return `must be one of ${detail.params.options.join(', ')} (got ${previewShown(detail.params.got)})`
    case 'flag': return `expected one of ${detail.params.options.join(', ')}, got ${describeShown(detail.params.got)}`
    case 'pattern': return `must match the pattern ${detail.params.pattern} (got ${previewShown(detail.params.got)})`
    case 'max': return `expected a number <= ${detail.params.limit}, got ${previewShown(detail.params.got)}`
    case 'min': return `expected a number >= ${detail.params.limit}, got ${previewShown(detail.params.got)}`
    case 'step': {
      const { step, from, got } = detail.params
      const expected = step === 1 ? 'expected an integer' : `expected a multiple of ${Math.abs(step)}${from ? ` counting from ${from}` : ''}`
      return `${expected}, got ${previewShown(got)}`
    }
    case 'max_length': return `expected at most ${detail.params.limit} ${detail.params.unit}, got ${previewShown(detail.params.got)}`
    case 'min_length': return `expected at least ${detail.params.limit} ${detail.params.unit}, got ${previewShown(detail.params.got)}`
    case 'property_name': return `invalid property name ${detail.params.name}: ${issueMessage(detail.params.problem)}`
    case 'unknown_field': return `unknown property: not allowed here (got ${describeShown(detail.params.got)})`
    case 'convert': return `could not convert the value (${detail.params.error}), got ${describeShown(detail.params.got)}`
    case 'other': return detail.params.message
  }
}

const KIND_TEXT: Record<Extract<ExpectedValue, { type: string }>['type'], string> = {
  object: 'expected an object',
  array: 'expected an array',
  string: 'expected a string',
  number: 'expected a number',
  boolean: 'expected a boolean',
  function: 'expected a function',
  nothing: 'expected no value',
  flags: 'expected a number or an array of flag names',
}

function expectedText(expected: ExpectedValue): string {
  if ('type' in expected) return KIND_TEXT[expected.type]
  if ('instanceOf' in expected) return `expected a ${expected.instanceOf}`
  if ('constant' in expected) return `expected ${expected.constant}`
  if ('schema' in expected) return `expected ${expected.schema}`
  return `expected a valid ${expected.role}`
}
