import { AuditLog, defineTool, PermissionEngine, type PermissionRule, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'

/**
 * A host-free Dogu: a registry, a permission engine and an audit log wired together, with
 * tools that count their runs. `deploy` is asked about, `wipe` is denied, `read_file`,
 * `add_one` and `wait` are reads the rules allow.
 */
export function doguSetup(rules: PermissionRule[] = []) {
  const audit = new AuditLog({ maxRecords: 1000 })
  const engine = new PermissionEngine({
    rules: [{ permission: 'tool:deploy', decision: 'ask' }, { permission: 'tool:wipe', decision: 'deny' }, ...rules],
    onDecision: (event) => audit.onDecision(event),
  })
  const registry = new ToolRegistry({ emit: (name, ...args) => { if (name === 'tools/call-end') audit.onCallEnd(args[0], args[1]) } })
  registry.permissions = engine
  const runs: Record<string, number> = { read_file: 0, deploy: 0, wipe: 0, add_one: 0, wait: 0 }
  const signals: AbortSignal[] = []
  let waitStarted!: () => void
  /** Settles when `wait`'s handler has started. */
  const waiting = new Promise<void>((resolve) => { waitStarted = resolve })
  registry.define(defineTool({
    name: 'read_file', description: 'Read a file', traits: { effect: 'read' },
    args: Schema.object({ path: Schema.string().required() }),
    run: ({ path }) => (runs.read_file++, `contents of ${path}`),
  }))
  registry.define(defineTool({
    name: 'deploy', description: 'Deploy the app', traits: { effect: 'exec' },
    args: Schema.object({ env: Schema.union(['staging', 'prod']).required() }),
    run: ({ env }) => (runs.deploy++, `deployed to ${env}`),
  }))
  registry.define(defineTool({
    name: 'wipe', description: 'Delete every file', traits: { effect: 'write' },
    run: () => (runs.wipe++, 'wiped'),
  }))
  registry.define(defineTool({
    name: 'add_one', description: 'Add one to n', traits: { effect: 'read' },
    args: Schema.object({ n: Schema.number().required() }),
    run: ({ n }) => (runs.add_one++, String(n + 1)),
  }))
  registry.define(defineTool({
    name: 'wait', description: 'Wait until cancelled', traits: { effect: 'read' },
    run: (_args, call) => new Promise<string>((resolve) => {
      runs.wait++
      signals.push(call.signal)
      waitStarted()
      call.signal.addEventListener('abort', () => resolve('stopped'), { once: true })
    }),
  }))
  const toolset = registry.toolset({ session: { id: 'base', userId: 'alice' } })
  return { audit, engine, registry, toolset, runs, signals, waiting }
}
