import type { ModelToolCall, ToolResource, ToolResult } from '@dogu/core'
import { isBlobResource, joinLines, mediaLines } from './result-media'
import { imageNote, isErrorResult, resultText } from './result-text'

/** A part of Gemini content; only text and function calls are read. Other fields (a `thoughtSignature`) are kept as they came. */
export interface GeminiPart {
  text?: string
  thought?: boolean
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> }
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
 * Collects `streamGenerateContent` chunks. Gemini sends each function call whole in one
 * part; text arrives in pieces. The parts are kept as they came (thought signatures
 * included), since the model turn must go back unchanged.
 */
export class GeminiStreamAccumulator {
  text = ''
  finishReason: string | undefined
  usage: GeminiResponse['usageMetadata']
  readonly parts: GeminiPart[] = []

  /** Adds one chunk. Returns the text it added (empty if none). */
  push(chunk: GeminiResponse): string {
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata
    const candidate = chunk.candidates?.[0]
    if (candidate?.finishReason) this.finishReason = candidate.finishReason
    let added = ''
    for (const part of candidate?.content?.parts ?? []) {
      this.parts.push(part)
      if (typeof part.text === 'string' && !part.thought) added += part.text
    }
    this.text += added
    return added
  }

  /** The calls so far, for `toolset.execute`. */
  toolCalls(): ModelToolCall[] {
    return parseGeminiToolCalls(this.parts)
  }
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
