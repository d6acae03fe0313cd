import type { ModelToolCall, ToolResource, ToolResult } from '@dogu/core'
import { AgentError } from '../agent-error'
import { type GeminiPartialArg, StreamedArgs } from './gemini-streamed-args'
import { isBlobResource, joinLines, mediaLines } from './result-media'
import { imageNote, isErrorResult, resultText } from './result-text'

export type { GeminiPartialArg } from './gemini-streamed-args'

/**
 * A part of Gemini content; only text and function calls are read. Other fields (a
 * `thoughtSignature`) are kept as they came. With `streamFunctionCallArguments` a call comes
 * in pieces: `partialArgs` and `willContinue` (see {@link GeminiStreamAccumulator}).
 */
export interface GeminiPart {
  text?: string
  thought?: boolean
  functionCall?: {
    id?: string
    name?: string
    args?: Record<string, unknown>
    partialArgs?: readonly GeminiPartialArg[]
    willContinue?: boolean
  }
  thoughtSignature?: string
}

/** A `generateContent` reply, or one chunk of `streamGenerateContent`. */
export interface GeminiResponse {
  candidates?: readonly { content?: { role?: string; parts?: readonly GeminiPart[] }; finishReason?: string }[]
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number }
}

/** A function response part: output or error, plus images as inline data where Gemini takes them. */
export interface GeminiFunctionResponsePart {
  functionResponse: {
    id?: string
    name: string
    response: { output: string } | { error: string }
    parts?: { inlineData: { mimeType: string; data: string } }[]
  }
}

/** The user turn that answers one model turn's function calls. */
export interface GeminiFunctionResponseContent {
  role: 'user'
  parts: GeminiFunctionResponsePart[]
}

/**
 * Ids given to calls that came without one (the Gemini API leaves `id` out on older
 * models). Such ids are Dogu's own, so they are not sent back: Gemini pairs those
 * responses with their calls by name and order.
 */
export const GEMINI_LOCAL_ID_PREFIX = 'dogu-gemini-'

/** Media types Gemini takes in function responses; others become a note. */
export const GEMINI_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp'])

/**
 * What else a function response's parts take, by Gemini's documentation of multimodal
 * function responses: documents (PDF, plain text) beside the images. Audio is not among them,
 * so a clip is described in the text.
 */
const GEMINI_DOCUMENT_TYPES: ReadonlySet<string> = new Set(['application/pdf', 'text/plain'])

/** A binary resource Gemini takes as inline data. */
function attachable(resource: ToolResource): resource is ToolResource & { blob: string; mimeType: string } {
  return isBlobResource(resource) && !!resource.mimeType && (GEMINI_IMAGE_TYPES.has(resource.mimeType) || GEMINI_DOCUMENT_TYPES.has(resource.mimeType))
}

/** The function calls of a reply (or of parts), for `toolset.execute`. */
export function parseGeminiToolCalls(reply: GeminiResponse | readonly GeminiPart[]): ModelToolCall[] {
  const parts = Array.isArray(reply) ? reply as readonly GeminiPart[] : (reply as GeminiResponse).candidates?.[0]?.content?.parts ?? []
  const calls: ModelToolCall[] = []
  for (const part of parts) {
    const call = part.functionCall
    if (!call?.name) continue
    calls.push({ id: call.id || `${GEMINI_LOCAL_ID_PREFIX}${calls.length}`, name: call.name, arguments: call.args ?? {} })
  }
  return calls
}

/**
 * Collects `streamGenerateContent` chunks. Text arrives in pieces. A function call arrives
 * whole in one part, or, with `streamFunctionCallArguments` (Gemini 3 on Vertex AI), in
 * pieces: a part with its `name` and `willContinue: true`, parts of `partialArgs` (a value at
 * a JSON path each; a string may come in several pieces), and an empty `functionCall` (or a
 * piece without `willContinue`) that ends it. Those pieces are assembled into one part with
 * the whole `args`, as Gemini would have sent it unstreamed, its thought signature kept.
 *
 * `parts` holds the model turn to send back: text, thought and call parts as they came
 * (thought signatures included), each streamed call as its one assembled part.
 */
export class GeminiStreamAccumulator {
  text = ''
  finishReason: string | undefined
  usage: GeminiResponse['usageMetadata']
  readonly parts: GeminiPart[] = []
  /** The call whose arguments are still streaming. */
  private open: { part: GeminiPart; args: StreamedArgs } | undefined

