import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { McpOAuthConfig } from './mcp-server-config'
import { McpError } from './mcp-error'
import type { McpOAuthRecord, McpOAuthStore } from './oauth-token-store'

/** An authorization a person has to complete: open `url`, and the redirect brings `state` back. */
export interface PendingAuthorization {
  url: string
  state: string
  /** Who started it (an operator's id), when one did: the callback must come from the same. */
  by?: string
}

/**
 * The SDK's OAuth client, kept in Dogu's token store: the SDK discovers the metadata,
 * registers (dynamically, by a Client ID Metadata Document, or not at all with a configured
 * `clientId`), runs PKCE, refreshes, and steps up scope; this keeps what it learns, and
 * instead of opening a browser records the authorization URL for a person
 * (`onAuthorization`).
 */
export class McpOAuthProvider implements OAuthClientProvider {
  private pending: PendingAuthorization | undefined
  private record: Promise<McpOAuthRecord> | undefined
  /** Who asked for the authorization being prepared; `begin` sets it. */
  private by: string | undefined

  constructor(
    private readonly server: string,
    private readonly config: McpOAuthConfig,
    private readonly store: McpOAuthStore,
    private readonly events: { onAuthorization(pending: PendingAuthorization): void; onTokens?(tokens: string[]): void; onStoreSwitch?(): void },
  ) {
    // The records moved (a database was loaded): the next request reads this server's anew.
    store.onSwitch?.(() => {
      this.record = undefined
      this.events.onStoreSwitch?.()
    })
  }

  get redirectUrl(): string {
    const { redirectUrl } = this.config
    const url = typeof redirectUrl === 'function' ? redirectUrl() : redirectUrl
    // The console's server has no address yet (Koishi's learns its port once it listens): the attempt fails and is retried.
    if (url === undefined) throw new McpError('INVALID_OPTIONS', `MCP server "${this.server}": no OAuth redirect URL (no console server is loaded, or it is not listening yet); set oauth.redirectUrl, or load a server plugin (its selfUrl is used)`)
    return url
  }

  get clientMetadataUrl(): string | undefined {
    return this.config.clientMetadataUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.config.clientName ?? 'Dogu',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.config.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...this.config.scopes?.length ? { scope: this.config.scopes.join(' ') } : {},
    }
  }

  /** The authorization a person has to complete, if one is under way. */
  get authorization(): PendingAuthorization | undefined {
    return this.pending
  }

  /** Marks who starts the next authorization (the operator pressing "Authorize"). */
  begin(by: string | undefined): void {
    this.by = by
  }

  state(): string {
    return randomBytes(24).toString('base64url')
  }

  /** Whether `state` is the one of the authorization under way (and `by`, when it was started by someone, the same person). */
  matches(state: string, by?: string): boolean {
    const pending = this.pending
    if (!pending) return false
    const a = Buffer.from(pending.state)
    const b = Buffer.from(state)
    if (a.length !== b.length || !timingSafeEqual(a, b)) return false
    return pending.by === undefined || pending.by === by
  }

  /** Ends the authorization under way (its code was used, or it was given up). */
  settle(): void {
    this.pending = undefined
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    if (this.config.clientId !== undefined) {
      return { client_id: this.config.clientId, ...this.config.clientSecret !== undefined ? { client_secret: this.config.clientSecret } : {} }
    }
    return (await this.load()).client
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.save({ client })
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.load()).tokens
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.tell(tokens)
    await this.save({ tokens })
  }

  redirectToAuthorization(url: URL): void {
    const state = url.searchParams.get('state') ?? ''
    this.pending = { url: url.href, state, ...this.by !== undefined ? { by: this.by } : {} }
    this.by = undefined
    this.events.onAuthorization(this.pending)
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.save({ codeVerifier })
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.load()).codeVerifier
    if (!verifier) throw new Error(`no authorization of MCP server "${this.server}" is under way`)
    return verifier
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const record = { ...await this.load() }
    if (scope === 'all' || scope === 'client') delete record.client
    if (scope === 'all' || scope === 'tokens') delete record.tokens
    if (scope === 'all' || scope === 'verifier') delete record.codeVerifier
    this.record = Promise.resolve(record)
    await this.store.set(this.server, record)
  }

  private tell(tokens: OAuthTokens | undefined): void {
    const values = [tokens?.access_token, tokens?.refresh_token].filter((value): value is string => typeof value === 'string' && value.length > 0)
    if (values.length) this.events.onTokens?.(values)
  }

  private load(): Promise<McpOAuthRecord> {
    this.record ??= this.store.get(this.server).then((record) => {
      this.tell(record?.tokens)
      return record ?? {}
    })
    // A failed read is tried again next time, not kept.
    this.record.catch(() => { this.record = undefined })
    return this.record
  }

  private async save(change: Partial<McpOAuthRecord>): Promise<void> {
    const record = { ...await this.load(), ...change }
    this.record = Promise.resolve(record)
    await this.store.set(this.server, record)
  }
}
