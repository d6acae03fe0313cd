import type { MinatoDatabase } from '@dogu/core'
import type { Context } from 'koishi'

/**
 * Koishi's database when a driver is loaded (minato sets `ctx.database` once a driver has
 * started), as the structural type Dogu's stores take; `undefined` otherwise.
 */
export function koishiDatabase(ctx: Context): MinatoDatabase | undefined {
  // Koishi's `Database` is generic over its tables; the stores need only its methods.
  return (ctx.get('database') ?? undefined) as unknown as MinatoDatabase | undefined
}

/**
 * Restarts the calling plugin when a database appears or goes, so it picks its stores
 * again: cordis 3 restarts a plugin for a changed `required` service only, and a driver
 * sets `database` after the app's `ready`, usually after Dogu's services were made.
 */
export function followDatabase(ctx: Context, using: boolean): void {
  ctx.on('internal/service', (name) => {
    if (name !== 'database' || !!koishiDatabase(ctx) === using) return
    // A stopping app withdraws its services: nothing to pick again then.
    if (!ctx.root.lifecycle.isActive || ctx.scope.uid === null) return
    ctx.scope.restart()
  })
}
