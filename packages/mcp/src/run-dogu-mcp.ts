import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DOGU_MCP_USAGE, type DoguMcpArgs, DoguMcpUsageError, doguMcpVersion, parseDoguMcpArgs } from './dogu-mcp-args'
import { McpError } from './mcp-error'
import type { Config as ServerConfig } from './server-plugin'

/** What `dogu-mcp` reads: Dogu's services, the plugins whose tools it serves, and what to serve. */
export interface DoguMcpConfig {
  /** Config of `@dogu/cordis`'s services: `{ tools, permissions, background }`. */
  dogu?: Record<string, unknown>
  /** Plugins to load, by module (a package name or a path relative to the config file), with their config. */
  plugins?: Record<string, unknown>
  /** What the MCP server serves: `include`, `exclude`, `groups`, `mode`, `authority`, `http`. */
  mcp?: Omit<ServerConfig, 'stdio'>
}

/**
 * `dogu-mcp [config.json]` (`argv` as the command takes it; `--help` and `--version` are
 * the command's, `runDoguMcpCommand`): a Cordis 4 app with Dogu's services and the listed plugins,
 * serving their tools over stdio (and Streamable HTTP when `mcp.http` is set). Returns a
 * function that stops the app. Loads cordis and @dogu/cordis (optional peers of this
 * package) only when called, so hosts that import this package (Koishi) need neither.
 */
export async function runDoguMcp(argv: readonly string[] = process.argv.slice(2)): Promise<() => Promise<void>> {
  let args: DoguMcpArgs
  try {
    args = parseDoguMcpArgs(argv)
  } catch (error) {
    throw new McpError('INVALID_OPTIONS', `dogu-mcp: ${(error as Error).message}`)
  }
  if (args.command !== 'serve') throw new McpError('INVALID_OPTIONS', `dogu-mcp: --${args.command} is the command's (runDoguMcpCommand), there is nothing to serve`)
  const file = resolve(args.config ?? 'dogu-mcp.json')
  let config: DoguMcpConfig
  try {
    config = JSON.parse(await readFile(file, 'utf8'))
  } catch (error) {
    throw new McpError('INVALID_OPTIONS', `cannot read the dogu-mcp config ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new McpError('INVALID_OPTIONS', `${file}: expected a JSON object with "plugins"`)
  if (config.plugins !== undefined && (!config.plugins || typeof config.plugins !== 'object' || Array.isArray(config.plugins))) {
    throw new McpError('INVALID_OPTIONS', `${file}: "plugins" must be an object of { "module": config }`)
  }
  // stdout carries the protocol: anything printed goes to stderr.
  console.log = console.error
  console.info = console.error
  const [{ Context }, { DoguPlugin }, server] = await Promise.all([import('cordis'), import('@dogu/cordis'), import('./server-plugin')]).catch((error) => {
    // Optional peers, so a Koishi instance can install @dogu/mcp without Cordis 4: the command needs them.
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && /'(@dogu\/cordis|cordis)'/.test(String(error.message))) {
      throw new McpError('INVALID_OPTIONS', `dogu-mcp runs on Cordis 4: install @dogu/cordis and cordis 4.0.0-beta.5 beside @dogu/mcp (docs/mcp.md): ${error.message}`)
    }
    throw error
  })
  const ctx = new Context()
  await ctx.plugin(DoguPlugin, config.dogu ?? {})
  const require = createRequire(file)
  for (const [specifier, pluginConfig] of Object.entries(config.plugins ?? {})) {
    const path = specifier.startsWith('.') || isAbsolute(specifier) ? resolve(dirname(file), specifier) : require.resolve(specifier)
    const loaded = await import(pathToFileURL(path).href)
    const plugin = typeof loaded.default?.apply === 'function' || typeof loaded.default === 'function' ? loaded.default : loaded
    await ctx.plugin(plugin, pluginConfig ?? {})
  }
  await ctx.plugin(server as any, { ...config.mcp, stdio: true })
  return async () => {
    await ctx.fiber.dispose()
  }
}

/**
 * What the `dogu-mcp` command does: `--help` prints the usage and `--version` the package's
 * version (exit 0); an option it does not know prints why and the usage hint (exit 2).
 * Otherwise `runDoguMcp`, then it stops the app when the client closes stdin or on
 * SIGINT/SIGTERM and exits; a failure to start prints its message and exits 1.
 */
export function runDoguMcpCommand(argv: readonly string[] = process.argv.slice(2)): void {
  let args: DoguMcpArgs
  try {
    args = parseDoguMcpArgs(argv)
  } catch (error) {
    if (!(error instanceof DoguMcpUsageError)) throw error
    process.stderr.write(`dogu-mcp: ${error.message}\nRun "dogu-mcp --help" for usage.\n`)
    // Not process.exit: what was written to a pipe is flushed before the process ends.
    process.exitCode = 2
    return
  }
  if (args.command === 'help' || args.command === 'version') {
    process.stdout.write(args.command === 'help' ? DOGU_MCP_USAGE : `${doguMcpVersion()}\n`)
    return
  }
  runDoguMcp(argv).then((stop) => {
    let stopping: Promise<unknown> | undefined
    const end = () => {
      stopping ??= stop().finally(() => process.exit(0))
    }
    process.stdin.once('end', end)
    process.once('SIGINT', end)
    process.once('SIGTERM', end)
  }, (error) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  })
}
