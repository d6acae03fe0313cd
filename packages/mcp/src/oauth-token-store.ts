import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { McpError } from './mcp-error'
import { OAuthSealer } from './oauth-sealer'

/**
 * What Dogu keeps of one imported server's OAuth: the client it registered (or was given),
 * the tokens, and the PKCE verifier of an authorization under way. Secret, so never in the
 * grant store, the logs or the audit log.
 */
export interface McpOAuthRecord {
  client?: OAuthClientInformationMixed
  tokens?: OAuthTokens
  /** The PKCE verifier of the authorization under way. */
  codeVerifier?: string
}

/** Where OAuth records live, by server name. */
export interface McpOAuthStore {
  get(server: string): Promise<McpOAuthRecord | undefined>
  set(server: string, record: McpOAuthRecord): Promise<void>
  delete(server: string): Promise<void>
  /** The servers with a record (to move them into another store). */
  servers(): Promise<string[]>
  /** A store that changes where records live tells who caches one to read it again. */
  onSwitch?(listener: () => void): () => void
}

const FORMAT = 'dogu-mcp-oauth/1'

interface SealedFile {
  format: typeof FORMAT
  /** By server: base64 of iv ‖ tag ‖ ciphertext (AES-256-GCM, the server's name as associated data). */
  records: Record<string, string>
}

/**
 * Records in one JSON file, each sealed by `OAuthSealer` under a 32-byte key: given in
 * config (`key`, base64 or hex), or else made once in `keyPath` (mode 0600; default
 * `mcp-oauth.key` beside the file). Writes go through a temporary file and a rename, one
 * at a time. One process per file: two bots writing the same file lose each other's
 * changes (a database store is the shared one).
 */
export class EncryptedFileOAuthStore implements McpOAuthStore {
  readonly sealer: OAuthSealer
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: { path: string; key?: string; keyPath?: string }) {
    this.sealer = new OAuthSealer({ key: options.key, keyPath: options.keyPath ?? join(dirname(options.path), 'mcp-oauth.key') })
  }

  async get(server: string): Promise<McpOAuthRecord | undefined> {
    const sealed = (await this.read()).records[server]
    return sealed === undefined ? undefined : this.sealer.open(server, sealed, this.options.path)
  }

  set(server: string, record: McpOAuthRecord): Promise<void> {
    return this.update(async (file) => {
      file.records[server] = await this.sealer.seal(server, record)
    })
  }

  delete(server: string): Promise<void> {
    return this.update(async (file) => {
      if (!(server in file.records)) return false
      delete file.records[server]
    })
  }

  async servers(): Promise<string[]> {
    return Object.keys((await this.read()).records)
  }

  /** One change at a time, each on the file as the last one left it; `false` from `change` writes nothing. */
  private update(change: (file: SealedFile) => Promise<void | false>): Promise<void> {
    const next = this.queue.then(async () => {
      const file = await this.read()
      if (await change(file) === false) return
      await mkdir(dirname(this.options.path), { recursive: true })
      const temporary = `${this.options.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(temporary, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 })
      await rename(temporary, this.options.path)
    })
    this.queue = next.catch(() => {})
    return next
  }

  private async read(): Promise<SealedFile> {
    let text: string
    try {
      text = await readFile(this.options.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { format: FORMAT, records: {} }
      throw error
    }
    let file: SealedFile
    try {
      file = JSON.parse(text)
    } catch (error) {
      throw new McpError('INVALID_OPTIONS', `the MCP OAuth token file ${this.options.path} is not JSON; move it away to start over`, { cause: error })
    }
    if (file?.format !== FORMAT || !file.records || typeof file.records !== 'object') {
      throw new McpError('INVALID_OPTIONS', `the MCP OAuth token file ${this.options.path} is not a ${FORMAT} file`)
    }
    return file
  }
}
