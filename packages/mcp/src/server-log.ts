import type { Logger, LogLevel } from '@dogu/core'
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js'

// Where a server's own log line lands on the host when no call of it runs: its severity kept
// as far as Dogu's logger has one (debug, info, warn).
const HOST_LEVEL: Readonly<Record<LogLevel, 'debug' | 'info' | 'warn'>> = Object.freeze({
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'warn',
  critical: 'warn',
  alert: 'warn',
  emergency: 'warn',
})

/** How much of one line reaches the host's log: a server cannot flood it with one message. */
const MAX_LINE = 2000

/**
 * A server's `notifications/message` outside any call, on the host's logger at the matching
 * severity: `MCP server "fs" (watcher) error: …`. `secrets` (the configured headers) are
 * `[redacted]`, as in results.
 */
export function logServerMessage(logger: Logger, server: string, params: LoggingMessageNotification['params'], secrets: readonly string[]): void {
  let text = typeof params.data === 'string' ? params.data : safeJson(params.data)
  for (const secret of secrets) if (secret) text = text.split(secret).join('[redacted]')
  if (text.length > MAX_LINE) text = `${text.slice(0, MAX_LINE)}… (${text.length - MAX_LINE} more characters)`
  const origin = typeof params.logger === 'string' ? ` (${params.logger})` : ''
  const format = 'MCP server "%s"%s %s: %s'
  const level = HOST_LEVEL[params.level] ?? 'warn'
  if (level === 'info' && !logger.info) return logger.debug(format, server, origin, params.level, text)
  logger[level]!(format, server, origin, params.level, text)
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
