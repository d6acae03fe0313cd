import { RE2JS } from 're2js'
import type Schema from 'schemastery'

/**
 * The regular-expression engine for patterns Dogu did not write (MCP tools' schemas,
 * anything `fromJsonSchema` imports): RE2 (`re2js`), whose matching time is linear in the
 * input, so no pattern can stall the process the way `^(a+)+$` stalls a backtracking
 * engine. Every such pattern is compiled here, once; code that runs foreign patterns
 * (validation, redaction) uses this module and nothing else.
 *
 * The pattern is read as ECMAScript syntax (`\u{…}`, `\/`, named groups) and translated
 * for RE2. RE2 cannot run backreferences (`\1`, `\k<name>`) or lookaround (`(?=`, `(?!`,
 * `(?<=`, `(?<!`), nor count repetitions past 1000 (`{1,5000}`): such a pattern gets
 * `undefined`, and the caller leaves it unenforced (never on the backtracking engine).
 * Known differences from ECMAScript: `\s` matches ASCII whitespace only (not U+00A0,
 * U+FEFF or other Unicode spaces), and `.` also matches `\r`, U+2028 and U+2029.
 */
export interface LinearPattern {
  readonly source: string
  /** Whether the pattern matches anywhere in `text`, as `RegExp.prototype.test` would. */
  test(text: string): boolean
  /**
   * Where the pattern matches in `text`, as `String.prototype.matchAll` with the `g` flag
   * finds them: leftmost first, not overlapping, empty matches included. Each is the match's
   * start and end as UTF-16 indexes (`text.slice(start, end)` is the match).
   */
  ranges(text: string): Array<[start: number, end: number]>
}

export function compileLinearPattern(source: string): LinearPattern | undefined {
  const compiled = compile(source)
  return typeof compiled === 'string' ? undefined : compiled
}

/**
 * Why `compileLinearPattern(source)` gives `undefined`, as a phrase for an error message
 * ("is not a valid regular expression: …", "uses lookaround, …"); `undefined` when the
 * pattern compiles.
 */
export function linearPatternRefusal(source: string): string | undefined {
  const compiled = compile(source)
  return typeof compiled === 'string' ? compiled : undefined
}

function compile(source: string): LinearPattern | string {
  // RE2 has no named backreference, and the translation would read `\k<x>` as the text `k<x>`.
  if (namedBackreference(source)) return `uses a backreference (\\k<…>), which ${UNSUPPORTED}`
  let engine: RE2JS
  try {
    engine = RE2JS.compile(RE2JS.translateRegExp(unicodeProperties(source)))
  } catch (error) {
    return refusal(source, error)
  }
  return {
    source,
    test: (text) => engine.test(text),
    ranges(text) {
      const found: Array<[number, number]> = []
      // Most texts hold no match, and `test` is several times cheaper than a matcher.
      if (!engine.test(text)) return found
      const matcher = engine.matcher(text)
      while (matcher.find()) found.push([matcher.start(), matcher.end()])
      return found
    },
  }
}

const UNSUPPORTED = 'the linear-time engine (RE2) cannot run: it has no backreferences, no lookaround and no repetition counts over 1000'

/** What is wrong with a pattern RE2 refused: not ECMAScript at all, or a feature RE2 lacks. */
function refusal(source: string, error: unknown): string {
  try {
    // Compiling (never running) the pattern on the backtracking engine only checks its syntax.
    new RegExp(source, 'u')
  } catch (invalid) {
    return `is not a valid regular expression: ${(invalid as Error).message}`
  }
  const feature = unsupportedFeature(source)
  if (feature) return `uses ${feature}, which ${UNSUPPORTED}`
  const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error)
  return `is not supported (${reason}): ${UNSUPPORTED}`
}

const LOOKAROUND = ['(?=', '(?!', '(?<=', '(?<!']

