import { type Denial, type ToolAudio, type ToolCall, type ToolImage, type ToolOutputObject, ToolDenial, ToolRateLimit, type ToolResource } from '@dogu/core'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DOGU_META, type DoguResultMeta } from './call-tool-result'

type Block = CallToolResult['content'][number]
type Embedded = Extract<Block, { type: 'resource' }>['resource']
type Link = Extract<Block, { type: 'resource_link' }>

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
 * line for each audio, link or binary resource) as the text; images, audio and resources
 * (embedded ones with their text or blob, links without either) kept beside it;
 * `structuredContent` as `data`. An `isError` result throws, so it ends as `error`; from a
 * trusted Dogu server, a result that server denied ends as `denied` here too, and one its
 * quota refused (or a tool of its upstream limited) as `rate_limited`, with the server's
 * text and `retryAfterMs`.
 */
export function fromCallToolResult(result: CallToolResult, call: ToolCall, trusted: boolean): string | ToolOutputObject {
  const lines: string[] = []
  const images: ToolImage[] = []
  const audio: ToolAudio[] = []
  const resources: ToolResource[] = []
  for (const block of result.content ?? []) {
    if (block.type === 'image') images.push({ mimeType: block.mimeType, data: block.data })
    else if (block.type === 'audio') audio.push({ mimeType: block.mimeType, data: block.data })
    else if (block.type === 'resource') resources.push(embedded(block.resource))
    else if (block.type === 'resource_link') resources.push(link(block))
    const text = (TEXT_OF[block.type] as ((block: Block) => string | undefined) | undefined)?.(block)
    if (text !== undefined) lines.push(text)
  }
  const text = lines.join('\n')
  if (result.isError) {
    const meta = result._meta?.[DOGU_META] as DoguResultMeta | undefined
    // The server's structured denial rides along; the pipeline keeps it only where it says what the text says.
    if (trusted && meta?.status === 'denied') throw new ToolDenial(text.replace(/^Permission denied: /, ''), denialIn(meta.params))
    if (trusted && meta?.status === 'rate_limited') throw new ToolRateLimit(text, typeof meta.retryAfterMs === 'number' ? meta.retryAfterMs : undefined)
    throw new Error(text.replace(/^Error: /, '') || 'the MCP server reported an error without a message')
  }
  if (!images.length && !audio.length && !resources.length && result.structuredContent === undefined) return text
  const output: ToolOutputObject = { text }
  if (images.length) output.images = images
  if (audio.length) output.audio = audio
  if (resources.length) output.resources = resources
  if (result.structuredContent !== undefined) output.data = result.structuredContent
  return output
}

/** An embedded resource: its URI, MIME type and text or base64 blob. */
function embedded(resource: Embedded): ToolResource {
  const entry: ToolResource = { uri: resource.uri }
  if (typeof resource.mimeType === 'string') entry.mimeType = resource.mimeType
  if ('text' in resource && typeof resource.text === 'string') entry.text = resource.text
  else if ('blob' in resource && typeof resource.blob === 'string') entry.blob = resource.blob
  return entry
}

/** A `resource_link`: where the resource is, what it is called; neither text nor blob, so it stays a link. */
function link(block: Link): ToolResource {
  const entry: ToolResource = { uri: block.uri }
  for (const key of ['name', 'title', 'description', 'mimeType'] as const) {
    if (typeof block[key] === 'string') entry[key] = block[key]
  }
  return entry
}

/** A denial's parameters from a server's `_meta`, when they look like one. */
function denialIn(params: unknown): Denial | undefined {
  return params && typeof params === 'object' && typeof (params as { cause?: unknown }).cause === 'string' ? params as Denial : undefined
}
