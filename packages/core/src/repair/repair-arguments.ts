import { jsonrepair } from 'jsonrepair'
import { findDuplicateKey, shownKey } from '../duplicate-key'
import { foldFullWidth, type LenientToken, lenientTokens } from './lenient-tokens'
import { REPAIR_STEPS, type RepairRecord, type RepairStep } from './repair-step'

/** A repair that worked: the parsed value, and what was changed. */
export interface RepairedArguments {
  value: unknown
  /** The repaired text, strict JSON. */
  json: string
  repaired: RepairRecord
}

/** Why the text cannot be repaired without guessing, with the position in it (0-based) where known. */
export interface RepairRefusal {
  error: string
  position?: number
}

/** Longest `from` a record keeps: enough to see what the model sent. */
const FROM_LENGTH = 2000
/** A Markdown code fence around the arguments. */
export const FENCE = /^\s*```[A-Za-z]*[ \t]*\r?\n?([\s\S]*?)\r?\n?[ \t]*```\s*$/
const PYTHON: Readonly<Record<string, string>> = { True: 'true', False: 'false', None: 'null' }
const LITERALS = new Set(['true', 'false', 'null'])

/**
 * Repairs a model's malformed JSON arguments text, or refuses it. What is repaired: a
 * Markdown fence, a JSON string holding the JSON (`double-encoded`), full-width punctuation
 * outside strings, comments, single or curly quotes, unquoted keys, Python's literals,
 * trailing commas, and the outermost object's `}` missing after a complete value. `jsonrepair`
 * does the repair; the result is then compared with the input token by token, and any change
 * outside that list (a comma or a `null` inserted, `NaN` turned into text, a value
 * completed, an inner array or object closed) refuses the text instead, and so does a key
 * written twice in one object: a call never runs on a guess. The steps named are the
 * differences found.
 *
 * @example
 * repairArguments("{'city': 'Hangzhou',}") // { value: { city: 'Hangzhou' }, repaired: { steps: ['quotes', 'trailing-comma'], … } }
 * repairArguments('{"city": "Hang')        // { error: 'the string at position 9 is cut off …', position: 9 }
 */
export function repairArguments(text: string): RepairedArguments | RepairRefusal {
  const steps = new Set<RepairStep>()
  const result = repairText(text, 0, steps, 0)
  if ('error' in result) return result
  const duplicate = findDuplicateKey(result.json, result.value)
  if (duplicate) return { error: `the key ${shownKey(duplicate.key)} is written twice at ${duplicate.path}, so which of its values was meant cannot be known` }
  return { ...result, repaired: { from: repairedFrom(text), steps: REPAIR_STEPS.filter((step) => steps.has(step)) } }
}

/** The model's text as a `RepairRecord` keeps it: cut to 2,000 characters. */
export function repairedFrom(text: string): string {
  return text.length > FROM_LENGTH ? `${text.slice(0, FROM_LENGTH)}…` : text
}

function repairText(text: string, offset: number, steps: Set<RepairStep>, depth: number): { value: unknown; json: string } | RepairRefusal {
  const fence = FENCE.exec(text)
  if (fence) {
    steps.add('fence')
    return repairText(fence[1], offset + text.indexOf(fence[1]), steps, depth)
  }
  const tokens = lenientTokens(text)
  if (!Array.isArray(tokens)) {
    const at = offset + tokens.at
    switch (tokens.problem) {
      case 'unterminated-string': return { error: `the string at position ${at} is cut off: its end, and what followed, cannot be known`, position: at }
      case 'bad-escape': return { error: `the escape ${JSON.stringify(text.slice(tokens.at, tokens.at + 2))} at position ${at} is not JSON: a backslash is written \\\\`, position: at }
      default: return { error: `unexpected character ${JSON.stringify(text[tokens.at])} at position ${at}`, position: at }
    }
  }
  const meaningful = tokens.filter((token) => token.kind !== 'comment')
  if (!meaningful.length) return { error: 'the arguments hold no JSON value' }
  // A JSON string holding the arguments: its content is the call (once; deeper is a guess).
  if (meaningful.length === 1 && meaningful[0].kind === 'string' && depth === 0) {
    const inner = meaningful[0].value.trim()
    if (inner.startsWith('{') || inner.startsWith('```')) {
      steps.add('double-encoded')
      if (meaningful[0].quote !== '"') steps.add(meaningful[0].quote === "'" ? 'quotes' : 'full-width')
      const strict = tryParse(inner)
      if (strict !== undefined) return { value: strict, json: inner }
      // Positions inside an encoded string are not the text's own: report the string's.
      const repaired = repairText(inner, 0, steps, depth + 1)
      return 'error' in repaired ? { error: `inside the JSON string at position ${offset + meaningful[0].at}: ${repaired.error}`, position: offset + meaningful[0].at } : repaired
    }
  }
  const cut = cutOff(meaningful, offset, text.length)
  if (cut) return cut
  const folded = foldFullWidth(text, tokens)
  if (folded !== undefined) steps.add('full-width')
  let json: string
  try {
    json = jsonrepair(folded ?? text)
  } catch (error) {
    const position = (error as { position?: unknown }).position
    return typeof position === 'number'
      ? { error: `${stripPosition((error as Error).message)} at position ${offset + position}`, position: offset + position }
      : { error: (error as Error).message }
  }
  const repaired = lenientTokens(json)
  if (!Array.isArray(repaired)) return { error: 'the repair did not make valid JSON' }
  if (meaningful.length !== tokens.length) steps.add('comments')
  const difference = compare(meaningful, repaired, steps, offset)
  if (difference) return difference
  const value = tryParse(json)
  if (value === undefined) return { error: 'the repair did not make valid JSON' }
  return { value, json }
}

