import { type ToolCall, type ToolImage, type ToolOutputObject, ToolRateLimit } from '@dogu/core'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DOGU_META, type DoguResultMeta } from './call-tool-result'

type Block = CallToolResult['content'][number]

// One reading per content type: what the model sees of each block.
const TEXT_OF: { [K in Block['type']]: (block: Extract<Block, { type: K }>) => string | undefined } = {
  text: (block) => block.text,
  image: () => undefined,
  audio: (block) => `[audio ${block.mimeType}]`,
  resource_link: (block) => `[resource ${block.name}: ${block.uri}]`,
  resource: (block) => ('text' in block.resource && typeof block.resource.text === 'string' ? block.resource.text : `[resource ${block.resource.uri}]`),
}

/**
 * What an imported tool's `run` returns for an MCP tool result: the text blocks (and a
 * line for each audio, link or binary resource), the images, `structuredContent` as
 * `data`. An `isError` result throws, so it ends as `error`; from a trusted Dogu server, a
 * result that server denied ends as `denied` here too, and one its quota refused (or a tool
 * of its upstream limited) as `rate_limited`, with the server's text and `retryAfterMs`.
 */
export function fromCallToolResult(result: CallToolResult, call: ToolCall, trusted: boolean): string | ToolOutputObject {
  const lines: string[] = []
  const images: ToolImage[] = []
  for (const block of result.content ?? []) {
    if (block.type === 'image') images.push({ mimeType: block.mimeType, data: block.data })
    const text = (TEXT_OF[block.type] as ((block: Block) => string | undefined) | undefined)?.(block)
    if (text !== undefined) lines.push(text)
  }
  const text = lines.join('\n')
  if (result.isError) {
    const meta = result._meta?.[DOGU_META] as DoguResultMeta | undefined
    if (trusted && meta?.status === 'denied') call.deny(text.replace(/^Permission denied: /, ''))
    if (trusted && meta?.status === 'rate_limited') throw new ToolRateLimit(text, typeof meta.retryAfterMs === 'number' ? meta.retryAfterMs : undefined)
    throw new Error(text.replace(/^Error: /, '') || 'the MCP server reported an error without a message')
  }
  if (!images.length && result.structuredContent === undefined) return text
  const output: ToolOutputObject = { text }
  if (images.length) output.images = images
  if (result.structuredContent !== undefined) output.data = result.structuredContent
  return output
}

