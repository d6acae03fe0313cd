import type Schema from 'schemastery'

export interface SoakCall {
  id: string
  name: string
  arguments: string | Record<string, unknown>
}

export interface SoakWorkload {
  batch(i: number): SoakCall[]
  /** Each batch's statuses, in call order. */
  expected: string[]
  /** Runs batch `i` in a new toolset, cancelled once both hanging calls are running. */
  runBatch<R = unknown>(i: number): Promise<R[]>
}

/** Defines the workload's five tools on `registry` and returns its batches. */
export function soakWorkload(options: {
  registry: { define(tool: any): unknown; toolset(options: { session: { id: string } }): { execute(calls: SoakCall[], options: { signal: AbortSignal }): Promise<any[]> } }
  defineTool: (options: any) => any
  Schema: typeof Schema
  session?: { id: string }
}): SoakWorkload
