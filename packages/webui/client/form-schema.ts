import { compileValidator, type ValidationIssue, type Validator } from '@dogu/schema'
import Schema from 'schemastery'
import type { ArgumentsRefusal } from '../../core/src/result-params'

/**
 * What schemastery-vue renders for a schema, and what the form checks it with.
 *
 * schemastery-vue (7.3) loses input in two places, both driven by a schema's bounds:
 * - every level of the form (`useModel`) runs the schema on a new value and, when it throws,
 *   emits nothing: a string over its `max` length, a number out of range or off its `step`,
 *   a string off its `pattern` never leaves the box, and the model keeps the previous value.
 * - a number's box is Element Plus's `el-input-number` given the schema's `min`/`max`,
 *   which clamps what is typed (99 becomes 5) and emits the clamped number.
 *
 * So the form renders a copy of the schema without those bounds (`display`): every value
 * the boxes can hold reaches the model as typed, and nothing clamps. The bounds are checked
 * against the real schema by `validate`, the pipeline's own validator, which reports every
 * bad path with the pipeline's wording.
 */
export interface FormSchema {
  /** The schema as given, for defaults. */
  schema: Schema
  /** The schema the form renders: the given one without min/max/step/pattern. */
  display: Schema
  /** Every violation of a value, as the pipeline reports them. */
  validate(value: unknown): ValidationIssue[]
  /** Why the form cannot show a value at all (a type it has no box for), or undefined when it can. */
  unshowable(value: unknown): string | undefined
  /** The schema's defaults: what a fresh form starts from. */
  defaults(): any
}

/** What a form shows and what is wrong with it (see ToolForm.vue). */
export interface FormState {
  /** The form's value, or in JSON mode the parsed text (undefined when it does not parse). */
  value: unknown
  /** JSON mode only: the text exactly as typed. */
  text?: string
  /** Every bad path, with the pipeline's wording; `$` for text that does not parse. */
  violations: ValidationIssue[]
  /** The form lists `violations` under itself: after an edit, or once the caller revealed them. */
  shown: boolean
  /** JSON mode: why the pipeline's parser refuses the text (it is the `$` violation). */
  refusal?: ArgumentsRefusal
}

// A slider's range is its track: it cannot be typed past, so it keeps its bounds.
const BOUNDS = ['min', 'max', 'step', 'pattern'] as const

/** The schemastery JSON of a schema or of its JSON (`tools.list` sends `toJSON()`). */
function jsonOf(schema: unknown): any {
  return JSON.parse(JSON.stringify(schema))
}

/** Removes `keys` from the meta of every schema node in a schemastery JSON tree (both the `{ uid, refs }` and the nested form). */
function strip(node: any, keys: readonly string[], kept = keySchemas(node)): any {
  if (Array.isArray(node)) return node.map((item) => strip(item, keys, kept))
  if (!node || typeof node !== 'object' || kept.has(node)) return node
  const copy: any = {}
  for (const [key, value] of Object.entries(node)) copy[key] = key === 'meta' ? value : strip(value, keys, kept)
  if (typeof node.type === 'string' && node.meta && typeof node.meta === 'object' && node.meta.role !== 'slider') {
    copy.meta = { ...node.meta }
    for (const key of keys) delete copy.meta[key]
  }
  return copy
}

/**
 * The key schemas of dicts (`sKey`), inline or in `refs`: they say which keys a dict covers
 * (a closed object's refusal covers the undeclared ones). No box edits them, and without
 * their pattern they would cover every key, so they keep their bounds.
 */
function keySchemas(json: any): Set<object> {
  const found = new Set<object>()
  const refs = json && typeof json === 'object' ? json.refs : undefined
  const visit = (node: any) => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!node || typeof node !== 'object') return
    if (node.sKey !== undefined) {
      const key = typeof node.sKey === 'object' ? node.sKey : refs?.[node.sKey]
      if (key && typeof key === 'object') found.add(key)
    }
    for (const value of Object.values(node)) visit(value)
  }
  visit(json)
  return found
}

export function formSchema(given: unknown): FormSchema {
  const json = jsonOf(given)
  const schema = new Schema(json)
  const display = new Schema(strip(json, BOUNDS))
  // Only types are left to refuse: what schemastery-vue's own check would still drop.
  const lenient = new Schema(strip(json, [...BOUNDS, 'required']))
  // The page's CSP forbids `new Function`: the validator uses closures, and the browser reports no refused attempt.
  const validator: Validator = compileValidator(schema, { codegen: false })
  return {
    schema,
    display,
    validate(value) {
      const checked = validator(value)
      return checked.ok ? [] : checked.issues
    },
    unshowable(value) {
      try {
        lenient(value)
        return undefined
      } catch (e) {
        return (e as Error).message
      }
    },
    defaults() {
      try { return structuredClone(schema(undefined)) ?? {} } catch { return {} }
    },
  }
}
