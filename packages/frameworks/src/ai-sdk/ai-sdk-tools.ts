import { jsonSchema, type JSONSchema7, type ModelMessage, type Tool } from 'ai'
import { type AskAnswer, type CallDecision, type DefinitionMap, type Dialect, DoguError, type Loosening, type ModelToolCall, type Session, Toolset } from '@dogu/core'
import { type FrameworkApprover, frameworkAnswer } from '../common/framework-answer'
import { RecentMap } from '../common/recent-map'
import { SessionToolsets } from '../common/session-toolsets'
import { approvalResponseFor } from './approval-response'
import { type AiSdkToolOutput, modelOutputOf, toolOutputOf } from './model-output'
import { RawArguments } from './raw-arguments'
import { type Rejection, TOOL_ADAPTERS, type ToolAdapter } from './tool-adapters'

/** Rejections remembered per adapter as recorded, so a request sent again is not recorded twice. */
const MAX_RECORDED = 1000

/** A Dogu tool as the AI SDK's `Tool`: its input is what the model sent, its output Dogu's outcome. */
export type AiSdkTool = Tool<unknown, AiSdkToolOutput>

/** The `ToolSet` `aiSdkTools` gives, keyed by the Dogu tool names. */
export type AiSdkTools = Record<string, AiSdkTool>

/** An approved call, as `approver` sees it when the AI SDK runs it. */
export interface AiSdkApproval {
  /** The SDK's `tool-approval-request` / `tool-approval-response` id. */
  approvalId: string
  toolCallId: string
  toolName: string
  input: unknown
  /** The `reason` the approval response carried, if any. */
  reason?: string
  /** The Dogu session the call runs in. */
  session: Session
  experimental_context: unknown
}

/** What names a call's session: the SDK's own options for the call. */
export interface AiSdkCallContext {
  toolCallId: string
  messages: ModelMessage[]
  experimental_context: unknown
}

export interface AiSdkToolsOptions {
  /**
   * The schema dialect the model's provider takes (`openai` for OpenAI's strict mode,
   * `anthropic`, `gemini`): each tool's `inputSchema` is its Dogu definition in it. Where
   * the dialect says less than the tool's schema (see `onLoosened`), Dogu still validates
   * the exact rule. @default 'json' (plain JSON Schema)
   */
  dialect?: Dialect
  /**
   * Who approves through the AI SDK's approval flow, and for how long the yes holds: one
   * answer for every call, or a function of the approval (the SDK's approval response has
   * only `approved` and `reason`, so an app that offers "for this session" keeps that choice
   * by `approvalId`, or says it in `reason`, and returns it here). `scope: 'session'` or
   * `'always'` remembers a grant, so the same call is not asked again.
   * @default once, by the session's `userId`
   */
  approver?: FrameworkApprover | ((approval: AiSdkApproval) => FrameworkApprover | undefined | PromiseLike<FrameworkApprover | undefined>)
  /**
   * The Dogu session of a call (its grants, quotas, mode and audit records are keyed by it).
   * The AI SDK has no thread id, so the app says it, through `experimental_context` or here.
   * `undefined` is the toolset's own session.
   * @default `experimental_context.sessionId` when it is a string, else the toolset's session
   */
  session?: (context: AiSdkCallContext) => string | undefined
  /**
   * Called once, as the tools are made, with the tools whose definition in `dialect` is
   * looser than their schema and what each lost (`toolset.loosened(dialect)`): a model may
   * send what the loosened form allows, and is then told the exact rule. Not called when
   * every tool is exact.
   */
  onLoosened?: (loosened: Readonly<Record<string, readonly Loosening[]>>) => void
}

type SchemaOf = { [D in Dialect]: (definition: DefinitionMap[D]) => { schema: unknown; strict?: boolean } }

