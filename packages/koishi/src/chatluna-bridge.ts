import { defineTool, maskRepairRecord, type ModelToolCall, type RepairRecord, repairArguments, secretPaths, type Tool, toolDefinition, type ToolResult, type ToolsetOptions } from '@dogu/core'
import { type Context, Schema, type Session } from 'koishi'
import { bridgedToolClass, type BridgedToolSpec, loadLangChain } from './chatluna-tool'
import { described } from './schema-text'
import { doguSession, toolsetFor } from './session'

export interface ChatLunaBridgeConfig {
  /** Bridge Dogu's tools when ChatLuna is installed. @default true */
  enabled?: boolean
  /** Name globs of the tools to bridge; empty: all. */
  include?: string[]
  /** Name globs of tools never bridged, applied after `include`. */
  exclude?: string[]
  /** Groups to enable; tools without a group are always bridged. */
  groups?: string[]
  /**
   * `eager`: one ChatLuna tool per Dogu tool (those defined with `mode: 'search'` stay behind
   * `tool_search`). `search`: every tool not pinned by `eager` is reached through
   * `tool_search` and `dogu_call`. @default 'eager'
   */
  mode?: 'eager' | 'search'
  /** Name globs of tools bridged one by one even in search mode. */
  eager?: string[]
  /** Hand images that tools return to the model as image parts. @default false */
  images?: boolean
}

export const ChatLunaBridgeConfig: Schema<ChatLunaBridgeConfig> = described(Schema.object({
  enabled: described(Schema.boolean().default(true),
    'Give ChatLuna\'s agents Dogu\'s tools. Without ChatLuna installed this does nothing.',
    '把 Dogu 的工具交给 ChatLuna 的智能体。未安装 ChatLuna 时不起作用。'),
  include: described(Schema.array(String).default([]),
    'Name globs of the tools to bridge; empty: all.',
    '要桥接的工具名（glob）；留空表示全部。'),
  exclude: described(Schema.array(String).default([]),
    'Name globs of tools never bridged, applied after include.',
    '不桥接的工具名（glob），在 include 之后应用。'),
  groups: described(Schema.array(String).default([]),
    'Tool groups to bridge; tools without a group are always bridged.',
    '要桥接的工具分组；没有分组的工具总会桥接。'),
  mode: described(Schema.union(['eager', 'search'] as const).default('eager'),
    'eager: one ChatLuna tool per Dogu tool. search (large sets): tool_search and dogu_call stand in for every tool not pinned in eager.',
    'eager：每个 Dogu 工具对应一个 ChatLuna 工具。search（工具很多时）：除 eager 中固定的工具外，都通过 tool_search 与 dogu_call 使用。'),
  eager: described(Schema.array(String).default([]),
    'Name globs of tools bridged one by one even in search mode.',
    '即使在 search 模式下也单独桥接的工具名（glob）。'),
  images: described(Schema.boolean().default(false),
    'Hand images that tools return to the model (for models that take images in tool results, such as Claude and Gemini). Off: the text names them.',
    '把工具返回的图片交给模型（适用于能在工具结果中接收图片的模型，如 Claude、Gemini）。关闭时只在文本中注明。'),
}), 'ChatLuna: Dogu\'s tools for ChatLuna\'s agents, under Dogu\'s permissions and chat approvals.',
'ChatLuna：把 Dogu 的工具交给 ChatLuna 的智能体，调用仍经过 Dogu 的权限与聊天审批。')

/** What the bridge hands ChatLuna's `platform.registerTool` (koishi-plugin-chatluna 1.3's `ChatLunaTool`). */
export interface ChatLunaToolEntry {
  createTool(params: unknown): unknown
  selector(history: unknown[]): boolean
  authorization?(session: Session): boolean
  description: string
  meta: { source: string; group: string; tags: string[] }
  /** Set by ChatLuna when registered. */
  id?: string
}

