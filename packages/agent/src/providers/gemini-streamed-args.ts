import { AgentError } from '../agent-error'

/**
 * One piece of a function call's arguments as Gemini streams them with
 * `streamFunctionCallArguments` (Gemini 3 on Vertex AI): a value at a JSON path (RFC 9535,
 * `$.recipe.steps[0]`), and whether more of the same path's string follows.
 */
export interface GeminiPartialArg {
  jsonPath?: string
  stringValue?: string | null
  numberValue?: number | null
  boolValue?: boolean | null
  nullValue?: unknown
  willContinue?: boolean | null
}

type Key = string | number

/**
 * The arguments of one streamed call, built piece by piece. Pieces of one string are joined
 * in order; containers are made as the paths name them. A piece that contradicts what came
 * before (a second value for a finished path, an index that skips, a key into a list) is an
 * error, never a guess.
 */
export class StreamedArgs {
  /** Where the last value went, and whether its string is still arriving. */
  private last: { path: Key[]; open: boolean } | undefined

  constructor(readonly value: Record<string, unknown>, private readonly callName: string) {}

  add(arg: GeminiPartialArg) {
    const path = parsePath(arg.jsonPath, this.callName)
    const found = valueOf(arg)
    const continues = this.last?.open && samePath(this.last.path, path)
    if (found === undefined) {
      // A piece with no value only says whether the path goes on.
      if (this.last && samePath(this.last.path, path)) this.last.open = !!arg.willContinue && typeof this.get(path) === 'string'
      return
    }
    if (continues && typeof found === 'string') {
      this.set(path, (this.get(path) as string) + found)
    } else {
      if (this.get(path) !== undefined) {
        throw this.error(`sent a second value for ${arg.jsonPath} after that path had ended`)
      }
      this.set(path, found)
    }
    this.last = { path, open: !!arg.willContinue && typeof found === 'string' }
  }

  /**
   * The arguments so far as JSON text, left open where the stream stopped: the containers
   * around the last value, and its string if more of it was announced. Such text is what a
   * cut-off call is, and it is never read as a whole call.
   */
  partialText(): string {
    if (!this.last) return '{'
    return openJson(this.value, this.last.path, this.last.open)
  }

  private get(path: readonly Key[]): unknown {
    let at: unknown = this.value
    for (const key of path) {
      if (!at || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined
      at = (at as Record<Key, unknown>)[key]
    }
    return at
  }

  private set(path: readonly Key[], leaf: unknown) {
    let at: Record<Key, unknown> = this.value
    for (const [i, key] of path.entries()) {
      this.check(at, key, path, i)
      if (i === path.length - 1) {
        // Own data properties only: a `__proto__` key cannot reach a prototype.
        Object.defineProperty(at, key, { value: leaf, enumerable: true, writable: true, configurable: true })
        return
      }
      if (!Object.hasOwn(at, key)) {
        Object.defineProperty(at, key, { value: typeof path[i + 1] === 'number' ? [] : {}, enumerable: true, writable: true, configurable: true })
      }
      const next = at[key]
      if (!next || typeof next !== 'object') throw this.error(`sent ${pathText(path)} inside ${pathText(path.slice(0, i + 1))}, which already holds a value`)
      at = next as Record<Key, unknown>
    }
  }

  private check(container: Record<Key, unknown>, key: Key, path: readonly Key[], depth: number) {
    const where = pathText(path.slice(0, depth))
    if (Array.isArray(container)) {
      if (typeof key !== 'number') throw this.error(`sent the key ${JSON.stringify(key)} into ${where}, which is a list`)
      if (key > container.length) throw this.error(`sent ${pathText(path.slice(0, depth + 1))} before ${where}[${container.length}]`)
    } else if (typeof key === 'number') {
      throw this.error(`sent the index [${key}] into ${where}, which is an object`)
    }
  }

  private error(what: string) {
    return new AgentError('BAD_RESPONSE', `Gemini ${what} (streamed arguments of ${this.callName})`)
  }
}

/** A piece's value: the first of its typed fields, `null` for `nullValue`; `undefined` when it has none. */
function valueOf(arg: GeminiPartialArg): string | number | boolean | null | undefined {
  if (typeof arg.stringValue === 'string') return arg.stringValue
  if (typeof arg.numberValue === 'number') return arg.numberValue
  if (typeof arg.boolValue === 'boolean') return arg.boolValue
  if (arg.nullValue !== undefined && arg.nullValue !== false) return null
  return undefined
}

/**
 * The keys of a JSON path: `$` followed by `.name`, `[index]` or `['name']` / `["name"]`
 * segments. A dotted name runs to the next `.` or `[`, as Gemini writes keys there.
 */
function parsePath(path: string | undefined, callName: string): Key[] {
  const fail = (why: string) => new AgentError('BAD_RESPONSE', `Gemini streamed an argument at ${JSON.stringify(path)}, a JSON path Dogu cannot read: ${why} (streamed arguments of ${callName})`)
  if (typeof path !== 'string' || !path.startsWith('$')) throw fail('it does not start with $')
  const keys: Key[] = []
  let at = 1
  while (at < path.length) {
    if (path[at] === '.') {
      const end = path.slice(at + 1).search(/[.[]/)
      const name = end < 0 ? path.slice(at + 1) : path.slice(at + 1, at + 1 + end)
      if (!name) throw fail(`an empty name at offset ${at}`)
      keys.push(name)
      at += 1 + name.length
    } else if (path[at] === '[') {
      const index = /^\[(0|[1-9]\d*)\]/.exec(path.slice(at))
      const quoted = /^\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]/.exec(path.slice(at))
      if (index) {
        keys.push(Number(index[1]))
        at += index[0].length
      } else if (quoted) {
        keys.push(unquote(quoted[1], fail))
        at += quoted[0].length
      } else {
        throw fail(`an unreadable bracket at offset ${at}`)
      }
    } else {
      throw fail(`an unexpected ${JSON.stringify(path[at])} at offset ${at}`)
    }
  }
  if (!keys.length) throw fail('it names the arguments themselves, not a field of them')
  return keys
}

/** A quoted RFC 9535 name: JSON string escapes, and `\'` inside single quotes. */
function unquote(quoted: string, fail: (why: string) => Error): string {
  const body = quoted.slice(1, -1)
  const json = quoted[0] === '"' ? body : body.replace(/\\'/g, "'").replace(/"/g, '\\"')
  try {
    return JSON.parse(`"${json}"`) as string
  } catch {
    throw fail(`a bad escape in ${quoted}`)
  }
}

function samePath(a: readonly Key[], b: readonly Key[]) {
  return a.length === b.length && a.every((key, i) => key === b[i])
}

function pathText(path: readonly Key[]) {
  return '$' + path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('')
}

/**
 * `value` as JSON text with the containers along `path` left open (their other entries
 * first), and the string at its end left open when `stringOpen`.
 */
function openJson(value: unknown, path: readonly Key[], stringOpen: boolean): string {
  if (!path.length) {
    const text = JSON.stringify(value)
    return stringOpen && typeof value === 'string' ? text.slice(0, -1) : text
  }
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const before = value.slice(0, head as number).map((item) => JSON.stringify(item))
    return `[${[...before, openJson(value[head as number], rest, stringOpen)].join(',')}`
  }
  const record = value as Record<string, unknown>
  const others = Object.keys(record).filter((key) => key !== head).map((key) => `${JSON.stringify(key)}:${JSON.stringify(record[key])}`)
  return `{${[...others, `${JSON.stringify(head)}:${openJson(record[head], rest, stringOpen)}`].join(',')}`
}
