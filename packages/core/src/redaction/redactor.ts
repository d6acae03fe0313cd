import { compileLinearPattern, type LinearPattern, linearPatternRefusal } from '@dogu/schema'
import { DoguError } from '../errors'
import { type Logger, silentLogger } from '../logger'
import type { ToolResult } from '../tool-result'

/** What a secret is replaced with. */
export const REDACTED = '[redacted]'

/** Shorter values are not redacted: one of 1–3 characters would redact ordinary text. */
const MIN_SECRET_LENGTH = 4

/**
 * The `redact` config: what is replaced with `[redacted]` in every result and progress line.
 *
 * Only a secret's literal form is found: not its URL-encoded, base64, hex or JSON-escaped
 * forms, nor a secret split across lines or results. An encoding is the tool's choice and
 * there are too many to try (guessing them would also redact innocent text); where a tool
 * shows a secret encoded, add a pattern for that form.
 */
export interface RedactOptions {
  /**
   * Names of environment variables whose values are secrets, read once when Dogu starts.
   * A variable that is unset or empty is skipped with a warning, as is a value shorter than
   * 4 characters (it would redact ordinary text).
   */
  env?: string[]
  /**
   * Regular expressions (ECMAScript syntax) whose matches are secrets. They run on the
   * linear-time engine (RE2), so a pattern cannot stall a call; RE2 has no backreferences
   * and no lookaround, and a pattern that uses them, is invalid, or matches the empty string
   * is refused when Dogu starts.
   */
  patterns?: string[]
  /** Redact the secrets Dogu itself holds (MCP headers and tokens, the console token). @default true */
  builtin?: boolean
}

interface Literal {
  value: string
  /**
   * The value's smallest period: a second occurrence that overlaps the first starts at least
   * this far after it, so the search for the next one resumes there (1 for `aaaa`, the
   * length for a value that overlaps nothing).
   */
  shift: number
}

/**
 * Replaces secrets with `[redacted]`: the literal values of `env` and of what plugins
 * declare through `add` (ref-counted), and the matches of `patterns`. Wherever secrets
 * overlap or touch, the whole stretch they cover becomes one `[redacted]`, so a secret that
 * contains another, or two that overlap, leave no part of either behind.
 */
export class Redactor {
  private readonly builtin: boolean
  private readonly patterns: LinearPattern[] = []
  /** Each literal secret with the number of holders: `env` holds its values for good. */
  private readonly counts = new Map<string, number>()
  /** The literals, longest first; rebuilt after `add` or a disposer changed them. */
  private literals: Literal[] | undefined

  constructor(options: RedactOptions = {}, private readonly diagnostics: Logger = silentLogger) {
    const { env = [], patterns = [], builtin = true } = options ?? {}
    this.builtin = builtin !== false
    if (!Array.isArray(env) || !env.every((name) => typeof name === 'string')) {
      throw new DoguError('INVALID_OPTIONS', 'redact.env must be a list of environment variable names')
    }
    if (!Array.isArray(patterns) || !patterns.every((pattern) => typeof pattern === 'string')) {
      throw new DoguError('INVALID_OPTIONS', 'redact.patterns must be a list of regular expressions (strings)')
    }
    patterns.forEach((source, index) => this.patterns.push(compilePattern(source, index)))
    for (const name of new Set(env)) {
      const value = process.env[name]
      // The name only, never the value: this line is read where the secret must not be.
      if (!value) this.diagnostics.warn('redact.env: %s is not set or is empty; nothing is redacted for it', name)
      else if (value.length < MIN_SECRET_LENGTH) this.diagnostics.warn('redact.env: the value of %s is shorter than %d characters and is not redacted (it would redact ordinary text)', name, MIN_SECRET_LENGTH)
      else this.hold(value)
    }
  }

  /** True when there is anything to redact: the pipeline skips the redactor otherwise. */
  get active(): boolean {
    return this.counts.size > 0 || this.patterns.length > 0
  }

