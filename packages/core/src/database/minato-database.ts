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
  /** Updates the rows matching `query`; `matched` counts them. */
  set(table: string, query: Record<string, unknown>, update: Record<string, unknown>): Promise<{ matched?: number }>
  upsert(table: string, rows: Record<string, unknown>[], keys?: string | string[]): Promise<unknown>
  /** Removes the rows matching `query`; minato's result says how many (`removed`). */
  remove(table: string, query: Record<string, unknown>): Promise<unknown>
}

/** The options of minato's `get`: which rows, in which order, which columns. */
export interface MinatoCursor {
  sort?: Record<string, 'asc' | 'desc'>
  limit?: number
  offset?: number
  fields?: string[]
}
