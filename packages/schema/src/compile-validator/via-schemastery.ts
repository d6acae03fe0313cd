import Schema from 'schemastery'
import { clone } from './clone'
import { reportError, type Node } from './run'

/**
 * A node that lets schemastery itself resolve the subtree, for types not worth compiling.
 * schemastery writes adapted values back into its input (a transform's result, a renamed
 * dict key), so it gets a copy: the caller's value is never changed. Only objects are copied,
 * and only on this path.
 */
export function viaSchemastery(schema: Schema, strict: boolean): Node {
  return (data, run) => {
    try {
      return Schema.resolve(data !== null && typeof data === 'object' ? clone(data) : data, schema, {}, strict)[0]
    } catch (error) {
      reportError(run, error)
    }
  }
}

// A node marked with this handles absence itself (schemastery fallbacks).
export const kSelfResolving = Symbol('self-resolving')

export function selfResolving(node: Node): Node {
  return Object.assign(node, { [kSelfResolving]: true })
}