/**
 * The cut-off rule: only the outermost object's `}` may be added, and only after a complete
 * value. A number at the end (`12` may have been `125`), a dangling key, colon or comma, an
 * opening bracket at the end, or a text that ends inside an inner array or object
 * (`{"paths": ["a.py"` may have had more paths) is refused. (A string cut off never reaches
 * here: the lexer refuses it.)
 */
function cutOff(tokens: readonly LenientToken[], offset: number, length: number): RepairRefusal | undefined {
  const open = openBrackets(tokens)
  if (!open.length) return undefined
  const innermost = open[open.length - 1]
  const last = tokens[tokens.length - 1]
  const at = offset + last.at
  // A number the text ends on may go on; one followed by a space or a comment is whole.
  if (last.kind === 'number' && last.end === length) return { error: `the number at position ${at} ends the text, so it may be cut off`, position: at }
  if (last.kind === 'punct' && last.char !== '}' && last.char !== ']') {
    return { error: `the text ends at position ${at} after ${JSON.stringify(last.char)}, so what followed is missing`, position: at }
  }
  const before = tokens[tokens.length - 2]
  // `{"a": 1, "b"`: a key without its value.
  if (last.kind !== 'punct' && before?.kind === 'punct' && (before.char === '{' || before.char === ',') && innermost.char === '{') {
    return { error: `the key at position ${at} ends the text without its value`, position: at }
  }
  if (open.length > 1 || innermost.char !== '{') {
    const start = offset + innermost.at
    const what = innermost.char === '[' ? 'array' : 'object'
    const more = innermost.char === '[' ? 'elements' : 'members'
    return { error: `the ${what} at position ${start} is cut off: the text ends inside it, so more ${more} may have followed`, position: start }
  }
  return undefined
}

/** The brackets left open at the end, outermost first. */
function openBrackets(tokens: readonly LenientToken[]): (LenientToken & { kind: 'punct' })[] {
  const open: (LenientToken & { kind: 'punct' })[] = []
  for (const token of tokens) {
    if (token.kind !== 'punct') continue
    if (token.char === '{' || token.char === '[') open.push(token)
    else if (token.char === '}' || token.char === ']') open.pop()
  }
  return open
}

/**
 * Walks the input's tokens beside the repair's and names each difference a step, or refuses
 * at the first one the steps do not cover.
 */
function compare(input: readonly LenientToken[], output: readonly LenientToken[], steps: Set<RepairStep>, offset: number): RepairRefusal | undefined {
  let j = 0
  for (let i = 0; i < input.length; i++) {
    const token = input[i]
    const next = input[i + 1]
    const out = output[j]
    if (token.kind === 'punct' && token.char === ',' && (next?.kind === 'punct' && (next.char === '}' || next.char === ']')) && !(out?.kind === 'punct' && out.char === ',')) {
      steps.add('trailing-comma')
      continue
    }
    if (!out || !same(token, out, next, steps)) return changed(token, offset)
    j++
  }
  // The one `}` the cut-off rule lets a repair add.
  const added = output.slice(j)
  if (!added.length) return undefined
  if (added.length === 1 && added[0].kind === 'punct' && added[0].char === '}') {
    steps.add('closing-brackets')
    return undefined
  }
  return { error: 'the repair added a value the text does not hold' }
}

function same(token: LenientToken, out: LenientToken, next: LenientToken | undefined, steps: Set<RepairStep>): boolean {
  switch (token.kind) {
    case 'punct':
      if (out.kind !== 'punct' || out.char !== token.char) return false
      return true
    case 'string':
      if (out.kind !== 'string' || out.value !== token.value) return false
      if (token.quote === "'") steps.add('quotes')
      else if (token.quote !== '"') steps.add('full-width')
      return true
    case 'number':
      return out.kind === 'number' && out.text === token.text
    case 'word':
      if (LITERALS.has(token.text)) return out.kind === 'word' && out.text === token.text
      if (PYTHON[token.text] && out.kind === 'word' && out.text === PYTHON[token.text]) {
        steps.add('python-literals')
        return true
      }
      // A bare word is a key only before a colon; as a value it would be a guess (`NaN`, `undefined`).
      if (out.kind === 'string' && out.value === token.text && next?.kind === 'punct' && next.char === ':') {
        steps.add('unquoted-keys')
        return true
      }
      return false
    case 'comment':
      return false
  }
}

function changed(token: LenientToken, offset: number): RepairRefusal {
  const at = offset + token.at
  return { error: `repairing it would change what it means at position ${at} (${describe(token)})`, position: at }
}

function describe(token: LenientToken): string {
  switch (token.kind) {
    case 'punct': return `"${token.char}"`
    case 'string': return `the string ${JSON.stringify(token.value.length > 40 ? `${token.value.slice(0, 40)}…` : token.value)}`
    case 'number': return `the number ${token.text}`
    case 'word': return `the bare word ${token.text}`
    case 'comment': return 'a comment'
  }
}

function stripPosition(message: string): string {
  return message.replace(/ at position \d+$/, '')
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
