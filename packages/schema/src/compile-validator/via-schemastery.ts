import Schema from 'schemastery'
import { reportError, type Node } from './run'

/** A node that lets schemastery itself resolve the subtree, for types not worth compiling. */
export function viaSchemastery(schema: Schema, strict: boolean): Node {
  return (data, run) => {
    try {
      return Schema.resolve(data, schema, {}, strict)[0]
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
