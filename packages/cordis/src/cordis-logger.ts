import type { Logger } from '@dogu/core'
import type { Context } from 'cordis'

/** The runtime's warnings as Cordis `internal/warn` events, where the app's logger shows them. */
export function cordisLogger(ctx: Context): Logger {
  return {
    debug() {},
    info: (format, ...args) => ctx.emit(ctx, 'internal/info', format, ...args),
    warn: (format, ...args) => ctx.emit(ctx, 'internal/warn', format, ...args),
  }
}
