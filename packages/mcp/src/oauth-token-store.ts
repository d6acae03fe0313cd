import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { McpError } from './mcp-error'

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
}

const KEY_BYTES = 32
const IV_BYTES = 12
const FORMAT = 'dogu-mcp-oauth/1'

interface SealedFile {
  format: typeof FORMAT
  /** By server: base64 of iv ‖ tag ‖ ciphertext (AES-256-GCM, the server's name as associated data). */
  records: Record<string, string>
}

/**
 * Records in one JSON file, each sealed with AES-256-GCM under a 32-byte key: given in
 * config (`key`, base64 or hex), or else made once in `keyPath` (mode 0600) beside it.
 * The server's name is bound to its record, so one server's sealed tokens moved under
 * another name do not open. Writes go through a temporary file and a rename.
 */
export class EncryptedFileOAuthStore implements McpOAuthStore {
  private key: Promise<Buffer> | undefined
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: { path: string; key?: string; keyPath?: string }) {}

  async get(server: string): Promise<McpOAuthRecord | undefined> {
    const sealed = (await this.read()).records[server]
    return sealed === undefined ? undefined : open(await this.loadKey(), server, sealed)
  }

  set(server: string, record: McpOAuthRecord): Promise<void> {
    return this.update(async (file) => {
      file.records[server] = seal(await this.loadKey(), server, record)
    })
  }

  delete(server: string): Promise<void> {
    return this.update(async (file) => {
      delete file.records[server]
    })
  }

  /** One change at a time, each on the file as the last one left it. */
  private update(change: (file: SealedFile) => Promise<void>): Promise<void> {
    const next = this.queue.then(async () => {
      const file = await this.read()
      await change(file)
      await mkdir(dirname(this.options.path), { recursive: true })
      const temporary = `${this.options.path}.${process.pid}.tmp`
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

  private loadKey(): Promise<Buffer> {
    this.key ??= this.options.key !== undefined ? Promise.resolve(parseKey(this.options.key, 'the configured key')) : this.keyFile()
    return this.key
  }

  private async keyFile(): Promise<Buffer> {
    const path = this.options.keyPath ?? join(dirname(this.options.path), 'mcp-oauth.key')
    try {
      return parseKey((await readFile(path, 'utf8')).trim(), path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const key = randomBytes(KEY_BYTES)
    await mkdir(dirname(path), { recursive: true })
    // `wx`: two bots starting at once must not each write a key of their own.
    try {
      await writeFile(path, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return parseKey((await readFile(path, 'utf8')).trim(), path)
      throw error
    }
    await chmod(path, 0o600)
    return key
  }
}

function parseKey(text: string, where: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64')
  if (key.length !== KEY_BYTES) throw new McpError('INVALID_OPTIONS', `${where} must be ${KEY_BYTES} bytes, base64 or hex (openssl rand -base64 32)`)
  return key
}

function seal(key: Buffer, server: string, record: McpOAuthRecord): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(server))
  const body = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
}

function open(key: Buffer, server: string, sealed: string): McpOAuthRecord {
  const bytes = Buffer.from(sealed, 'base64')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(server))
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + 16))
    return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + 16)), decipher.final()]).toString('utf8'))
  } catch (error) {
    throw new McpError('INVALID_OPTIONS', `the OAuth record of MCP server "${server}" does not open with this key (the key changed, or the file was edited); authorize the server again`, { cause: error })
  }
}
