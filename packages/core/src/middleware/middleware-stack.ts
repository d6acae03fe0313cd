import { DoguError } from '../errors'
import { compileNameGlobs } from '../name-matcher'
import type { ToolEntry } from '../tool-entry'
import { middlewareLabel } from '../messages/en-us'
import type { RegisteredMiddleware } from './registered-middleware'
import type { MiddlewareOptions, ToolMiddleware } from './tool-middleware'

export type { RegisteredMiddleware } from './registered-middleware'

const NO_CHAIN: readonly RegisteredMiddleware[] = Object.freeze([])

/**
 * The registry's middlewares, in running order (by `order`, then registration). Each tool
 * entry keeps its own chain, rebuilt only after a `use` or a disposal: a call with no
 * middleware pays one length check.
 */
export class MiddlewareStack {
  private list: RegisteredMiddleware[] = []
  private version = 0
  private sequence = 0

  get size(): number {
    return this.list.length
  }

  /** Adds a middleware and returns its disposer. */
  use(run: ToolMiddleware, options: MiddlewareOptions = {}, ownerName?: string): () => void {
    if (typeof run !== 'function') throw new DoguError('INVALID_OPTIONS', `use() needs a middleware function (call, next) => result, got ${typeof run}`)
    if (!options || typeof options !== 'object') throw new DoguError('INVALID_OPTIONS', 'use() options must be an object: { order?, tools?, name? }')
    const { order = 0, tools, name = run.name || 'anonymous' } = options
    if (typeof order !== 'number' || Number.isNaN(order)) throw new DoguError('INVALID_OPTIONS', `middleware "${name}": order must be a number, got ${JSON.stringify(order)}`)
    if (typeof name !== 'string' || !name) throw new DoguError('INVALID_OPTIONS', 'a middleware name must be a non-empty string')
    const globs = tools === undefined ? undefined : typeof tools === 'string' ? [tools] : tools
    if (globs && (!Array.isArray(globs) || !globs.length || !globs.every((glob) => typeof glob === 'string' && glob))) {
      throw new DoguError('INVALID_OPTIONS', `middleware "${name}": tools must be a name glob or a non-empty list of them`)
    }
    const entry: RegisteredMiddleware = Object.freeze({
      run,
      name,
      label: middlewareLabel({ middleware: name, ...(ownerName ? { plugin: ownerName } : {}) }),
      ...(ownerName ? { plugin: ownerName } : {}),
      order,
      sequence: this.sequence++,
      matches: globs ? compileNameGlobs(globs) : undefined,
    })
    this.list = [...this.list, entry].sort((a, b) => a.order - b.order || a.sequence - b.sequence)
    this.version++
    let disposed = false
    return () => {
      if (disposed) return
      disposed = true
      this.list = this.list.filter((other) => other !== entry)
      this.version++
    }
  }

  /** The middlewares around calls of `entry`'s tool, outermost first; `undefined` when none. */
  chainFor(entry: ToolEntry): readonly RegisteredMiddleware[] | undefined {
    if (!this.list.length) return undefined
    if (entry.chainVersion !== this.version) {
      const name = entry.tool.name
      const chain = this.list.filter((middleware) => !middleware.matches || middleware.matches(name))
      entry.chain = chain.length ? chain : NO_CHAIN
      entry.chainVersion = this.version
    }
    return entry.chain!.length ? entry.chain : undefined
  }
}
