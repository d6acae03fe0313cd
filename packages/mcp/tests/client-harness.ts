// A Cordis 4 app with Dogu's tools and permissions (no background service, so a timeout
// ends as `timed_out`) and the real MCP servers from npm, spawned with process.execPath.
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { PermissionService, ToolService } from '@dogu/cordis'
import type { PermissionRule } from '@dogu/core'
import { Context } from 'cordis'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientConnection, type McpServerConfig } from '../src'

const require = createRequire(import.meta.url)

/** The entry of an MCP server package from npm, as its `bin` names it. */
export function serverEntry(pkg: string): string {
  const manifest = require(`${pkg}/package.json`)
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin as Record<string, string>)[0]
  return join(require.resolve(`${pkg}/package.json`), '..', bin)
}

export const everything = (extra: Partial<McpServerConfig> = {}): McpServerConfig => ({ command: process.execPath, args: [serverEntry('@modelcontextprotocol/server-everything'), 'stdio'], ...extra } as McpServerConfig)

export async function doguApp(dir: string, rules: PermissionRule[] = []) {
  const ctx = new Context()
  guardLogs(ctx)
  await ctx.plugin(ToolService)
  await ctx.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), rules })
  return ctx
}

export function connect(ctx: Context, name: string, server: McpServerConfig) {
  // Its warnings as the client plugin reports them (internal/warn), where the log guard sees them.
  const logger = { debug() {}, warn: (format: string, ...args: unknown[]) => ctx.emit(ctx, 'internal/warn', format, ...args) }
  const connection = new McpClientConnection({ name, server, define: (tool) => ctx.tools.define(tool), logger, reconnect: { initialDelay: 10, maxDelay: 100 } })
  connection.start()
  return connection
}

/** Child processes of this process whose command line contains `needle` (Linux /proc). */
export function childrenMatching(needle: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
