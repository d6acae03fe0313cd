import { randomUUID } from 'node:crypto'
import type { ToolResult } from '@dogu/core'
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager'
import type * as Messages from '@langchain/core/messages'
import type * as Tools from '@langchain/core/tools'
import type { Session } from 'koishi'
import { chatlunaContent, type ChatLunaContentPart } from './chatluna-content'

/** LangChain's modules, as ChatLuna's install provides them: loaded only when ChatLuna is there. */
export interface LangChain {
  tools: typeof Tools
  messages: typeof Messages
}

/**
 * Loads LangChain when the bridge starts, never when Dogu loads: `@langchain/core` is a
 * dependency of ChatLuna (and an optional peer of this package), so it is there exactly
 * when the bridge has something to do.
 */
export async function loadLangChain(): Promise<LangChain> {
  // Koishi requires its plugins, and so ChatLuna gets LangChain's CommonJS build: the bundle
  // (lib/index.cjs) takes that same copy rather than loading the ES module build beside it.
  if (typeof require === 'function') return { tools: require('@langchain/core/tools'), messages: require('@langchain/core/messages') }
  const [tools, messages] = await Promise.all([import('@langchain/core/tools'), import('@langchain/core/messages')])
  return { tools, messages }
}

/** One ChatLuna tool the bridge registers: a Dogu tool, or the search-mode `tool_search` / `dogu_call`. */
export interface BridgedToolSpec {
  /** The name ChatLuna and the model know it by. */
  name: string
  description: string
  /** JSON Schema of the arguments; every reader gets its own copy. */
  parameters: object
  /** Runs one call for a Koishi session through Dogu's pipeline. */
  run(session: Session, args: unknown, options: { id: string; signal: AbortSignal }): Promise<ToolResult>
}

export interface BridgedToolOptions {
  /** Aborted when the bridge is unloaded: calls in flight end `cancelled`, later ones are refused. */
  signal: AbortSignal
  /** Pass images to the model as `image_url` parts. */
  images: boolean
}

/** The LangChain tool class ChatLuna is given, built on the LangChain that ChatLuna runs with. */
export type BridgedToolClass = new (spec: BridgedToolSpec, options: BridgedToolOptions) => Tools.StructuredTool

/**
 * LangChain's `StructuredTool`, for one bridged tool. ChatLuna creates one instance per
 * name and shares it among every conversation, so nothing about a caller is kept on it: each
 * call reads its Koishi session from `config.configurable.session`.
 *
 * - `schema` is the tool's JSON Schema, a fresh copy on every read: ChatLuna's adapters edit
 *   the schema they are given in place (they delete `additionalProperties`, turn `const`
 *   into `enum`), which must reach neither Dogu's cached definitions nor the next request.
 * - LangChain checks the arguments against that schema before `_call`. When it refuses
 *   them, the call still goes to Dogu, whose validation is the exact one (the JSON Schema is
 *   its projection): the model reads Dogu's message naming every bad path, and an argument
 *   LangChain's validator alone got wrong still runs.
 * - Arguments ChatLuna hands over as text (its agents do when they read a call as text) take
 *   that path too, never parsed here: the pipeline parses the text, repairs what it can
 *   without guessing, and refuses the rest, as for any call.
 */
export function bridgedToolClass({ tools, messages }: LangChain): BridgedToolClass {
  return class DoguChatLunaTool extends tools.StructuredTool {
    name: string
    description: string

    constructor(private spec: BridgedToolSpec, private options: BridgedToolOptions) {
      super({ verboseParsingErrors: true })
      this.name = spec.name
      this.description = spec.description
      // ChatLuna caches tool instances in a Vue `reactive` store, which hands out a proxy of
      // the instance and of everything read through it (and structuredClone refuses proxies).
      // Vue leaves an object marked `__v_skip` as it is: every caller gets this instance.
      Object.defineProperty(this, '__v_skip', { value: true })
    }

    get schema(): any {
      return structuredClone(this.spec.parameters)
    }

    override async call(arg: any, configArg?: any, tags?: string[]): Promise<any> {
      try {
        return await super.call(arg, configArg, tags)
      } catch (error) {
        if (!(error instanceof tools.ToolInputParsingException)) throw error
        const config = typeof configArg === 'object' && configArg !== null ? configArg : {}
        const content = await this._call(arg, undefined, config)
        // Invoked with a tool call, LangChain answers with a ToolMessage: so does this path.
        const id: unknown = config.toolCall?.id
        return typeof id === 'string' ? new messages.ToolMessage({ content, tool_call_id: id, name: this.name }) : content
      }
    }

    protected async _call(args: unknown, _run: CallbackManagerForToolRun | undefined, config?: Tools.ToolRunnableConfig): Promise<string | ChatLunaContentPart[]> {
      const { spec, options } = this
      const session = (config?.configurable as { session?: unknown } | undefined)?.session
      const id = typeof config?.toolCall?.id === 'string' ? config.toolCall.id : `chatluna-${randomUUID()}`
      if (options.signal.aborted) return failure(spec.name, id, 'cancelled', 'Cancelled: Dogu\'s ChatLuna bridge was unloaded.')
      if (!isKoishiSession(session)) {
        return failure(spec.name, id, 'error', 'Error: the call carries no Koishi session (config.configurable.session), so Dogu cannot tell who is calling; it did not run.')
      }
      const signal = config?.signal ? AbortSignal.any([options.signal, config.signal]) : options.signal
      let result: ToolResult
      try {
        result = await spec.run(session, args, { id, signal })
      } catch (error) {
        // Dogu's pipeline never throws for a call; this is the session lookup (a database error).
        return failure(spec.name, id, 'error', `Error: ${error instanceof Error ? error.message : String(error)}`)
      }
      return chatlunaContent(result, options.images)
    }
  }
}

function failure(name: string, id: string, status: 'error' | 'cancelled', content: string): string {
  return chatlunaContent({ id, name, status, content, durationMs: 0 }, false) as string
}

/** A Koishi session as ChatLuna passes it: enough of one for Dogu to tell who and where. */
function isKoishiSession(value: unknown): value is Session {
  const session = value as Partial<Session> | null | undefined
  return typeof session === 'object' && session !== null && typeof session.platform === 'string' && typeof session.userId === 'string'
}
