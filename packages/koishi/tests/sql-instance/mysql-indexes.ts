// What minato 3.7 needs of @minatojs/driver-mysql 3.3.0 and that driver lacks: used by the
// instances (./instance.ts) and by the SQL tier's in-process stores (quotas-two-instances.sql.spec.ts).

/**
 * @minatojs/driver-mysql 3.3.0, the newest 3.x the registry we install from has, predates
 * minato's indexes: minato 3.7.0 (which Koishi 4.18.11 needs) prepares every table with
 * `driver.getIndexes`, and without it every table of the database fails. These are the
 * three methods as upstream minato added them to its MySQL driver (cordiverse/minato
 * 424d8f2, "support indexes", published in driver-mysql 3.5), patched in only when they
 * are missing: a newer driver runs as it is. True when the driver was patched.
 */
export function patchIndexes(driver: { prototype: Record<string, unknown> }): boolean {
  if (typeof driver.prototype.getIndexes === 'function') return false
  type Index = { name?: string; unique?: boolean; keys: Record<string, string | undefined> }
  type Self = { config: { database: string }; queue(sql: string, values: unknown[]): Promise<Record<string, string>[]>; query(sql: string): Promise<unknown> }
  const escapeId = (name: string) => `\`${name.replace(/`/g, '``')}\``
  Object.assign(driver.prototype, {
    async getIndexes(this: Self, table: string): Promise<Index[]> {
      const rows = await this.queue('SELECT * FROM information_schema.statistics WHERE TABLE_SCHEMA = ? && TABLE_NAME = ?', [this.config.database, table])
      const result: Record<string, Index> = {}
      for (const { INDEX_NAME: name, COLUMN_NAME: key, COLLATION: direction, NON_UNIQUE: unique } of rows) {
        result[name] ??= { name, unique: unique !== '1', keys: {} }
        result[name].keys[key] = direction === 'A' ? 'asc' : direction === 'D' ? 'desc' : direction
      }
      return Object.values(result)
    },
    async createIndex(this: Self, table: string, index: Index) {
      const keys = Object.entries(index.keys).map(([key, direction]) => `${escapeId(key)} ${direction ?? 'asc'}`).join(', ')
      await this.query(`ALTER TABLE ${escapeId(table)} ADD ${index.unique ? 'UNIQUE' : ''} INDEX ${index.name ? escapeId(index.name) : ''} (${keys})`)
    },
    async dropIndex(this: Self, table: string, name: string) {
      await this.query(`DROP INDEX ${escapeId(name)} ON ${escapeId(table)}`)
    },
  })
  return true
}
