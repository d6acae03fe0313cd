/** One invalid spot in the input, phrased for a model to correct. */
export interface ValidationIssue {
  /** Where, from the root `$`: `$.a[0].b`. */
  path: string
  /** What is wrong: `expected a string, got number 3`. */
  message: string
}

/** The verdict of a {@link Validator}: the resolved value (defaults applied) or every issue found. */
export type ValidationResult<T = any> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }

/** A compiled schema: accepts and resolves exactly what `schema(input)` does, but reports every bad path. */
export type Validator<T = any> = (input: unknown) => ValidationResult<T>
