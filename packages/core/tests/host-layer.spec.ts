// The host layer a host of Dogu builds its services on (src/host), tested through a host
// with no framework: a plugin is a list of effects, and disposing it runs their cleanups.
import { describe, expect, it } from 'vitest'
import {
  attachEngine,
  AuditLog,
  auditHost,
  BackgroundEngine,
  backgroundHandOver,
  callingPlugin,
  defineTool,
  DoguError,
  type HostPlugin,
  MemoryAuditStore,
  PermissionEngine,
  permissionsHost,
  ToolRegistry,
  toolsHost,
} from '../src'
import { MemoryGrantStore } from '../src/permissions'

/** A plugin of the test host: its effects' cleanups run when it is disposed. */
class TestPlugin implements HostPlugin {
  readonly owner = {}
  readonly labels: string[] = []
  active = true
  private readonly cleanups = new Set<() => void>()

  constructor(readonly name: string) {}

  get label() {
    return `plugin "${this.name}"`
  }

  effect(setup: () => () => void, label: string) {
    this.labels.push(label)
    const cleanup = setup()
    let done = false
    const dispose = () => {
      if (done) return
      done = true
      this.cleanups.delete(dispose)
      cleanup()
    }
    this.cleanups.add(dispose)
    // Like Cordis 4's: the disposer is also a thenable.
    return Object.assign(dispose, { then: (resolve: () => void) => resolve() })
  }

  dispose() {
    for (const cleanup of [...this.cleanups]) cleanup()
    this.active = false
  }
}

/** The framework's service base of the test host: it only knows who calls. */
abstract class TestService {
  caller!: TestPlugin
}

class Tools extends toolsHost(TestService) {
  [callingPlugin]() {
    return this.caller
  }

  readonly registry = new ToolRegistry()
}

const echo = defineTool({ name: 'echo', description: 'Repeat a text', run: () => 'echo' })

