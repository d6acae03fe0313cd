import type { ToolResult } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { toAnthropicToolResults, toChatToolMessages, toGeminiFunctionResponses, toResponsesToolOutputs } from '../src'
import { PNG } from './fixtures'

// 12 KB of audio: 12,288 bytes are 16,384 base64 characters.
const WAV = { mimeType: 'audio/wav', data: 'A'.repeat(16_384) }
const LINK = { uri: 'https://example.com/report', name: 'report' }
const NOTES = { uri: 'file:///notes.md', name: 'notes.md', title: 'Meeting notes', mimeType: 'text/markdown', text: '# Notes\n- ship it' }
// 3 bytes, no padding
const PDF = { uri: 'file:///a.pdf', name: 'a.pdf', mimeType: 'application/pdf', blob: 'JVBE' }
const ZIP = { uri: 'file:///b.zip', mimeType: 'application/zip', blob: 'UEsDBA==' }
const SHOT = { uri: 'file:///shot.png', name: 'shot.png', mimeType: 'image/png', blob: PNG.data }

const result: ToolResult = {
  id: 'm1',
  name: 'gather',
  status: 'ok',
  content: 'gathered',
  audio: [WAV],
  resources: [LINK, NOTES, PDF, ZIP, SHOT],
  durationMs: 1,
}

describe('audio and resources in tool results', () => {
  it('OpenAI Chat: text only, so each is described; a text resource\'s text is inline', () => {
    expect(toChatToolMessages([result])).toEqual([{
      role: 'tool',
      tool_call_id: 'm1',
      content: [
        'gathered',
        '[audio audio/wav, 12 KB]',
        '[resource report: https://example.com/report]',
        '[resource Meeting notes: file:///notes.md]',
        '# Notes\n- ship it',
        '[resource a.pdf: file:///a.pdf, application/pdf, 3 B]',
        '[resource file:///b.zip, application/zip, 4 B]',
        '[resource shot.png: file:///shot.png, image/png, 8 B]',
      ].join('\n'),
    }])
  })

  it('OpenAI Responses: a PDF is an input_file and an image resource an input_image; the rest is text', () => {
    expect(toResponsesToolOutputs([result])).toEqual([{
      type: 'function_call_output',
      call_id: 'm1',
      output: [
        {
          type: 'input_text',
          text: [
            'gathered',
            '[audio audio/wav, 12 KB]',
            '[resource report: https://example.com/report]',
            '[resource Meeting notes: file:///notes.md]',
            '# Notes\n- ship it',
            '[resource a.pdf: file:///a.pdf, application/pdf, 3 B, attached]',
            '[resource file:///b.zip, application/zip, 4 B]',
            '[resource shot.png: file:///shot.png, image/png, 8 B, attached]',
          ].join('\n'),
        },
        { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG.data}`, detail: 'auto' },
      ],
    }])
  })

  it('Anthropic: text and PDF resources are documents, an image resource an image block; audio and the rest are text', () => {
    expect(toAnthropicToolResults([result]).content).toEqual([{
      type: 'tool_result',
      tool_use_id: 'm1',
      content: [
        {
          type: 'text',
          text: [
            'gathered',
            '[audio audio/wav, 12 KB]',
            '[resource report: https://example.com/report]',
            '[resource Meeting notes: file:///notes.md, attached]',
            '[resource a.pdf: file:///a.pdf, application/pdf, 3 B, attached]',
            '[resource file:///b.zip, application/zip, 4 B]',
            '[resource shot.png: file:///shot.png, image/png, 8 B, attached]',
          ].join('\n'),
        },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: '# Notes\n- ship it' }, title: 'Meeting notes', context: 'file:///notes.md' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'a.pdf', context: 'file:///a.pdf' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.data } },
      ],
    }])
  })

  it('Gemini: a PDF and an image resource are inline data; audio, which function responses do not take, is text', () => {
    const [part] = toGeminiFunctionResponses([{ ...result, images: [PNG] }]).parts
    expect(part!.functionResponse).toEqual({
      id: 'm1',
      name: 'gather',
      response: {
        output: [
          'gathered',
          '[audio audio/wav, 12 KB]',
          '[resource report: https://example.com/report]',
          '[resource Meeting notes: file:///notes.md]',
          '# Notes\n- ship it',
          '[resource a.pdf: file:///a.pdf, application/pdf, 3 B, attached]',
          '[resource file:///b.zip, application/zip, 4 B]',
          '[resource shot.png: file:///shot.png, image/png, 8 B, attached]',
        ].join('\n'),
      },
      parts: [
        { inlineData: PNG },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
        { inlineData: { mimeType: 'image/png', data: PNG.data } },
      ],
    })
  })

  it('a failed call keeps its error form with its media described', () => {
    const failed: ToolResult = { id: 'm2', name: 'gather', status: 'error', code: 'tool_error', content: 'partial', audio: [WAV], durationMs: 1 }
    expect(toChatToolMessages([failed])[0]!.content).toBe('Error: partial\n[audio audio/wav, 12 KB]')
    expect(toGeminiFunctionResponses([failed]).parts[0]!.functionResponse.response).toEqual({ error: 'partial\n[audio audio/wav, 12 KB]' })
    expect(toAnthropicToolResults([failed]).content[0]).toEqual({
      type: 'tool_result', tool_use_id: 'm2', content: [{ type: 'text', text: 'partial\n[audio audio/wav, 12 KB]' }], is_error: true,
    })
  })

  it('sizes read as a person would: bytes, then KB, then MB', () => {
    const sized = (data: string) => toChatToolMessages([{ ...result, content: '', audio: [{ mimeType: 'audio/mpeg', data }], resources: [] }])[0]!.content
    expect([sized('AAA='), sized('A'.repeat(1368)), sized('A'.repeat(2_097_152))]).toEqual([
      '[audio audio/mpeg, 2 B]', '[audio audio/mpeg, 1 KB]', '[audio audio/mpeg, 1.5 MB]',
    ])
  })

  it('a result without audio or resources reads as before', () => {
    const plain: ToolResult = { id: 'p', name: 'x', status: 'ok', content: 'done', durationMs: 0 }
    expect(toChatToolMessages([plain])[0]!.content).toBe('done')
    expect(toResponsesToolOutputs([plain])[0]!.output).toBe('done')
    expect(toAnthropicToolResults([plain]).content[0]).toEqual({ type: 'tool_result', tool_use_id: 'p', content: [{ type: 'text', text: 'done' }] })
    expect(toGeminiFunctionResponses([plain]).parts[0]!.functionResponse).toEqual({ id: 'p', name: 'x', response: { output: 'done' } })
  })
})
