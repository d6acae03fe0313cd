// What every reader of one markup shares: what it finds, and what it is given.

/** A tool the model was given: its name, and the JSON Schema of its parameters as sent. */
export interface TextToolSchema {
  name: string
  parameters?: { readonly [keyword: string]: unknown }
}

/** The tools of this turn by name (a Map: names come from the model), or undefined when the caller gave none. */
export type ToolSchemas = ReadonlyMap<string, TextToolSchema['parameters']> | undefined

/** One call as a reader found it; `id` only where the markup carries the model's own (Kimi). */
export interface FoundCall {
  name: string
  arguments: string
  id?: string
}

/**
 * What a reader makes of the markup at a marker: calls and where the markup ends, or a call
 * cut off before its markup closed (it runs to the end of the text, which stays as it is).
 */
export type Found =
  | { end: number; calls: FoundCall[] }
  | { cutOff: { name?: string; reason: string } }

/** Reads the markup that starts at `at` (a marker matched there), or undefined when it is not a call after all. */
export type Reader = (text: string, at: number, tools: ToolSchemas) => Found | undefined

export interface MarkupReader {
  /** Whether this markup's marker starts at `at`. */
  starts(text: string, at: number): boolean
  read: Reader
}

/** A cut-off call of a reader. */
export const cutOff = (reason: string, name?: string): Found => ({ cutOff: name === undefined ? { reason } : { name, reason } })
