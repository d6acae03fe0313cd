import Schema from 'schemastery'
import { AuditLog, type CallInfo, defineTool, MemoryAuditStore, PermissionEngine, type PermissionRule, type Session, type Tool, ToolRegistry, type ToolResult } from '@dogu/core'

/**
 * A host-free Dogu, as an app under the AI SDK wires it: a registry, a permission engine
 * (no asker of its own: the AI SDK's approval flow is the only way to say yes) and an
 * audit log. `read_note` reads (allowed by default), `save_note` writes (asked by
 * default); `runs` counts how often each handler ran.
 */
export async function doguSetup(options: { rules?: PermissionRule[]; tools?: Tool[]; session?: Session } = {}) {
  const audit = new AuditLog({ store: new MemoryAuditStore() })
  const permissions = new PermissionEngine({ rules: options.rules ?? [], onDecision: (event) => audit.onDecision(event) })
  await permissions.ready
  const registry = new ToolRegistry({ emit: (name, ...args) => { if (name === 'tools/call-end') audit.onCallEnd(args[0] as CallInfo, args[1] as ToolResult) } })
  registry.permissions = permissions
  const runs = { read_note: 0, save_note: 0 }
  const saved: string[] = []
  registry.define(defineTool({
    name: 'read_note',
    description: 'Read a note by its title',
    args: Schema.object({ title: Schema.string().required() }),
    traits: { effect: 'read' },
    run: ({ title }) => {
      runs.read_note++
      return `${title}: buy milk`
    },
  }))
  registry.define(defineTool({
    name: 'save_note',
    description: 'Save a note',
    args: Schema.object({ text: Schema.string().required() }),
    traits: { effect: 'write' },
    run: ({ text }) => {
      runs.save_note++
      saved.push(text)
      return `saved "${text}"`
    },
  }))
  for (const tool of options.tools ?? []) registry.define(tool)
  const session = options.session ?? { id: 'web', userId: 'alice' }
  return {
    registry,
    permissions,
    audit,
    runs,
    saved,
    toolset: registry.toolset({ session }),
    /** The audit records, oldest first, as `{ callId: outcome }`-like rows a test compares whole. */
    records: async () => (await audit.query()).reverse(),
    stop: async () => {
      await permissions.stop()
      await audit.stop()
    },
  }
}
