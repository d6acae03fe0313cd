import type Schema from 'schemastery'
import { isNullish } from '../json-value'
import { freshContainers } from './adapts-inside'
import { clone } from './clone'
import { MISSING, report, rollback, type Node } from './run'
import { kSelfResolving, viaSchemastery } from './via-schemastery'

/** Compiles one schemastery type to a node; the compiler supplies its children. */
export type Compile = (schema: Schema, strict: boolean, c: Compiler) => Node

export class Compiler {
  private memo = [new Map<Schema, Node>(), new Map<Schema, Node>()] as const

  constructor(readonly compilers: Record<string, Compile>, public nullAsAbsent: boolean, readonly codegen = true) {}

  node(schema: Schema, strict: boolean): Node {
    const memo = this.memo[+strict]
    const known = memo.get(schema)
    if (known) return known
    // A forwarder breaks direct cycles (built with `set`/`push`); it is replaced once compiled.
    let target: Node
    memo.set(schema, (data, run) => target(data, run))
    target = this.build(schema, strict)
    memo.set(schema, target)
    return target
  }

  private build(schema: Schema, strict: boolean): Node {
    if (!Object.hasOwn(this.compilers, schema.type)) return viaSchemastery(schema, strict)
    const core = this.compilers[schema.type]!(schema, strict, this)
    if (schema.type === 'lazy' || (core as any)[kSelfResolving]) return core
    return this.wrap(schema, core)
  }

  /** What `Schema.resolve` does around every resolver: required, default, loose. */
  private wrap(schema: Schema, core: Node): Node {
    const { required, loose } = schema.meta
    const nullAsAbsent = this.nullAsAbsent
    if (loose) {
      const inner = core, alternative = schema.meta.default
      core = (data, run) => {
        const n = run.n
        const value = inner(data, run)
        if (run.n === n) return value
        rollback(run, n)
        return alternative
      }
    }
    if (required) return (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? report(run, MISSING) : core(data, run)
    let current: Schema | undefined = schema
    let fallback = schema.meta.default
    while (current?.type === 'intersect' && isNullish(fallback)) {
      current = current.list![0]
      fallback = current?.meta.default
    }
    if (isNullish(fallback)) return (data, run) => (data === undefined || (nullAsAbsent && data === null)) ? data : core(data, run)
    // an empty container default can be shared: its resolver builds a fresh one
    const shared = typeof fallback !== 'object' || (Object.keys(fallback).length === 0 && freshContainers.has(schema.type))
    return shared
      ? (data, run) => core((data === undefined || (nullAsAbsent && data === null)) ? fallback : data, run)
      : (data, run) => core((data === undefined || (nullAsAbsent && data === null)) ? clone(fallback) : data, run)
  }
}
