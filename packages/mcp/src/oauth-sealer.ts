import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { McpError } from './mcp-error'
import type { McpOAuthRecord } from './oauth-token-store'

const KEY_BYTES = 32
const IV_BYTES = 12

/**
 * Seals OAuth records with AES-256-GCM under a 32-byte key: given in config (`key`,
 * base64 or hex), or else made once in `keyPath` (mode 0600). The server's name is the
 * associated data, so one server's sealed tokens moved under another name do not open.
 * Every store of records (the file, a database table) seals with it, so a table holds
 * nothing a database dump could use without the key.
 */
export class OAuthSealer {
  private key: Promise<Buffer> | undefined

  constructor(private readonly options: { key?: string; keyPath: string }) {}

  async seal(server: string, record: McpOAuthRecord): Promise<string> {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', await this.loadKey(), iv)
    cipher.setAAD(Buffer.from(server))
    const body = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()])
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
  }

  async open(server: string, sealed: string, where: string): Promise<McpOAuthRecord> {
    const key = await this.loadKey()
    const bytes = Buffer.from(sealed, 'base64')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
      decipher.setAAD(Buffer.from(server))
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + 16))
      return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + 16)), decipher.final()]).toString('utf8'))
    } catch (error) {
      throw new McpError('INVALID_OPTIONS', `the OAuth record of MCP server "${server}" in ${where} does not open with this key (the key changed, or the record was edited); authorize the server again`, { cause: error })
    }
  }

  private loadKey(): Promise<Buffer> {
    this.key ??= this.options.key !== undefined ? Promise.resolve(parseKey(this.options.key, 'the configured key')) : this.keyFile()
    // A failed read (a file of the wrong size) is tried again next time, not kept.
    this.key.catch(() => { this.key = undefined })
    return this.key
  }

  private async keyFile(): Promise<Buffer> {
    const path = this.options.keyPath
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