/** The first lookaround or numbered backreference outside a character class, as the source spells it. */
function unsupportedFeature(source: string): string | undefined {
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === '\\') {
      const next = source[++i]
      if (!inClass && next !== undefined && next >= '1' && next <= '9') return `a backreference (\\${/^\d+/.exec(source.slice(i))![0]})`
    } else if (inClass) {
      if (char === ']') inClass = false
    } else if (char === '[') {
      inClass = true
    } else if (char === '(') {
      const look = LOOKAROUND.find((opening) => source.startsWith(opening, i))
      if (look) return `lookaround (${look})`
    }
  }
  return undefined
}

function namedBackreference(source: string): boolean {
  let found = false
  source.replace(/\\k<|\\[\s\S]/g, (escape) => {
    if (escape === '\\k<') found = true
    return escape
  })
  return found
}

// ECMAScript's long general-category names and `Script=` forms, as RE2 spells them.
const CATEGORIES: Record<string, string> = {
  Letter: 'L', Uppercase_Letter: 'Lu', Lowercase_Letter: 'Ll', Titlecase_Letter: 'Lt', Modifier_Letter: 'Lm', Other_Letter: 'Lo',
  Mark: 'M', Combining_Mark: 'M', Nonspacing_Mark: 'Mn', Spacing_Mark: 'Mc', Enclosing_Mark: 'Me',
  Number: 'N', Decimal_Number: 'Nd', digit: 'Nd', Letter_Number: 'Nl', Other_Number: 'No',
  Punctuation: 'P', punct: 'P', Connector_Punctuation: 'Pc', Dash_Punctuation: 'Pd', Open_Punctuation: 'Ps', Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi', Final_Punctuation: 'Pf', Other_Punctuation: 'Po',
  Symbol: 'S', Math_Symbol: 'Sm', Currency_Symbol: 'Sc', Modifier_Symbol: 'Sk', Other_Symbol: 'So',
  Separator: 'Z', Space_Separator: 'Zs', Line_Separator: 'Zl', Paragraph_Separator: 'Zp',
  Other: 'C', Control: 'Cc', cntrl: 'Cc', Format: 'Cf', Surrogate: 'Cs', Private_Use: 'Co', Unassigned: 'Cn',
}

/** Rewrites `\p{Letter}`, `\p{gc=Lu}`, `\p{Script=Greek}` into RE2's names; an escaped `\\p` stays. */
function unicodeProperties(source: string): string {
  return source.replace(/\\([pP])\{([^}]*)\}|\\[\s\S]/g, (escape, p: string | undefined, name: string) => {
    if (!p) return escape
    const [key, value] = name.includes('=') ? name.split('=', 2) as [string, string] : [undefined, name]
    if (key === 'Script' || key === 'sc') return `\\${p}{${value}}`
    if (key !== undefined && key !== 'General_Category' && key !== 'gc') return escape
    return `\\${p}{${CATEGORIES[value] ?? value}}`
  })
}

// schemastery keeps a pattern as `meta.pattern = { source, flags }` and copies that object
// into every clone (`.required()`, `.description()`), so it names the check across clones.
const checks = new WeakMap<object, (text: string) => boolean>()

/**
 * Marks a string schema's pattern as foreign: validators built by `compileValidator` run
 * `check` instead of the pattern on the backtracking engine. The pattern stays in the
 * schema's meta for what reads it (JSON Schema output, descriptions).
 */
export function checkLinearly<S extends Schema>(schema: S, check: (text: string) => boolean): S {
  if (schema.meta.pattern) checks.set(schema.meta.pattern, check)
  return schema
}

/** The linear check that replaces a pattern, if it was marked foreign. */
export function linearCheckOf(pattern: object | undefined): ((text: string) => boolean) | undefined {
  return pattern && checks.get(pattern)
}

/** Code points in `text`, as JSON Schema's `minLength`/`maxLength` count them. */
export function codePoints(text: string): number {
  let n = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}
