import { createRequire } from 'node:module'

/** What a `dogu-mcp` command line asks for: serve a config, or print the usage or the version. */
export type DoguMcpArgs =
  | { command: 'serve'; config: string | undefined }
  | { command: 'help' }
  | { command: 'version' }

/** A command line `dogu-mcp` cannot read: the command prints it with the usage hint and exits 2. */
export class DoguMcpUsageError extends Error {
  override name = 'DoguMcpUsageError'
}

/** The text of `dogu-mcp --help`. */
export const DOGU_MCP_USAGE = `Usage: dogu-mcp [options] [config.json]

Serves the tools of the plugins a config file lists to an MCP client over stdio
(and over Streamable HTTP too when the config sets mcp.http). The config file
defaults to ./dogu-mcp.json. It stops when the client closes stdin, or on
SIGINT/SIGTERM. Stdout carries the protocol; everything else goes to stderr.

Options:
  -h, --help       print this help and exit
  -v, --version    print the version of @dogu/mcp and exit

Config file (JSON):
  dogu       config of Dogu's services (@dogu/cordis): tools, permissions, background
  plugins    the plugins whose tools are served: { "<package or ./path>": <its config> };
             a path is relative to the config file, a package is resolved from its folder
  mcp        what is served: include, exclude, groups, mode, authority, user, http

Example:
  dogu-mcp.json:
    {
      "plugins": { "@dogu/fs": { "workspace": "/home/me/project" } },
      "mcp": { "exclude": ["write", "edit"] }
    }
  run it:                 dogu-mcp /home/me/dogu-mcp.json
  Claude Desktop/Cursor:  { "mcpServers": { "dogu": { "command": "npx", "args": ["dogu-mcp", "/home/me/dogu-mcp.json"] } } }
  Claude Code:            claude mcp add dogu -- npx dogu-mcp /home/me/dogu-mcp.json

It runs on Cordis 4: install @dogu/mcp with @dogu/cordis and cordis 4.0.0-beta.5.
More: docs/mcp.md (https://github.com/dogu-dev/dogu/blob/main/docs/mcp.md)
`

/** Reads a `dogu-mcp` command line; anything it does not know is a `DoguMcpUsageError` naming it. */
export function parseDoguMcpArgs(argv: readonly string[]): DoguMcpArgs {
  const positionals: string[] = []
  let asked: 'help' | 'version' | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    // After `--` everything is a path, even one that starts with `-`.
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg === '-h' || arg === '--help') asked ??= 'help'
    else if (arg === '-v' || arg === '--version') asked ??= 'version'
    else if (arg.startsWith('-') && arg !== '-') throw new DoguMcpUsageError(`unknown option ${JSON.stringify(arg)} (dogu-mcp takes --help, --version and a config file)`)
    else positionals.push(arg)
  }
  if (asked) return { command: asked }
  if (positionals.length > 1) throw new DoguMcpUsageError(`expected one config file, got ${positionals.length}: ${positionals.join(' ')}`)
  return { command: 'serve', config: positionals[0] }
}

/** The version of this package, from its package.json (a package may require its own by name). */
export function doguMcpVersion(): string {
  try {
    return (createRequire(import.meta.url)('@dogu/mcp/package.json') as { version: string }).version
  } catch {
    // Bundled away from the package (the specs' stdio bundle in a temporary folder).
    return 'unknown'
  }
}