function caughtBy(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('toolsHost', () => {
  it('ties a tool to the calling plugin, and hands back a plain disposer that is harmless twice', () => {
    const tools = new Tools()
    const alpha = new TestPlugin('alpha')
    tools.caller = alpha
    const dispose = tools.define(echo)
    expect(tools.list().map((tool) => tool.name)).toEqual(['echo'])
    expect(tools.registry.ownerOf('echo')).toBe('plugin "alpha"')
    expect('then' in dispose).toBe(false)
    dispose()
    dispose()
    expect(tools.get('echo')).toBeUndefined()

    tools.define(echo)
    alpha.dispose()
    expect(tools.get('echo')).toBeUndefined()
  })

  it('names both plugins when a second one defines a name the first holds', () => {
    const tools = new Tools()
    tools.caller = new TestPlugin('alpha')
    tools.define(echo)
    tools.caller = new TestPlugin('beta')
    const error = caughtBy(() => tools.define(echo))
    expect(error).toBeInstanceOf(DoguError)
    expect(error).toMatchObject({ code: 'NAME_CONFLICT', message: 'tool "echo" is already defined by plugin "alpha"; plugin "beta" cannot define it too' })
  })

  it('refuses a plugin that is no longer active: what it added could never be removed', () => {
    const tools = new Tools()
    const gone = new TestPlugin('gone')
    gone.dispose()
    tools.caller = gone
    expect(caughtBy(() => tools.define(echo))).toMatchObject({ code: 'INACTIVE', message: 'plugin "gone" is no longer active; it cannot define tool "echo"' })
    expect(caughtBy(() => tools.define({ name: 42 } as never))).toMatchObject({ code: 'INACTIVE', message: 'plugin "gone" is no longer active; it cannot define tool "?"' })
    expect(caughtBy(() => tools.use((_call, next) => next()))).toMatchObject({ code: 'INACTIVE', message: 'plugin "gone" is no longer active; it cannot add a middleware' })
    expect(tools.list()).toEqual([])
  })

  it('labels every effect it adds by the method that added it', () => {
    const tools = new Tools()
    const plugin = tools.caller = new TestPlugin('alpha')
    tools.define(echo)
    tools.use((_call, next) => next(), { name: 'quiet' })
    tools.redact(['a-secret-token-value'])
    tools.addSource({ name: 'docs', kind: 'mcp', status: 'connected', tools: [] } as never)
    expect(plugin.labels).toEqual(['ctx.tools.define("echo")', 'ctx.tools.use("quiet")', 'ctx.tools.redact()', 'ctx.tools.addSource()'])
    expect(tools.sources().map((source) => source.name)).toEqual(['docs'])
    plugin.dispose()
    expect(tools.sources()).toEqual([])
  })
})

describe('permissionsHost', () => {
  const engine = () => new PermissionEngine({ store: new MemoryGrantStore() })

  it('adds a rule for the calling plugin, which goes with it', () => {
    class Permissions extends permissionsHost(TestService) {
      [callingPlugin]() {
        return this.caller
      }

      readonly engine = engine()
    }
    const permissions = new Permissions()
    const plugin = permissions.caller = new TestPlugin('deploy')
    const before = permissions.engine.ruleCount
    permissions.rule({ permission: 'deploy:run', decision: 'allow' })
    permissions.asker(() => undefined)
    expect(permissions.engine.ruleCount).toBe(before + 1)
    expect(plugin.labels).toEqual(['ctx.permissions.rule("deploy:run")', 'ctx.permissions.asker()'])
    plugin.dispose()
    expect(permissions.engine.ruleCount).toBe(before)
  })

  it('runs as methods put on a foreign object that holds `engine` and the hook (Koishi)', () => {
    class Methods extends permissionsHost(Object) {
      [callingPlugin](): HostPlugin {
        return (this as unknown as { plugin: TestPlugin }).plugin
      }

      readonly engine = engine()
    }
    const methods = new Methods()
    const plugin = new TestPlugin('koishi-plugin')
    const foreign = { plugin, engine: methods.engine, [callingPlugin]: methods[callingPlugin], rule: methods.rule, modeOf: methods.modeOf }
    const before = methods.engine.ruleCount
    foreign.rule({ permission: 'fs.write', decision: 'ask' })
    expect(methods.engine.ruleCount).toBe(before + 1)
    expect(foreign.modeOf('s1')).toBe('default')
    plugin.dispose()
    expect(methods.engine.ruleCount).toBe(before)
  })
})

describe('attachEngine', () => {
  it('detaches only its own engine: a reloaded service that attached first stays the gate', () => {
    const registry = new ToolRegistry()
    const first = new PermissionEngine({ store: new MemoryGrantStore() })
    const second = new PermissionEngine({ store: new MemoryGrantStore() })
    const detachFirst = attachEngine(registry, 'permissions', first)
    expect(registry.permissions).toBe(first)
    const detachSecond = attachEngine(registry, 'permissions', second)
    detachFirst()
    expect(registry.permissions).toBe(second)
    detachSecond()
    detachSecond()
    expect(registry.permissions).toBeUndefined()
  })
})

describe('backgroundHandOver', () => {
  it('hands timed-out calls over while attached; stopping ends the hand-over first, then the engine', async () => {
    const registry = new ToolRegistry()
    const engine = new BackgroundEngine()
    await engine.load()
    const handOver = backgroundHandOver(registry, engine)
    const stop = handOver.attach()
    expect(registry.background).toBe(engine)
    await stop()
    expect(registry.background).toBeUndefined()
    expect(caughtBy(() => engine.adopt({} as never))).toMatchObject({ code: 'INACTIVE', message: 'the background engine is disposed' })
    await handOver.stop()
    expect(registry.background).toBeUndefined()
  })
})

describe('auditHost', () => {
  class Audit extends auditHost(TestService) {
    constructor(readonly log: AuditLog | undefined) {
      super()
    }
  }

  it('answers empty and does nothing while auditing is off', async () => {
    const audit = new Audit(undefined)
    expect(audit.enabled).toBe(false)
    await expect(audit.query()).resolves.toEqual([])
    await expect(audit.export()).resolves.toEqual([])
    await expect(audit.flush()).resolves.toBeUndefined()
    await expect(audit.useStore(new MemoryAuditStore())).resolves.toBeUndefined()
  })

  it('reads through the log while it is on', async () => {
    const log = new AuditLog({ store: new MemoryAuditStore() })
    const audit = new Audit(log)
    expect(audit.enabled).toBe(true)
    await audit.flush()
    await expect(audit.query()).resolves.toEqual([])
    await log.stop()
  })
})
