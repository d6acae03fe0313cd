import type { MinatoDatabase } from '@dogu/core'
import type { OAuthSealer } from './oauth-sealer'
import type { McpOAuthRecord, McpOAuthStore } from './oauth-token-store'

/** The table imported servers' OAuth records live in when a database is loaded. */
export const OAUTH_TABLE = 'dogu_mcp_oauth'

const FIELDS = {
  server: { type: 'string', length: 255 },
  /** The record sealed as in the file (AES-256-GCM, the server's name bound): a dump of the table holds no token. */
  record: { type: 'text' },
  updatedAt: { type: 'double' },
}

/**
 * OAuth records in a minato table (`dogu_mcp_oauth`), a row per server, sealed with the
 * same key as the file store: the key stays in config or the data directory, never in
 * the database beside what it opens.
 */
export class DatabaseOAuthStore implements McpOAuthStore {
  private prepared = false

  constructor(private readonly database: MinatoDatabase, private readonly sealer: OAuthSealer) {}

  async get(server: string): Promise<McpOAuthRecord | undefined> {
    const [row] = await this.table().get(OAUTH_TABLE, { server })
    return typeof row?.record === 'string' ? this.sealer.open(server, row.record, `the table ${OAUTH_TABLE}`) : undefined
  }

  async set(server: string, record: McpOAuthRecord): Promise<void> {
    const sealed = await this.sealer.seal(server, record)
    await this.table().upsert(OAUTH_TABLE, [{ server, record: sealed, updatedAt: Date.now() }], 'server')
  }

  async delete(server: string): Promise<void> {
    await this.table().remove(OAUTH_TABLE, { server })
  }

  async servers(): Promise<string[]> {
    return (await this.table().get(OAUTH_TABLE, {})).map((row) => String(row.server))
  }

  private table(): MinatoDatabase {
    if (!this.prepared) {
      this.database.extend(OAUTH_TABLE, FIELDS, { primary: 'server' })
      this.prepared = true
    }
    return this.database
  }
}
