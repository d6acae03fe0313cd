/**
 * A value as a problem quotes it: its type, and for a scalar its text (`preview`: a string
 * cut at 60 characters and quoted as JSON, a number as written). `secret` stands for a value
 * masked because it sits in a secret field (`••••`).
 */
export type ShownValue =
  | { type: 'string' | 'number' | 'boolean' | 'bigint'; text: string }
  | { type: 'array'; items: number }
  | { type: 'null' | 'undefined' | 'function' | 'object' | 'date' | 'secret' }

/** What a `type` problem expected: a kind of value, an instance of a class, a constant, a schema (a union's text), or a valid `role` (`date`, `regexp`). */
export type ExpectedValue =
  | { type: 'object' | 'array' | 'string' | 'number' | 'boolean' | 'function' | 'nothing' | 'flags' }
  | { instanceOf: string }
  | { constant: string }
  | { schema: string }
  | { role: string }

/**
 * What is wrong at one path, keyed by `kind`, with the parameters a message is made of: the
 * locale-free form of `ValidationIssue.message`, which a message catalogue renders. `got` is
 * always what the input held there, as shown (for a length, the length).
 * - `required`: no value where one is required (`property`: the value of an object's key).
 * - `type`: a value of the wrong kind.
 * - `enum`: not one of the allowed constants (`options`, previewed).
 * - `flag`: a bitset's list holds something that is not a flag name.
 * - `pattern`: a string that does not match `pattern` (written `/source/flags`).
 * - `max` / `min`: a number over or under its bound; `step`: not a multiple of `step` (counting from `from`), an integer when `step` is 1.
 * - `max_length` / `min_length`: a string (`unit: 'characters'`) or list (`'items'`) too long or too short.
 * - `property_name`: a dict key its key schema refuses; `problem` says why.
 * - `unknown_field`: a key a closed object does not name.
 * - `convert`: a transform's callback threw (`error`, its message).
 * - `other`: a message from schemastery itself or a schema that threw: `message` only, in English.
 */
export type IssueDetail =
  | { kind: 'required'; params: { property: boolean } }
  | { kind: 'type'; params: { expected: ExpectedValue; got: ShownValue } }
  | { kind: 'enum'; params: { options: string[]; got: ShownValue } }
  | { kind: 'flag'; params: { options: string[]; got: ShownValue } }
  | { kind: 'pattern'; params: { pattern: string; got: ShownValue } }
  | { kind: 'max' | 'min'; params: { limit: number; got: ShownValue } }
  | { kind: 'step'; params: { step: number; from?: number; got: ShownValue } }
  | { kind: 'max_length' | 'min_length'; params: { limit: number; got: ShownValue; unit: 'characters' | 'items' } }
  | { kind: 'property_name'; params: { name: string; problem: IssueDetail } }
  | { kind: 'unknown_field'; params: { got: ShownValue } }
  | { kind: 'convert'; params: { error: string; got: ShownValue } }
  | { kind: 'other'; params: { message: string } }

/** Every problem kind, for a catalogue to check it covers them. */
export type IssueKind = IssueDetail['kind']

/**
 * One invalid spot in the input, phrased for a model to correct (`message`, English), and
 * the same in a structured form (`kind`, `params`) for a person's locale.
 */
export type ValidationIssue = IssueDetail & {
  /** Where, from the root `$`: `$.a[0].b`. */
  path: string
  /** What is wrong: `expected a string, got number 3`. */
  message: string
}

/** The verdict of a {@link Validator}: the resolved value (defaults applied) or every issue found. */
export type ValidationResult<T = any> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }

/** A compiled schema: accepts and resolves exactly what `schema(input)` does, but reports every bad path. */
export type Validator<T = any> = (input: unknown) => ValidationResult<T>