  /**
   * Adds one chunk. Returns the text it added (empty if none). Throws an `AgentError`
   * (`BAD_RESPONSE`) on streamed arguments that cannot be assembled without a guess: a JSON
   * path it cannot read, pieces with no call open, a value that contradicts an earlier one.
   */
  push(chunk: GeminiResponse): string {
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata
    const candidate = chunk.candidates?.[0]
    if (candidate?.finishReason) this.finishReason = candidate.finishReason
    let added = ''
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall && isPiece(part.functionCall)) {
        this.addPiece(part)
        continue
      }
      // A whole call ends one still streaming: pieces carry no id to interleave by.
      if (part.functionCall) this.open = undefined
      this.parts.push(part)
      if (typeof part.text === 'string' && !part.thought) added += part.text
    }
    this.text += added
    return added
  }

  private addPiece(part: GeminiPart) {
    const { partialArgs, willContinue, ...call } = part.functionCall!
    if (call.name) {
      // A new call: its part goes in now, in order, and its args fill in as they come.
      const args: Record<string, unknown> = { ...call.args }
      const whole: GeminiPart = { ...part, functionCall: { ...call, args } }
      this.parts.push(whole)
      this.open = { part: whole, args: new StreamedArgs(args, call.name) }
    } else if (this.open) {
      // Later pieces may carry part fields too (a thought signature, an id): keep them.
      const { functionCall: _, ...fields } = part
      Object.assign(this.open.part, fields)
      if (call.id && !this.open.part.functionCall!.id) this.open.part.functionCall!.id = call.id
    } else if (partialArgs?.length) {
      throw new AgentError('BAD_RESPONSE', `Gemini streamed function call arguments (${partialArgs.map((arg) => arg.jsonPath).join(', ')}) with no call open: no part named the function first`)
    } else {
      return // an end marker with nothing to end
    }
    for (const arg of partialArgs ?? []) this.open.args.add(arg)
    // The call ends at a piece that announces nothing more, for itself or its last path.
    if (willContinue !== true && !(partialArgs ?? []).some((arg) => arg.willContinue === true)) this.open = undefined
  }

  /**
   * The calls so far, for `toolset.execute`. A call whose arguments are still streaming (the
   * stream broke off inside it) carries them as the JSON text that came, left open where it
   * stopped, so the pipeline refuses it as cut off rather than running it on part of its
   * arguments.
   */
  toolCalls(): ModelToolCall[] {
    const calls = parseGeminiToolCalls(this.parts)
    if (this.open) {
      const at = this.parts.filter((part) => part.functionCall?.name).indexOf(this.open.part)
      calls[at] = { ...calls[at], arguments: this.open.args.partialText() }
    }
    return calls
  }
}

/**
 * A piece of a streamed call: arguments, the named part announcing more, or a part without a
 * name or args (`{}` or `{ willContinue }`). A named part that announces nothing more is a
 * whole call, `willContinue: false` or not.
 */
function isPiece(call: NonNullable<GeminiPart['functionCall']>): boolean {
  return call.partialArgs !== undefined || call.willContinue === true || (!call.name && call.args === undefined)
}

/**
 * The user turn answering one model turn's calls: a `functionResponse` per result, in
 * order. Failed calls answer `{ error }`, the others `{ output }` (a background one names
 * its task); images go in the response's `parts` where Gemini takes their type, and so do
 * binary resources that are images, PDFs or plain text. Audio, links, text resources (their
 * text under their name) and other files are described in the text.
 */
export function toGeminiFunctionResponses(results: readonly ToolResult[]): GeminiFunctionResponseContent {
  return {
    role: 'user',
    parts: results.map((result) => {
      const taken = (result.images ?? []).filter((image) => GEMINI_IMAGE_TYPES.has(image.mimeType))
      const left = (result.images ?? []).filter((image) => !GEMINI_IMAGE_TYPES.has(image.mimeType))
      const files = (result.resources ?? []).filter(attachable)
      const text = joinLines(resultText(result, false), left.length ? imageNote(left) : '', ...mediaLines(result, { resource: attachable }))
      const part: GeminiFunctionResponsePart = {
        functionResponse: {
          ...(result.id.startsWith(GEMINI_LOCAL_ID_PREFIX) ? {} : { id: result.id }),
          name: result.name,
          response: isErrorResult(result) ? { error: text } : { output: text },
        },
      }
      const inline = [...taken.map(({ mimeType, data }) => ({ mimeType, data })), ...files.map(({ mimeType, blob }) => ({ mimeType, data: blob }))]
      if (inline.length) part.functionResponse.parts = inline.map((inlineData) => ({ inlineData }))
      return part
    }),
  }
}
