import type { Asker, CallInfo, LogLevel, Tool, ToolOptions, Toolset, ToolsetOptions, ToolSource } from '@dogu/core'

/**
 * The part of a Cordis 4 or Koishi context the MCP plugins use: `ctx.tools`, Dogu's
 * `ctx.permissions.asker` when loaded, events and effects. Nothing host-specific.
 */
export interface McpPluginHost {
  tools: {
    define(tool: Tool | ToolOptions): () => void
    toolset(options: ToolsetOptions): Toolset
    /** Declares secrets the plugin holds (headers, tokens): `[redacted]` in every result while it is loaded. */
    redact(values: Iterable<string>): () => void
    /** Lists an imported server in the consoles and in `toolset.unavailable()` (hosts of this version have it). */
    addSource?(source: ToolSource): () => void
    /** The registered sources (the imported servers), which `McpClientPlugin.ready` waits for. */
    sources?(): readonly ToolSource[]
  }
  permissions?: { asker?(asker: Asker): () => void }
  on(name: 'tools/changed', listener: () => void): () => void
  on(name: 'tools/call-progress', listener: (info: CallInfo, message: string) => void): () => void
  on(name: 'tools/call-log', listener: (info: CallInfo, level: LogLevel, data: unknown) => void): () => void
  /** A service appeared or went (the database a driver provides). */
  on(name: 'internal/service', listener: (name: string) => void): () => void
  /** The named service, if loaded (both hosts' `ctx.get`). */
  get?(name: string): unknown
  effect(execute: () => () => unknown, label?: string): unknown
  emit?(...args: any[]): void
  /** Runs `callback` in a child context while the named services are loaded (Cordis). */
  inject?(deps: string[], callback: (ctx: any) => unknown): unknown
}
