import type { Logger } from '@dogu/core'
import type { Context } from 'koishi'

/** The runtime's warnings on Koishi's logger `dogu`, where the console and log files show them. */
export function koishiLogger(ctx: Context): Logger {
  const logger = ctx.logger('dogu')
  return {
    debug: (format, ...args) => logger.debug(format, ...args),
    info: (format, ...args) => logger.info(format, ...args),
    warn: (format, ...args) => logger.warn(format, ...args),
  }
}
