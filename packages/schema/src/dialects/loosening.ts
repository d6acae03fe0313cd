import type { JsonSchema } from '../json-schema'

/** One place where a dialect's schema says less than the exact one. */
export interface Loosening {
  /** Where the value sits, as SchemaError paths name it: `$.options.mode`, `$.headers.*`, `$.items[*]`, `$.pair[0]`. */
  path: string
  /** The exact rule the provider's schema does not state, in short English: `at most 80 characters`. */
  rule: string
}

/** A schema rewritten for one provider, with what it had to give up. */
export interface DialectConversion {
  /** The provider's tool parameters. */
  schema: JsonSchema
  /**
   * Every loosening, in document order: each place where the provider's schema accepts values
   * the exact one refuses, because its language cannot state the rule (a flattened union, a
   * dropped constraint such as `minLength` for OpenAI, a field sent as a JSON-encoded string,
   * or, for OpenAI with `strict: false`, what strict mode could not say). Dogu validates every
   * call with the exact schema, so a value outside these rules gets an error naming the rule.
   * Empty when the dialect states the schema exactly. Annotations (`default`, `format`,
   * `examples`) and keys the exact schema does not declare are not counted.
   */
  loosened: Loosening[]
  /** Paths whose values the model sends as a JSON-encoded string; decode them with `decodeEncoded` before validation. */
  encoded: string[]
  /** `openai` only: `false` when strict mode cannot state the schema, so the tool must be sent with `strict: false`. */
  strict?: boolean
}

/** Collects the loosenings and encodings of one conversion, in the order they are found. */
export class Loosenings {
  readonly loosened: Loosening[] = []
  readonly encoded: string[] = []
  private seen = new Set<string>()

  loosen(path: string, rule: string) {
    const key = `${path}\0${rule}`
    if (this.seen.has(key)) return
    this.seen.add(key)
    this.loosened.push({ path, rule })
  }

  /** Records that the value at `path` travels as a JSON-encoded string of `what`. */
  encode(path: string, what: string) {
    this.encoded.push(path)
    this.loosen(path, `sent as a JSON-encoded string of ${what}`)
  }

  /** Takes over what another collector found (a pass whose result is kept). */
  add(other: Loosenings) {
    for (const { path, rule } of other.loosened) this.loosen(path, rule)
    this.encoded.push(...other.encoded)
  }
}
