import { store, useRpc } from '@koishijs/client'
import { computed, type ComputedRef } from 'vue'
import type { ConsolePageData } from '../src/console-page'

/**
 * Where the console's login stands for the Dogu page:
 * - `open`: no @koishijs/plugin-auth, no login to wait for;
 * - `in`: logged in (plugin-auth's `user` has come);
 * - `pending`: plugin-auth is logging in again with the token it kept after a load;
 * - `out`: nobody is logged in, nor logging in.
 */
export type LoginState = 'open' | 'in' | 'pending' | 'out'

/** The login state, for the page's component (it reads the entry's data, `ConsolePageData`). */
export function useLogin(): ComputedRef<LoginState> {
  const data = useRpc<ConsolePageData | undefined>()
  return computed(() => {
    if (!data?.value?.login) return 'open'
    if (store.user) return 'in'
    return store.user === undefined && keptToken() ? 'pending' : 'out'
  })
}

/**
 * Whether plugin-auth kept a login token that has not expired: after a load it logs in with
 * it at once. Read only, from the storage plugin-auth writes (`koishi.console.auth`); a
 * format it no longer has reads as no token, and the page says to log in.
 */
function keptToken(): boolean {
  try {
    const kept = JSON.parse(localStorage.getItem('koishi.console.auth') ?? 'null') as { token?: unknown; expiredAt?: unknown } | null
    return typeof kept?.token === 'string' && typeof kept.expiredAt === 'number' && kept.expiredAt > Date.now()
  } catch {
    return false
  }
}
