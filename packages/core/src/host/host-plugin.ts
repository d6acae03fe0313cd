/**
 * The plugin that calls a host service's method, as the host layer sees it. A host builds
 * one from its framework's caller context (Cordis' fiber, cordis 3's scope) each time one
 * of the shared methods asks for it through `[callingPlugin]()`.
 */
export interface HostPlugin {
  /**
   * What the registry keys the plugin's tools by: the same object across the plugin's
   * reloads, so that a reload redefines a tool in place instead of conflicting with itself.
   */
  readonly owner: object
  /** `plugin "name"`: how errors and name conflicts name the plugin. */
  readonly label: string
  /** False once the plugin is disposed: what it added then could never be removed. */
  readonly active: boolean
  /**
   * Runs `setup` now as an effect of the plugin: the cleanup it returns runs when the
   * plugin goes, or when the returned function is called, whichever is first. `label`
   * names the effect where the host shows effects (Cordis' inspector); a host without
   * such a view ignores it.
   */
  effect(setup: () => () => void, label: string): () => unknown
}

/**
 * The hook each host service implements for the host layer's methods: the plugin calling
 * the method now. It is a symbol so that it adds no name to `ctx.tools` and the others.
 *
 * @example
 * class ToolService extends toolsHost(Service) {
 *   [callingPlugin](): HostPlugin {
 *     const fiber = this.ctx.fiber // the caller's context, through the framework's tracker
 *     return { owner: fiber, label: `plugin "${fiber.name}"`, active: fiber.uid !== null, effect: (setup, label) => this.ctx.effect(setup, label) }
 *   }
 * }
 */
export const callingPlugin: unique symbol = Symbol('dogu.callingPlugin')

/** Any class, abstract or not, that a host layer piece may extend: a framework's `Service`. */
export type HostBaseClass = abstract new (...args: any[]) => object

/**
 * Runs `setup` as an effect of the calling plugin and hands back a plain disposer: a
 * framework's own disposer may be a thenable (Cordis 4's is), which would make an
 * `await` on the handle wait for nothing. Calling it twice is harmless.
 */
export function pluginEffect(plugin: HostPlugin, setup: () => () => void, label: string): () => void {
  const dispose = plugin.effect(setup, label)
  return () => {
    dispose()
  }
}
