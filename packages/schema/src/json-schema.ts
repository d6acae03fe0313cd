/** A JSON Schema document (2020-12 unless a dialect says otherwise). Kept loose on purpose. */
export interface JsonSchema {
  [keyword: string]: unknown
}

/** The providers whose tool-parameter rules we follow; `json` is plain JSON Schema 2020-12. */
export type Dialect = 'json' | 'openai' | 'anthropic' | 'gemini'
