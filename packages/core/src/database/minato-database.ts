/**
 * The part of a minato `Database` (Koishi's `ctx.database`, or a Cordis 4 app's minato
 * service) that Dogu's database stores use. Structural, so `@dogu/core` imports no minato
 * and either host passes its own object. Koishi's `Database` is generic over its tables:
 * hosts pass it through `as unknown as MinatoDatabase`.
 */
export interface MinatoDatabase {
  /** Declares or extends a table (`ctx.model.extend`). */
  extend(table: string, fields: Record<string, unknown>, config?: { primary?: string | string[] }): void
  get(table: string, query: Record<string, unknown>): Promise<Record<string, unknown>[]>
  /** Updates the rows matching `query`; `matched` counts them. */
  set(table: string, query: Record<string, unknown>, update: Record<string, unknown>): Promise<{ matched?: number }>
  upsert(table: string, rows: Record<string, unknown>[], keys?: string | string[]): Promise<unknown>
  remove(table: string, query: Record<string, unknown>): Promise<unknown>
}
