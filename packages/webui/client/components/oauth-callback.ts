import type { InjectionKey, Ref } from 'vue'
import { ref } from 'vue'
import type { Transport } from '../transport'

/**
 * The console's OAuth callback page (`/dogu/mcp/oauth/callback`, `OAUTH_CALLBACK_PATH` of
 * the server): the authorization server sends the operator back there with `code` and
 * `state`, or with `error`. The page, not the route, completes the authorization, through
 * the API as whoever is logged in to the console.
 */
const CALLBACK_SUFFIX = '/mcp/oauth/callback'

/** Where the authorization the page came back with stands. */
export type OAuthOutcome =
  | { phase: 'completing' }
  | { phase: 'authorized'; server: string }
  /** `message`: from the console (a foreign state, a failed token exchange). */
  | { phase: 'failed'; message: string }
  /** `error`: the authorization server's own refusal, never sent on. */
  | { phase: 'refused'; error: string }
  | { phase: 'no-code' }

export const OAUTH_OUTCOME: InjectionKey<Ref<OAuthOutcome | undefined>> = Symbol('dogu oauth outcome')

/**
 * Reads what the redirect brought, once, and takes it out of the address bar (a code must
 * not stay in the history or be bookmarked), leaving the console on its MCP servers view.
 * `undefined` when the page is not a callback.
 */
export function takeOAuthReturn(): { code?: string; state?: string; error?: string; description?: string } | undefined {
  const query = new URLSearchParams(location.search)
  const atCallback = location.pathname.endsWith(CALLBACK_SUFFIX)
  if (!atCallback && !(query.has('state') && (query.has('code') || query.has('error')))) return undefined
  const page = atCallback ? `${location.pathname.slice(0, -CALLBACK_SUFFIX.length)}/` : location.pathname
  history.replaceState(null, '', `${page}#mcp`)
  const value = (key: string) => query.get(key) ?? undefined
  return { code: value('code'), state: value('state'), error: value('error'), description: value('error_description') }
}

/** Completes the authorization the page came back with (`sources.complete`); the outcome fills in as it goes. */
export function completeOAuth(transport: Transport, returned: NonNullable<ReturnType<typeof takeOAuthReturn>>): Ref<OAuthOutcome> {
  const outcome = ref<OAuthOutcome>({ phase: 'completing' })
  if (returned.error) {
    outcome.value = { phase: 'refused', error: returned.description ? `${returned.error}: ${returned.description}` : returned.error }
  } else if (!returned.code || !returned.state) {
    outcome.value = { phase: 'no-code' }
  } else {
    transport.send<{ name: string }>('sources.complete', { code: returned.code, state: returned.state }).then(
      ({ name }) => { outcome.value = { phase: 'authorized', server: name } },
      (error: unknown) => { outcome.value = { phase: 'failed', message: error instanceof Error ? error.message : String(error) } },
    )
  }
  return outcome
}