/** The part of ChatLuna's `ctx.chatluna.platform` the bridge uses. */
export interface ChatLunaPlatform {
  registerTool(name: string, tool: ChatLunaToolEntry): () => void
  getToolRegistry(): Record<string, unknown>
  getTool(name: string): { id?: string }
}

/** One ChatLuna tool the bridge wants registered, before it has a name. */
interface Wanted {
  /** The name it has if ChatLuna has no tool of that name; else it gets `dogu_` before it. */
  preferred: string
  /** Re-registered when this changes (a tool redefined, the deferred set changed). */
  identity: unknown
  meta: ChatLunaToolEntry['meta']
  authorization?: (session: Session) => boolean
  spec(name: string): BridgedToolSpec
}

interface Registration {
  name: string
  identity: unknown
  entry: ChatLunaToolEntry
  dispose(): void
}

const SEARCH = 'tool_search'
const CALL = 'dogu_call'

// The proxy's and the search tool's arguments: their JSON Schema comes from schemastery, like every tool's.
const callArgs = toolDefinition(defineTool({
  name: CALL,
  description: '',
  args: Schema.object({
    name: Schema.string().required().description('The name of a tool that tool_search returned.'),
    arguments: Schema.dict(Schema.any()).default({}).description('Its arguments, as its parameters describe them.'),
  }),
  run: () => '',
}), 'json').parameters
const searchArgs = toolDefinition(defineTool({
  name: SEARCH,
  description: '',
  // As Dogu's own tool_search takes them; it checks them again.
  args: Schema.object({
    query: Schema.string().required().description('What you want to do, or a tool name.'),
    limit: Schema.natural().min(1).max(20).default(5).description('How many tools to return.'),
  }),
  run: () => '',
}), 'json').parameters

/**
 * The ChatLuna bridge: every Dogu tool (as `include`, `exclude` and `groups` select them)
 * becomes a ChatLuna tool, and each of their calls runs through Dogu's pipeline for the
 * caller's Koishi session: validation, Dogu's permission rules, asks in chat, timeouts and
 * background tasks. Kept in step with `ctx.tools` and with ChatLuna's registry; everything
 * it registered goes with it. Loaded by the Dogu plugin once `chatluna` is there.
 */
