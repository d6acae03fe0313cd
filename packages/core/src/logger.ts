/** The little a host must provide for the runtime's own diagnostics. */
export interface Logger {
  debug(format: string, ...args: unknown[]): void
  warn(format: string, ...args: unknown[]): void
}

export const silentLogger: Logger = {
  debug() {},
  warn() {},
}
