/**
 * The part of a minato `Database` (Koishi's `ctx.database`, or a Cordis 4 app's minato
 * service) that Dogu's database stores use. Structural, so `@dogu/core` imports no minato
 * and either host passes its own object. Koishi's `Database` is generic over its tables:
 * hosts pass it through `as unknown as MinatoDatabase`.
 */
export interface MinatoDatabase {
  /** Declares or extends a table (`ctx.model.extend`). */
  extend(table: string, fields: Record<string, unknown>, config?: { primary?: string | string[] }): void
  /**
   * The rows matching `query`. `cursor` (minato's: `sort`, `limit`, `offset`, `fields`) is
   * optional; the stores that pass it also sort and cut what comes back, so a host whose
   * `get` ignores it stays correct, only slower.
   */
  get(table: string, query: Record<string, unknown>, cursor?: MinatoCursor): Promise<Record<string, unknown>[]>
  /**
   * Updates the rows matching `query`; `matched` counts them. `update` may be a function of
   * the row, whose fields are minato expressions: `(row) => ({ count: { $add: [row.count, 1] } })`
   * is `SET count = count + 1` (minato's `$.add`, written as the plain object it is).
   */
  set(table: string, query: Record<string, unknown>, update: MinatoUpdate): Promise<{ matched?: number }>
  upsert(table: string, rows: Record<string, unknown>[], keys?: string | string[]): Promise<unknown>
  /** Removes the rows matching `query`; minato's result says how many (`removed`). */
  remove(table: string, query: Record<string, unknown>): Promise<unknown>
}

/** A row as minato hands it to an update function: each field is an expression (`{ $: [ref, field] }`). */
export type MinatoRow = Record<string, unknown>

/** New values for `set`, or a function of the row that gives them. */
export type MinatoUpdate = Record<string, unknown> | ((row: MinatoRow) => Record<string, unknown>)

/** The options of minato's `get`: which rows, in which order, which columns. */
export interface MinatoCursor {
  sort?: Record<string, 'asc' | 'desc'>
  limit?: number
  offset?: number
  fields?: string[]
}
