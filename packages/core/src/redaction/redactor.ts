import type { Logger } from '../logger'
import type { ToolResult } from '../tool-result'

/** The `redact` config: what is replaced with `[redacted]` in every result and progress line. */
export interface RedactOptions {
  /** Names of environment variables whose values are secrets. */
  env?: string[]
  /** Regular expressions (ECMAScript syntax, run on the linear-time engine) whose matches are secrets. */
  patterns?: string[]
  /** Redact the secrets Dogu itself holds (MCP headers and tokens, the console token). @default true */
  builtin?: boolean
}

/** STUB: filled in by the redaction work. */
export class Redactor {
  constructor(options: RedactOptions = {}, logger?: Logger) {
    void options
    void logger
  }

  /** True when there is anything to redact: the pipeline skips the redactor otherwise. */
  get active(): boolean {
    return false
  }

  /** Adds secret values Dogu holds (`builtin`); returns their disposer. */
  add(values: Iterable<string>): () => void {
    void values
    return () => {}
  }

  text(text: string): string {
    return text
  }

  result(result: ToolResult): ToolResult {
    return result
  }
}
