/** The little a host must provide for the runtime's own diagnostics. */
export interface Logger {
  debug(format: string, ...args: unknown[]): void
  /** Things an owner should see once, not a problem (a store migrated). Falls back to `warn` where absent. */
  info?(format: string, ...args: unknown[]): void
  warn(format: string, ...args: unknown[]): void
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
}

/** Logs at `info` where the host has it, else at `warn`. */
export function info(logger: Logger, format: string, ...args: unknown[]): void {
  if (logger.info) logger.info(format, ...args)
  else logger.warn(format, ...args)
}
