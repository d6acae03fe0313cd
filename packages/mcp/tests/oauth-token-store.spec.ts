// The encrypted file where imported servers' OAuth tokens live: what it keeps, and how it
// refuses what it cannot trust (a record moved to another server, another key, a damaged file).
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { McpError } from '../src'
import { EncryptedFileOAuthStore, type McpOAuthRecord } from '../src/oauth-token-store'

const RECORD: McpOAuthRecord = {
  client: { client_id: 'client-1' },
  tokens: { access_token: 'at-secret-1', token_type: 'bearer', refresh_token: 'rt-secret-1', expires_in: 3600 },
}

let dir: string
let path: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-oauth-store-'))
  path = join(dir, 'mcp-oauth.json')
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const invalid = (pattern: RegExp) => (error: unknown) => McpError.is(error, 'INVALID_OPTIONS') && pattern.test((error as Error).message)

describe('EncryptedFileOAuthStore', () => {
  it('keeps a record across instances, sealed: no secret in the file, the key file made 0600', async () => {
    await new EncryptedFileOAuthStore({ path }).set('vault', RECORD)
    expect(await new EncryptedFileOAuthStore({ path }).get('vault')).toEqual(RECORD)
    expect(await new EncryptedFileOAuthStore({ path }).get('other')).toBeUndefined()
    const text = await readFile(path, 'utf8')
    expect(text).not.toMatch(/secret|client-1/)
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect((await stat(join(dir, 'mcp-oauth.key'))).mode & 0o777).toBe(0o600)

    await new EncryptedFileOAuthStore({ path }).delete('vault')
    expect(await new EncryptedFileOAuthStore({ path }).get('vault')).toBeUndefined()
  })

  it('a configured key, base64 or hex, makes no key file', async () => {
    const key = randomBytes(32)
    await new EncryptedFileOAuthStore({ path, key: key.toString('base64') }).set('vault', RECORD)
    expect(await new EncryptedFileOAuthStore({ path, key: key.toString('hex') }).get('vault')).toEqual(RECORD)
    await expect(stat(join(dir, 'mcp-oauth.key'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a record sealed for one server does not open under another name', async () => {
    const store = new EncryptedFileOAuthStore({ path })
    await store.set('alpha', RECORD)
    const file = JSON.parse(await readFile(path, 'utf8'))
    file.records = { beta: file.records.alpha }
    await writeFile(path, JSON.stringify(file))
    await expect(new EncryptedFileOAuthStore({ path }).get('beta')).rejects.toSatisfy(invalid(/OAuth record of MCP server "beta" in .*mcp-oauth.json does not open .*authorize the server again/))
  })

  it('another key refuses to open the records, saying to authorize again', async () => {
    await new EncryptedFileOAuthStore({ path, key: randomBytes(32).toString('base64') }).set('vault', RECORD)
    await expect(new EncryptedFileOAuthStore({ path, key: randomBytes(32).toString('base64') }).get('vault'))
      .rejects.toSatisfy(invalid(/does not open with this key \(the key changed, or the record was edited\); authorize the server again/))
  })

  it('a key of the wrong length is refused, saying what a key is', async () => {
    for (const key of ['c2hvcnQ=', randomBytes(16).toString('hex'), '']) {
      await expect(new EncryptedFileOAuthStore({ path, key }).set('vault', RECORD)).rejects.toSatisfy(invalid(/the configured key must be 32 bytes, base64 or hex \(openssl rand -base64 32\)/))
    }
    await writeFile(join(dir, 'mcp-oauth.key'), 'too-short\n')
    await expect(new EncryptedFileOAuthStore({ path }).set('vault', RECORD)).rejects.toSatisfy(invalid(/mcp-oauth\.key must be 32 bytes/))
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a damaged file is refused by name, and neither a read nor a write replaces it', async () => {
    for (const damaged of ['{"records": {"vault": "x"', JSON.stringify({ format: 'something-else/9', records: {} })]) {
      await writeFile(path, damaged)
      const store = new EncryptedFileOAuthStore({ path })
      await expect(store.get('vault')).rejects.toSatisfy(invalid(new RegExp(`the MCP OAuth token file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not`)))
      await expect(store.set('vault', RECORD)).rejects.toSatisfy(invalid(/is not/))
      expect(await readFile(path, 'utf8')).toBe(damaged)
    }
  })

  it('concurrent writes of one store lose nothing, and servers\' records coexist', async () => {
    const store = new EncryptedFileOAuthStore({ path })
    const names = Array.from({ length: 20 }, (_, i) => `s${i}`)
    await Promise.all(names.map((name) => store.set(name, { client: { client_id: name } })))
    const reader = new EncryptedFileOAuthStore({ path })
    for (const name of names) expect(await reader.get(name)).toEqual({ client: { client_id: name } })

    await Promise.all([store.set('s0', RECORD), store.delete('s1'), store.set('s2', { codeVerifier: 'v' })])
    expect(await reader.get('s0')).toEqual(RECORD)
    expect(await reader.get('s1')).toBeUndefined()
    expect(await reader.get('s2')).toEqual({ codeVerifier: 'v' })
    expect(await reader.get('s3')).toEqual({ client: { client_id: 's3' } })
  })
})
