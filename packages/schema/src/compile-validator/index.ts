// Only these names are public; the other files are the compiler's internals.
export { compileValidator, type CompileOptions } from './compile-validator'
export { formatIssues } from './format-issues'
export { issueMessage } from './issue-message'
export type { ExpectedValue, IssueDetail, IssueKind, ShownValue, ValidationIssue, ValidationResult, Validator } from './validation'