export async function chatlunaBridge(ctx: Context, config: ChatLunaBridgeConfig = {}): Promise<void> {
  if (config.enabled === false) return
  const langchain = await loadLangChain()
  // Unloaded while LangChain was loading.
  if (!ctx.scope.isActive) return
  const platform = (ctx as Context & { chatluna: { platform: ChatLunaPlatform } }).chatluna.platform
  const ToolClass = bridgedToolClass(langchain)
  const logger = ctx.logger('dogu')
  const images = config.images === true
  const groups = config.groups ?? []
  const selection: Omit<ToolsetOptions, 'session'> = { include: config.include, exclude: config.exclude, groups }
  const searchSelection: Omit<ToolsetOptions, 'session'> = { ...selection, mode: config.mode ?? 'eager', eager: config.eager }

  // Calls in flight end `cancelled` when the bridge goes, and an instance ChatLuna still holds refuses later ones.
  const controller = new AbortController()
  ctx.effect(() => () => controller.abort())

  const run = async (session: Session, options: Omit<ToolsetOptions, 'session'>, call: ModelToolCall, signal: AbortSignal): Promise<ToolResult> => {
    const toolset = await toolsetFor(ctx, session, options)
    const [result] = await toolset.execute([call], { signal })
    return result
  }

  const toolWanted = (tool: Tool): Wanted => {
    const options = { ...selection, include: [tool.name] }
    return {
      preferred: tool.name,
      identity: tool,
      meta: { source: 'dogu', group: tool.groups[0] ?? 'dogu', tags: tagsOf(tool) },
      // What Dogu would hide from the session, ChatLuna does not offer; Dogu checks again on every call.
      authorization: tool.visibility ? (session) => visibleTo(tool, session) : undefined,
      spec: (name) => ({
        name,
        description: tool.description,
        // Converted when registered, not on every change of the registry.
        parameters: toolDefinition(tool, 'json').parameters,
        run: (session, args, { id, signal }) => run(session, options, { id, name: tool.name, arguments: args as ModelToolCall['arguments'] }, signal),
      }),
    }
  }

  /** The ChatLuna tools wanted now, by key, in a stable order: Dogu's tools, then the search pair. */
  const wanted = (): Map<string, Wanted> => {
    const enabled = new Set(groups)
    const pinned = new Set(config.eager?.length ? ctx.tools.filter({ include: config.eager }).map((tool) => tool.name) : [])
    const result = new Map<string, Wanted>()
    const deferred: string[] = []
    for (const tool of ctx.tools.filter({ include: config.include, exclude: config.exclude })) {
      if (tool.groups.length && !tool.groups.some((group) => enabled.has(group))) continue
      if ((config.mode === 'search' || tool.mode === 'search') && !pinned.has(tool.name)) deferred.push(tool.name)
      else result.set(`tool:${tool.name}`, toolWanted(tool))
    }
    if (!deferred.length) return result
    const identity = deferred.join(',')
    const meta = { source: 'dogu', group: 'dogu', tags: ['search'] }
    // The proxy first: the search tool's description names it.
    result.set('call', {
      preferred: CALL,
      identity,
      meta,
      spec: (name) => ({
        name,
        description: 'Calls a tool that tool_search found: give its name and its arguments. The call is checked like any other '
          + '(arguments, permissions: it may ask for approval in the chat, timeouts).',
        parameters: callArgs,
        run: async (session, args, { id, signal }) => {
          const proxy = proxyArguments(args)
          if ('error' in proxy) return { id, name: CALL, status: 'error', code: 'invalid_arguments', content: proxy.error, durationMs: 0 }
          const { name: tool, arguments: input } = proxy.value
          // The inner arguments go on as they came, text included: the pipeline repairs those itself.
          const result = await run(session, searchSelection, { id, name: tool as string, arguments: (input ?? {}) as ModelToolCall['arguments'] }, signal)
          if (!proxy.repaired || result.repaired) return result
          // The proxy's text holds the inner call's arguments: their secret fields are masked in it.
          const inner = typeof tool === 'string' ? ctx.tools.get(tool)?.args : undefined
          return { ...result, repaired: maskRepairRecord(proxy.repaired, args as string, [input], inner && secretPaths(inner)) }
        },
      }),
    })
    result.set('search', {
      preferred: SEARCH,
      identity,
      meta,
      spec: (name) => ({
        name,
        description: 'Finds tools that are not listed with the others and returns their full definitions (name, description, '
          + `JSON Schema parameters). Call one of them with ${registered.get('call')?.name ?? CALL}({ "name": …, "arguments": {…} }). `
          + `Describe the task in a few words, or give a tool's name. ${deferred.length} tool${deferred.length === 1 ? ' is' : 's are'} `
          + `available this way: ${deferred.join(', ')}.`,
        parameters: searchArgs,
        run: (session, args, { id, signal }) => run(session, searchSelection, { id, name: SEARCH, arguments: args as ModelToolCall['arguments'] }, signal),
      }),
    })
    return result
  }

  const registered = new Map<string, Registration>()
  const skipped = new Set<string>()
  const ours = (registration: Registration) => platform.getTool(registration.name).id === registration.entry.id
  // ChatLuna announces every change of its registry, ours too (synchronously): only the
  // others' changes make the next pass check which names are still ours.
  let owning = false
  let foreign = false
  const own = <T>(change: () => T): T => {
    owning = true
    try {
      return change()
    } finally {
      owning = false
    }
  }

  const register = (key: string, want: Wanted, name: string) => {
    const spec = want.spec(name)
    const entry: ChatLunaToolEntry = {
      createTool: () => new ToolClass(spec, { signal: controller.signal, images }),
      selector: () => true,
      description: spec.description,
      meta: want.meta,
      ...want.authorization ? { authorization: want.authorization } : {},
    }
    const registration: Registration = { name, identity: want.identity, entry, dispose: () => {} }
    registered.set(key, registration)
    const unregister = own(() => platform.registerTool(name, entry))
    // ChatLuna ties no registration to its plugin: each is an effect of the bridge. It only
    // removes what is still ours, never a tool of that name registered since.
    registration.dispose = ctx.effect(() => () => {
      if (ours(registration)) own(unregister)
    })
  }

  const reconcile = () => {
    const wants = wanted()
    // Whether another plugin may have taken a name of ours: asking ChatLuna is the costly part of a pass.
    const check = foreign
    foreign = false
    for (const [key, registration] of registered) {
      const want = wants.get(key)
      const still = !check || ours(registration)
      if (want && want.identity === registration.identity && still) continue
      registered.delete(key)
      registration.dispose()
      if (want && !still) logger.info('another plugin registered a ChatLuna tool "%s" in place of Dogu\'s', registration.name)
    }
    let taken: Set<string> | undefined
    for (const [key, want] of wants) {
      if (registered.has(key)) continue
      taken ??= new Set(Object.keys(platform.getToolRegistry()))
      const name = [want.preferred, `dogu_${want.preferred}`].find((candidate) => !taken!.has(candidate))
      if (!name) {
        if (!skipped.has(key)) logger.warn('ChatLuna already has tools "%s" and "dogu_%s": Dogu\'s "%s" is not bridged', want.preferred, want.preferred, want.preferred)
        skipped.add(key)
        continue
      }
      skipped.delete(key)
      if (name !== want.preferred) logger.info('ChatLuna already has a tool "%s": Dogu\'s is bridged as "%s"', want.preferred, name)
      register(key, want, name)
      taken.add(name)
    }
  }

  // One pass a microtask after each burst of changes, however many came in it (a plugin
  // defining 500 tools).
  let scheduled = false
  const sync = () => {
    if (scheduled) return
    scheduled = true
    queueMicrotask(() => {
      scheduled = false
      if (ctx.scope.isActive && !controller.signal.aborted) reconcile()
    })
  }
  ctx.on('tools/changed', sync)
  ;(ctx.on as (name: string, listener: () => void) => () => void)('chatluna/tool-updated', () => {
    if (owning) return
    foreign = true
    sync()
  })
  reconcile()
}

