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

/** What a Dogu service does as Koishi's database comes and goes. */
export interface DatabaseFollower {
  /** The database appeared or went while the app runs: switch the engine's store. */
  switch(database: MinatoDatabase | undefined): void
  /**
   * The database went while the app stops (its driver was disposed before Dogu): the
   * store on it must stop writing, since its driver is gone.
   */
  lost(reason: string): void
}

/**
 * Follows Koishi's database for a service whose engine must outlive it. A driver sets
 * `database` after the app's `ready`, usually after Dogu's services were made, and a
 * reloaded driver withdraws it and sets it again; the engine (its askers, rules, waiting
 * requests, running tasks) stays, and only its store is switched. cordis 3 would restart a
 * plugin only for a `required` service, and a restart would lose all of that.
 */
export function followDatabase(ctx: Context, follower: DatabaseFollower): void {
  let using = !!koishiDatabase(ctx)
  ctx.on('internal/service', (name) => {
    if (name !== 'database' || ctx.scope.uid === null) return
    const database = koishiDatabase(ctx)
    if (!!database === using) return
    using = !!database
    // A stopping app withdraws its services in load order: a driver loaded before Dogu
    // stops first, and what Dogu writes while it stops can no longer reach the table.
    if (!ctx.root.lifecycle.isActive) {
      if (!database) follower.lost('the database stopped before Dogu did')
      return
    }
    follower.switch(database)
  })
}
