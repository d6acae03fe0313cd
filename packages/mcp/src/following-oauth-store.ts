import type { Logger, MinatoDatabase } from '@dogu/core'
import { DatabaseOAuthStore, OAUTH_TABLE } from './database-oauth-store'
import type { EncryptedFileOAuthStore, McpOAuthRecord, McpOAuthStore } from './oauth-token-store'

/**
 * The token store of the MCP client plugin: the encrypted file, or the database's table
 * while one is loaded, switched as the host's database comes and goes (as Dogu's other
 * stores are). Switching to a database moves the file's records into the table, where the
 * table has none of that server, and removes them from the file: a refresh token lives in
 * one place. Whoever caches a record hears of a switch (`onSwitch`) and reads it again.
 */
export class FollowingOAuthStore implements McpOAuthStore {
  private current: McpOAuthStore
  private moving: Promise<void> = Promise.resolve()
  private readonly listeners = new Set<() => void>()

  constructor(private readonly file: EncryptedFileOAuthStore, private readonly logger: Logger) {
    this.current = file
  }

  /** Where records go from now on: the database's table, or the file when it is `undefined`. */
  use(database: MinatoDatabase | undefined): Promise<void> {
    const store = database ? new DatabaseOAuthStore(database, this.file.sealer) : this.file
    this.moving = this.moving.then(async () => {
      this.current = store
      if (store !== this.file) await this.moveFileInto(store)
    }).catch((error) => {
      this.logger.warn('moving MCP OAuth records into the table %s failed (they stay in the file): %s', OAUTH_TABLE, error instanceof Error ? error.message : String(error))
      this.current = this.file
    }).then(() => {
      for (const listener of this.listeners) listener()
    })
    return this.moving
  }

  /** `listener` runs after each switch; the returned function removes it. */
  onSwitch(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async get(server: string): Promise<McpOAuthRecord | undefined> {
    await this.moving
    return this.current.get(server)
  }

  async set(server: string, record: McpOAuthRecord): Promise<void> {
    await this.moving
    return this.current.set(server, record)
  }

  async delete(server: string): Promise<void> {
    await this.moving
    return this.current.delete(server)
  }

  async servers(): Promise<string[]> {
    await this.moving
    return this.current.servers()
  }

  private async moveFileInto(table: McpOAuthStore) {
    const inTable = new Set(await table.servers())
    let moved = 0
    for (const server of await this.file.servers()) {
      // The table's record wins: another instance on this database authorized since.
      if (!inTable.has(server)) {
        const record = await this.file.get(server)
        if (record) await table.set(server, record)
        moved++
      }
      await this.file.delete(server)
    }
    if (moved) (this.logger.info ?? this.logger.warn).call(this.logger, 'moved the OAuth records of %d MCP server(s) from the token file into the table %s', moved, OAUTH_TABLE)
  }
}