/**
 * `dogu_call`'s own arguments. ChatLuna hands a tool's arguments over as text when its agent
 * read them as text (a ReAct step, a call its parser could not read): that text is parsed,
 * or repaired as the pipeline repairs any call's, and refused the same way when it cannot be.
 */
function proxyArguments(args: unknown): { value: { name?: unknown; arguments?: unknown }; repaired?: RepairRecord } | { error: string } {
  if (typeof args !== 'string') return { value: (args ?? {}) as { name?: unknown; arguments?: unknown } }
  let parsed: unknown
  let problem = 'not a JSON object'
  try {
    parsed = JSON.parse(args)
  } catch (error) {
    problem = (error as Error).message
  }
  if (isObject(parsed)) return { value: parsed }
  const fixed = repairArguments(args)
  if ('error' in fixed || !isObject(fixed.value)) {
    const why = 'error' in fixed ? fixed.error : 'not a JSON object'
    // Worded as the pipeline words its own refusal.
    return { error: `Arguments are not valid JSON (${problem}). Send a JSON object: { "name": …, "arguments": {…} }. They cannot be repaired without guessing: ${why}.` }
  }
  return { value: fixed.value, repaired: fixed.repaired }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

function tagsOf(tool: Tool): string[] {
  const { effect, background } = tool.traits
  return [...tool.groups, `effect:${effect}`, ...background ? ['background'] : [], ...tool.confirm ? [`confirm:${tool.confirm}`] : []]
}

function visibleTo(tool: Tool, session: Session): boolean {
  try {
    return !!tool.visibility!(doguSession(session))
  } catch {
    // A broken visibility check hides the tool, as Dogu's registry does.
    return false
  }
}