  /**
   * Adds secret values Dogu holds (`builtin`); returns their disposer, which removes these
   * values unless another holder added them too (each holder's disposer counts once, a
   * second call does nothing). Values shorter than 4 characters are skipped. With
   * `builtin: false` nothing is added.
   */
  add(values: Iterable<string>): () => void {
    if (!this.builtin) return () => {}
    const added = new Set<string>()
    for (const value of values) if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) added.add(value)
    if (!added.size) return () => {}
    for (const value of added) this.hold(value)
    let disposed = false
    return () => {
      if (disposed) return
      disposed = true
      for (const value of added) {
        const count = this.counts.get(value)! - 1
        if (count) this.counts.set(value, count)
        else this.counts.delete(value)
      }
      this.literals = undefined
    }
  }

  /** `text` with every secret replaced; the same string when it holds none. */
  text(text: string): string {
    if (!this.active || typeof text !== 'string' || !text) return text
    const spans = this.find(text)
    if (!spans) return text
    spans.sort((a, b) => a[0] - b[0])
    let out = ''
    let from = 0
    let i = 0
    while (i < spans.length) {
      let [start, end] = spans[i++]!
      // Overlapping and touching spans become one.
      while (i < spans.length && spans[i]![0] <= end) end = Math.max(end, spans[i++]![1])
      out += text.slice(from, start) + REDACTED
      from = end
    }
    return out + text.slice(from)
  }

  /**
   * `value` with every string in it redacted, through arrays and plain objects, keys
   * included (two keys that redact alike keep the later's value); other objects (class
   * instances, Maps, Buffers) are kept as they are. The same value when nothing changed;
   * otherwise a copy of the arrays and plain objects, cycles preserved: the input is never
   * modified.
   */
  value(value: unknown): unknown {
    if (!this.active) return value
    if (typeof value === 'string') return this.text(value)
    if (typeof value !== 'object' || value === null) return value
    // First find whether anything changes (most results hold no secret), then copy.
    const redacted = new Map<string, string>()
    if (!this.changes(value, redacted, new Set())) return value
    return this.copy(value, redacted, new Map())
  }

  /**
   * `result` with its `content`, `data`, `artifacts` and `resources` redacted (see `value`);
   * images and audio are kept. The same object when nothing changed; the input is never modified.
   */
  result(result: ToolResult): ToolResult {
    if (!this.active) return result
    const content = this.text(result.content)
    const data = this.value(result.data)
    const artifacts = result.artifacts && this.value(result.artifacts) as ToolResult['artifacts']
    const resources = result.resources && this.value(result.resources) as ToolResult['resources']
    // A person's rendering of the result is made from these: a secret a message quotes goes from them too.
    const params = result.params && this.value(result.params) as ToolResult['params']
    const edits = result.edits && this.value(result.edits) as ToolResult['edits']
    if (content === result.content && data === result.data && artifacts === result.artifacts && resources === result.resources && params === result.params && edits === result.edits) return result
    const redacted: ToolResult = { ...result, content }
    if (data !== result.data) redacted.data = data
    if (artifacts !== result.artifacts) redacted.artifacts = artifacts
    if (resources !== result.resources) redacted.resources = resources
    if (params !== result.params) redacted.params = params
    if (edits !== result.edits) redacted.edits = edits
    return redacted
  }

  /**
   * `logger` with every string argument, and the message and stack of every error, redacted
   * as they are logged (a tool's error message may quote a secret). Reads the redactor's
   * secrets at each line, so values added later count too.
   */
  logger(logger: Logger): Logger {
    const clean = (args: unknown[]) => this.active ? args.map((arg) => this.argument(arg)) : args
    return {
      debug: (format, ...args) => logger.debug(this.text(format), ...clean(args)),
      ...(logger.info ? { info: (format: string, ...args: unknown[]) => logger.info!(this.text(format), ...clean(args)) } : {}),
      warn: (format, ...args) => logger.warn(this.text(format), ...clean(args)),
    }
  }

  private argument(arg: unknown): unknown {
    if (!(arg instanceof Error)) return this.value(arg)
    const message = this.text(arg.message)
    const stack = arg.stack === undefined ? undefined : this.text(arg.stack)
    if (message === arg.message && stack === arg.stack) return arg
    // A copy, so the error the caller holds keeps its text; same class and name for the log line.
    const copy = Object.create(Object.getPrototypeOf(arg)) as Error
    Object.defineProperties(copy, {
      message: { value: message, writable: true, configurable: true },
      ...(stack === undefined ? {} : { stack: { value: stack, writable: true, configurable: true } }),
    })
    if (Object.hasOwn(arg, 'name')) copy.name = arg.name
    return copy
  }

  private hold(value: string): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1)
    this.literals = undefined
  }

  /** Where secrets occur in `text`, unsorted; `undefined` when nowhere. */
  private find(text: string): Array<[number, number]> | undefined {
    let spans: Array<[number, number]> | undefined
    // indexOf per literal: linear in the text for each, and no pattern built from secrets.
    for (const { value, shift } of this.literals ??= literalsOf(this.counts.keys())) {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + shift)) (spans ??= []).push([at, at + value.length])
    }
    for (const pattern of this.patterns) {
      // An empty match (`\b`, `x*` between letters) redacts nothing.
      for (const span of pattern.ranges(text)) if (span[1] > span[0]) (spans ??= []).push(span)
    }
    return spans
  }

  private changes(value: unknown, redacted: Map<string, string>, seen: Set<object>): boolean {
    if (typeof value === 'string') {
      let text = redacted.get(value)
      if (text === undefined) redacted.set(value, text = this.text(value))
      return text !== value
    }
    if (!isWalked(value) || seen.has(value)) return false
    seen.add(value)
    if (Array.isArray(value)) return value.some((item) => this.changes(item, redacted, seen))
    for (const key of Object.keys(value)) {
      if (this.changes(key, redacted, seen) || this.changes((value as Record<string, unknown>)[key], redacted, seen)) return true
    }
    return false
  }

  private copy(value: unknown, redacted: Map<string, string>, copies: Map<object, unknown>): unknown {
    if (typeof value === 'string') return redacted.get(value) ?? this.text(value)
    if (!isWalked(value)) return value
    const known = copies.get(value)
    if (known) return known
    if (Array.isArray(value)) {
      const items: unknown[] = []
      copies.set(value, items)
      for (const item of value) items.push(this.copy(item, redacted, copies))
      return items
    }
    const object = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>
    copies.set(value, object)
    for (const key of Object.keys(value)) {
      // defineProperty, not assignment: an own `__proto__` key (JSON.parse makes them) stays a key.
      Object.defineProperty(object, this.copy(key, redacted, copies) as string, {
        value: this.copy((value as Record<string, unknown>)[key], redacted, copies),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return object
  }
}

function compilePattern(source: string, index: number): LinearPattern {
  const name = `redact.patterns[${index}] ${JSON.stringify(source)}`
  const pattern = compileLinearPattern(source)
  if (!pattern) throw new DoguError('INVALID_OPTIONS', `${name} ${linearPatternRefusal(source) ?? 'does not compile'}`)
  // Probes for an empty match: at the end (`x*`, `$`), at a word's edge (`\b`), between words.
  if (['', 'a', 'a a', '0\n0'].some((probe) => pattern.ranges(probe).some(([start, end]) => start === end))) {
    throw new DoguError('INVALID_OPTIONS', `${name} matches the empty string: a secret pattern must match at least one character`)
  }
  return pattern
}

function literalsOf(values: Iterable<string>): Literal[] {
  return [...values].sort((a, b) => b.length - a.length).map((value) => ({ value, shift: periodOf(value) }))
}

/** The smallest period of `value`: its length less its longest proper border (KMP's failure function). */
function periodOf(value: string): number {
  const border = new Uint32Array(value.length)
  let k = 0
  for (let i = 1; i < value.length; i++) {
    while (k > 0 && value[i] !== value[k]) k = border[k - 1]!
    if (value[i] === value[k]) k++
    border[i] = k
  }
  return value.length - k
}

/** Arrays and plain objects: what JSON data is made of. */
function isWalked(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return true
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}
