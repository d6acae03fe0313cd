import { type Context, Schema } from 'koishi'
import { described } from './schema-text'

/**
 * `mcp` of the Dogu plugin's config: the config of @dogu/mcp's client plugin (docs/mcp.md),
 * which imports MCP servers' tools. Koishi's loader resolves plugin names to
 * `koishi-plugin-*` packages, so @dogu/mcp cannot be named in koishi.yml; here it is loaded
 * from there, when it is installed beside this plugin.
 */
export interface McpImportConfig {
  /** MCP servers by name: `{ command, args }` (stdio) or `{ url, headers?, auth? }` (Streamable HTTP). */
  servers?: Record<string, unknown>
  reconnect?: { initialDelay?: number; maxDelay?: number }
  oauth?: { storePath?: string; key?: string; redirectUrl?: string }
}

// Checked in full by @dogu/mcp's own schema when its plugin starts: this one only shapes the form.
export const McpImportConfig: Schema<McpImportConfig> = described(Schema.object({
  servers: described(Schema.dict(Schema.any()).default({}),
    'MCP servers by name: { command, args } or { url, auth: oauth }. Needs @dogu/mcp installed.',
    'MCP 服务器（按名称）：{ command, args } 或 { url, auth: oauth }。需另行安装 @dogu/mcp。'),
  reconnect: described(Schema.object({
    initialDelay: described(Schema.natural().role('ms'), 'First wait before reconnecting (ms). Default 500.', '首次重连前的等待（毫秒），默认 500。'),
    maxDelay: described(Schema.natural().role('ms'), 'Longest wait between reconnections (ms). Default 30000.', '重连间隔的上限（毫秒），默认 30000。'),
  }), 'Backoff between reconnection attempts.', '重连的退避间隔。'),
  oauth: described(Schema.object({
    storePath: described(Schema.string(), 'The encrypted token file, used without a database. Default data/dogu/mcp-oauth.json.', '加密的令牌文件（无数据库时使用），默认 data/dogu/mcp-oauth.json。'),
    key: described(Schema.string().role('secret'), 'The 32-byte key, base64 or hex. Default: one made in mcp-oauth.key (0600). Instances sharing a database need the same key.', '32 字节密钥（base64 或 hex）。默认在 mcp-oauth.key（0600）中生成；共用数据库的多个实例须配置同一密钥。'),
    redirectUrl: described(Schema.string().role('link'), 'Where authorization servers send the person back. Default: Koishi\'s server selfUrl + /dogu/mcp/oauth/callback.', '授权服务器把用户送回的地址，默认为 Koishi 服务器的 selfUrl + /dogu/mcp/oauth/callback。'),
  }), 'OAuth of servers with auth: tokens in the dogu_mcp_oauth table with a database, else in the file; encrypted at rest.', '带 auth 的服务器的 OAuth：有数据库时令牌存于 dogu_mcp_oauth 表，否则存于文件；均加密保存。'),
}), 'Imported MCP servers (@dogu/mcp): their tools become Dogu tools.', '导入的 MCP 服务器（@dogu/mcp）：其工具成为 Dogu 工具。') as Schema<McpImportConfig>

type McpModule = { McpClientPlugin: Parameters<Context['plugin']>[0] }

/** Loads @dogu/mcp's client plugin with `config` when servers are configured. */
export function mcpImport(ctx: Context, config: McpImportConfig = {}): Promise<void> {
  return importWith(ctx, config, () => import('@dogu/mcp') as Promise<never>)
}

/** `mcpImport` with the package loaded by `load` (a test's stand-in for a missing install). */
export async function importWith(ctx: Context, config: McpImportConfig, load: () => Promise<McpModule>): Promise<void> {
  if (!Object.keys(config.servers ?? {}).length) return
  let mcp: McpModule
  try {
    mcp = await load()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes('@dogu/mcp')) {
      ctx.logger('dogu').warn('mcp.servers needs the package @dogu/mcp: install it in this Koishi instance (npm install @dogu/mcp), then reload dogu')
      return
    }
    throw error
  }
  // Unloaded while the package loaded: nothing to start.
  if (ctx.scope.uid === null) return
  ctx.plugin(mcp.McpClientPlugin, config)
}
