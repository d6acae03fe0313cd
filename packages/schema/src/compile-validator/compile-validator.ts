import type Schema from 'schemastery'
import { combinatorCompilers } from './combinators'
import { Compiler, type Compile } from './compiler'
import { formatPath, type Run } from './run'
import { scalarCompilers } from './scalars'
import { structureCompilers } from './structures'
import { issueMessage } from './issue-message'
import type { ValidationIssue, Validator } from './validation'

/** Options for {@link compileValidator}. */
export interface CompileOptions {
  /**
   * Treat `null` like an absent value, so an optional property's default applies and a
   * required one is reported missing. Strict-mode models send `null` for optional
   * properties. This is schemastery's own behaviour; `false` makes `null` an ordinary
   * value that only `any`, `const(null)` and similar accept.
   * @default true
   */
  nullAsAbsent?: boolean
  /**
   * Generate objects' checks as code (`new Function`), several times faster than closures.
   * `false` for a page whose Content-Security-Policy forbids code generation: it would fall
   * back to closures anyway, but the browser reports each refused attempt.
   * @default true
   */
  codegen?: boolean
}

// One compiler per schemastery type; any other type is left to schemastery itself.
const compilers: Record<string, Compile> = {
  ...scalarCompilers,
  ...structureCompilers,
  ...combinatorCompilers,
}

/**
 * Compiles a schemastery schema into a validator whose verdict and output equal `schema(input)`,
 * but which reports every invalid path instead of the first. Compile once per schema.
 *
 * @example
 * const validate = compileValidator(Schema.object({ env: Schema.union(['staging', 'prod']).required() }))
 * validate({ env: 'dev' })
 * // { ok: false, issues: [{ path: '$.env', message: 'must be one of "staging", "prod" (got "dev")' }] }
 */
export function compileValidator<S = any, T = S>(schema: Schema<S, T>, options: CompileOptions = {}): Validator<T> {
  const root = new Compiler(compilers, options.nullAsAbsent ?? true, options.codegen ?? true).node(schema, false)
  let idle: Run | undefined = { issues: undefined, n: 0, quiet: 0 }
  return (input) => {
    // a transform callback may validate again while we run; it gets its own state
    const run = idle ?? { issues: undefined, n: 0, quiet: 0 }
    idle = undefined
    run.n = 0
    run.quiet = 0
    run.issues = undefined
    try {
      const value = root(input, run)
      if (run.n === 0) return { ok: true, value }
      return { ok: false, issues: run.issues!.map(({ segs, detail }) => ({ ...detail, path: formatPath(segs), message: issueMessage(detail) }) as ValidationIssue) }
    } catch (error) {
      // only a throwing getter or callback outside a transform gets here
      const message = String((error as any)?.message ?? error)
      return { ok: false, issues: [{ path: '$', message, kind: 'other', params: { message } }] }
    } finally {
      idle = run
    }
  }
}
