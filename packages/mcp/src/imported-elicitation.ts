import type { Elicitation, ElicitationJsonSchema, Logger, ToolCall } from '@dogu/core'
import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js'

/** Where a server's elicitation comes from, and whom to tell when Dogu cannot put it to anyone. */
export interface ElicitationSource {
  /** The server's name in config, shown with its message so a person knows who asks. */
  server: string
  logger: Logger
  /** Aborted when the server cancels its request: the answer is no longer awaited. */
  signal?: AbortSignal
}

const ACTIONS: Readonly<Record<Elicitation['action'], ElicitResult['action']>> = Object.freeze({ accept: 'accept', decline: 'decline', cancel: 'cancel' })

/**
 * A server's `elicitation/create` as the running call's `call.elicit`: the form (its
 * `requestedSchema` as the server sent it, so defaults and SEP-1330 enums reach Dogu's
 * askers and Dogu's own MCP clients unchanged) goes to the same askers as any tool's. An
 * answer maps back as it came: accept with the values (the form's defaults applied),
 * decline, cancel. Declined with a warning: a URL-mode request (Dogu declares form mode
 * only, so the SDK refuses one before it gets here), one with no call of the server
 * running, and a form `call.elicit` refuses. A request the server withdraws ends as cancel.
 */
export async function answerElicitation(call: ToolCall | undefined, params: ElicitRequestParams, source: ElicitationSource): Promise<ElicitResult> {
  const { server, logger, signal } = source
  const declined = (why: string): ElicitResult => {
    logger.warn('MCP server "%s": declined an elicitation (%s): %s', server, params.message, why)
    return { action: 'decline' }
  }
  if (params.mode === 'url') return declined('Dogu answers form elicitations only, not URL mode')
  if (!call) return declined('no call of this server is running')
  if (call.signal.aborted) return { action: 'cancel' }
  let answer: Elicitation
  try {
    // The server's signal withdraws the question from Dogu's askers too.
    answer = await call.elicit(params.requestedSchema as ElicitationJsonSchema, `MCP server "${server}" asks: ${params.message}`, signal ? { signal } : undefined)
  } catch (error) {
    // The call ended meanwhile (cancelled, timed out): nobody will answer.
    if (call.signal.aborted || signal?.aborted) return { action: 'cancel' }
    return declined(error instanceof Error ? error.message : String(error))
  }
  if (answer.action !== 'accept') return { action: ACTIONS[answer.action] }
  return { action: 'accept', content: answered(answer.value) }
}

/** The values of an accepted form, without fields left undefined (which MCP's content cannot carry). */
function answered(value: unknown): NonNullable<ElicitResult['content']> {
  const content: NonNullable<ElicitResult['content']> = {}
  if (!value || typeof value !== 'object') return content
  for (const [key, field] of Object.entries(value)) {
    if (field !== undefined && field !== null) content[key] = field as string | number | boolean | string[]
  }
  return content
}
