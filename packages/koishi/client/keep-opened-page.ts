import { type Context, global, store } from '@koishijs/client'
import { watch } from 'vue'

/** Where @koishijs/plugin-auth sends the console once a login succeeds, when it has nowhere better. */
const PROFILE = '/profile'

/**
 * Keeps a console opened at `path` (a direct link, a reload) on that page through
 * @koishijs/plugin-auth's login.
 *
 * After every load plugin-auth logs in again with the token it kept, and once the user is
 * known it goes to the page its own guard had sent to its login page, or else to
 * `/profile`. A page whose extension registers its route after the console's first
 * navigation (every extension's does) was not sent to the login page by that guard, so a
 * reload of it landed on `/profile`. The navigation to `/profile` that the first login
 * makes is turned back to `path`, when the document was opened there; a later visit to the
 * profile is the user's own and is left alone.
 */
export function keepOpenedPage(ctx: Context, path: string): void {
  if (openedPath() !== path) return
  const router = ctx.$router.router
  let login: 'waiting' | 'now' | 'done' = store.user ? 'done' : 'waiting'
  // The login's move comes from plugin-auth's own watcher of the user: in the same flush
  // as the user's arrival, so a synchronous watcher marks the moment and a task ends it.
  ctx.effect(() => watch(() => store.user, (user) => {
    if (!user || login !== 'waiting') return
    login = 'now'
    setTimeout(() => { login = 'done' })
  }, { flush: 'sync' }))
  ctx.effect(() => router.beforeEach((to) => {
    if (login === 'now' && to.path === PROFILE) return path
  }))
  // This extension came after the login and its move: the console is on the profile the
  // document was not opened at, and nobody has clicked anything yet.
  if (login === 'done' && router.currentRoute.value.path === PROFILE) void router.replace(path)
}

/** The console path the document was loaded at (the address typed, linked or reloaded), without the console's base. */
function openedPath(): string {
  const entry = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined
  const { pathname } = new URL(entry?.name ?? location.href)
  const base = (global.uiPath ?? '').replace(/\/$/, '')
  const path = base && pathname.startsWith(base) ? pathname.slice(base.length) : pathname
  return path.replace(/\/$/, '') || '/'
}