/** Where each dialect's definition keeps its schema. */
const SCHEMA_OF: SchemaOf = {
  json: (definition) => ({ schema: definition.parameters }),
  openai: (definition) => ({ schema: definition.function.parameters, strict: definition.function.strict }),
  anthropic: (definition) => ({ schema: definition.input_schema }),
  // Gemini's declaration of a tool without arguments has no parameters.
  gemini: (definition) => ({ schema: definition.parameters ?? { type: 'object', properties: {} } }),
}

/**
 * Dogu's tools as an AI SDK 6 `ToolSet`, for `generateText`, `streamText` and agents: one
 * tool per `toolset.names` entry, keyed by its name. Each call goes through Dogu's
 * pipeline: `needsApproval` is the permission engine's decision (`ask` becomes the SDK's
 * tool-approval request; allowed and denied calls go straight to `execute`, where a denial
 * is audited), `execute` runs the call with the SDK's abort signal and the user's approval
 * response as the answer, and `toModelOutput` gives the model Dogu's text. The input
 * schema never refuses arguments: Dogu's repair and validation do, with their own text.
 * Pass `repairToolCall()` as `experimental_repairToolCall` for arguments that are not JSON.
 *
 * @example
 * const tools = aiSdkTools(registry.toolset({ session: { id: 'web', userId: 'alice' } }), { dialect: 'openai' })
 * const result = await generateText({ model, tools, experimental_repairToolCall: repairToolCall(), prompt })
 */
export function aiSdkTools(toolset: Toolset, options: AiSdkToolsOptions = {}): AiSdkTools {
  if (!(toolset instanceof Toolset)) throw new DoguError('INVALID_OPTIONS', 'aiSdkTools() needs a toolset (registry.toolset({ session }))')
  const dialect = options.dialect ?? 'json'
  if (!Object.hasOwn(SCHEMA_OF, dialect)) throw new DoguError('INVALID_OPTIONS', `aiSdkTools(): unknown dialect ${JSON.stringify(dialect)}; use one of ${Object.keys(SCHEMA_OF).join(', ')}`)
  // Fixes the dialect the calls are decoded in (the fields a dialect sends JSON-encoded).
  toolset.definitions(dialect)
  const loosened = toolset.loosened(dialect)
  if (options.onLoosened && Object.keys(loosened).length) options.onLoosened(loosened)
  const adapter = new Adapter(toolset, options)
  const tools: AiSdkTools = {}
  const names = toolset.names
  const definitions = toolset.definitionsOf(names, dialect)
  definitions.forEach((definition, i) => {
    const tool = adapter.tool(names[i]!, describe(definition), SCHEMA_OF[dialect](definition as never))
    // defineProperty: a tool may be named like `__proto__`, and must stay a plain key.
    Object.defineProperty(tools, names[i]!, { value: tool, enumerable: true, writable: true, configurable: true })
  })
  return tools
}

function describe(definition: DefinitionMap[Dialect]): string {
  return 'function' in definition ? definition.function.description : definition.description
}

/** What the adapter's tools share: the session toolsets, the options, the kept argument texts. */
class Adapter implements ToolAdapter {
  readonly raw = new RawArguments()
  private sessions: SessionToolsets
  private recorded = new RecentMap<string, true>(MAX_RECORDED)

  constructor(toolset: Toolset, private options: AiSdkToolsOptions) {
    this.sessions = new SessionToolsets(toolset)
  }

  tool(name: string, description: string, { schema, strict }: { schema: unknown; strict?: boolean }): AiSdkTool {
    const tool: AiSdkTool = {
      description,
      // Every value passes: Dogu's validation refuses with the paths, after its repair.
      inputSchema: jsonSchema(schema as JSONSchema7, { validate: (value) => ({ success: true, value }) }),
      needsApproval: (input, context) => this.needsApproval(name, input, context as AiSdkCallContext),
      execute: (input, context) => this.execute(name, input, context as AiSdkCallContext & { abortSignal?: AbortSignal }),
      toModelOutput: ({ output }) => modelOutputOf(output),
    }
    if (strict !== undefined) tool.strict = strict
    TOOL_ADAPTERS.set(tool, this)
    return tool
  }

