import type { ValidationIssue } from './validation'

/**
 * Formats issues as one message a model can act on, one line per bad path.
 *
 * @example
 * formatIssues([{ path: '$.count', message: 'expected a number, got string "3"' }])
 * // 'Invalid arguments:\n- $.count: expected a number, got string "3"'
 */
export function formatIssues(issues: ValidationIssue[]): string {
  return ['Invalid arguments:', ...issues.map(({ path, message }) => `- ${path}: ${message}`)].join('\n')
}