  // Neither is an async function: a call the rules decide at once costs no promise of its own.
  private needsApproval(name: string, input: unknown, context: AiSdkCallContext): boolean | Promise<boolean> {
    // The SDK asks again before running an approved call: Dogu authorizes it again as it
    // runs (a rule that now denies wins, and is audited), so the approval stands here.
    if (approvalResponseFor(context.messages, context.toolCallId)?.approved) return true
    const decision = this.toolsetFor(context).decide(this.callOf(name, input, context.toolCallId, false))
    return 'then' in decision ? decision.then(isAsk) : isAsk(decision)
  }

  private execute(name: string, input: unknown, context: AiSdkCallContext & { abortSignal?: AbortSignal }): Promise<AiSdkToolOutput> {
    const toolset = this.toolsetFor(context)
    const { toolCallId } = context
    const response = approvalResponseFor(context.messages, toolCallId)
    if (!response?.approved) return this.run(toolset, name, input, toolCallId, context.abortSignal)
    const approval: AiSdkApproval = { approvalId: response.approvalId, toolCallId, toolName: name, input, ...(response.reason === undefined ? {} : { reason: response.reason }), session: toolset.session, experimental_context: context.experimental_context }
    return this.approverFor(approval).then((approver) => this.run(toolset, name, input, toolCallId, context.abortSignal, { [toolCallId]: frameworkAnswer(toolset.session, true, 'ai-sdk', approver) }))
  }

  private run(toolset: Toolset, name: string, input: unknown, toolCallId: string, signal: AbortSignal | undefined, answers?: Record<string, AskAnswer>): Promise<AiSdkToolOutput> {
    const options = signal || answers ? { ...(signal ? { signal } : {}), ...(answers ? { answers } : {}) } : undefined
    return toolset.execute([this.callOf(name, input, toolCallId, true)], options).then(([result]) => toolOutputOf(result!))
  }

  async recordRejection(rejection: Rejection, context: { messages: ModelMessage[]; experimental_context: unknown }): Promise<void> {
    const { approvalId, toolCallId, toolName, input, reason } = rejection
    if (this.recorded.has(approvalId)) return
    this.recorded.set(approvalId, true)
    const toolset = this.toolsetFor({ toolCallId, ...context })
    const approver = await this.approverFor({ approvalId, toolCallId, toolName, input, ...(reason === undefined ? {} : { reason }), session: toolset.session, experimental_context: context.experimental_context })
    const answers = { [toolCallId]: frameworkAnswer(toolset.session, false, 'ai-sdk', approver, reason) }
    await toolset.execute([this.callOf(toolName, input, toolCallId, true)], { answers })
  }

  /** The call as Dogu takes it: the model's own text when the SDK could not parse it (see `repairToolCall`). */
  private callOf(name: string, input: unknown, toolCallId: string, running: boolean): ModelToolCall {
    const raw = running ? this.raw.take(toolCallId, input) : this.raw.peek(toolCallId, input)
    return { id: toolCallId, name, arguments: (raw ?? input ?? null) as ModelToolCall['arguments'] }
  }

  private toolsetFor(context: AiSdkCallContext): Toolset {
    const id = this.options.session ? this.options.session(context) : sessionIdOf(context.experimental_context)
    return this.sessions.get(typeof id === 'string' ? id : undefined)
  }

  private async approverFor(approval: AiSdkApproval): Promise<FrameworkApprover | undefined> {
    const { approver } = this.options
    return typeof approver === 'function' ? await approver(approval) : approver
  }
}

function isAsk(decision: CallDecision): boolean {
  return decision.decision === 'ask'
}

/** `experimental_context.sessionId`, when the app put a string there. */
function sessionIdOf(context: unknown): string | undefined {
  if (!context || typeof context !== 'object') return undefined
  const id = (context as { sessionId?: unknown }).sessionId
  return typeof id === 'string' ? id : undefined
}
