import type { ToolResult } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { annotationsOf, effectOf, importedName, McpError, runDoguMcp, toCallToolResult } from '../src'
import { approvalForm, MESSAGE_PREVIEW_CHARS, previewText } from '../src/approval-form'

describe('annotations ⇄ traits', () => {
  it.each([
    ['read', { readOnlyHint: true, destructiveHint: false }],
    ['write', { readOnlyHint: false, destructiveHint: true, openWorldHint: false }],
    ['exec', { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
  ] as const)('%s → %o → back to %s', (effect, annotations) => {
    expect(annotationsOf({ effect })).toEqual(annotations)
    expect(effectOf(annotations)).toBe(effect)
  })

  it('no annotations, or only MCP\'s defaults, mean exec', () => {
    expect(effectOf(undefined)).toBe('exec')
    expect(effectOf({})).toBe('exec')
    expect(effectOf({ destructiveHint: false })).toBe('exec')
  })
})

describe('toCallToolResult', () => {
  const base: ToolResult = { id: '1', name: 't', status: 'ok', content: 'text', durationMs: 1 }
  it('wraps data that is not an object, since structuredContent must be one', () => {
    expect(toCallToolResult({ ...base, data: [1, 2] })).toEqual({ content: [{ type: 'text', text: 'text' }], structuredContent: { value: [1, 2] }, _meta: { 'dogu.dev/result': { status: 'ok' } } })
  })
  it('a background result is an error for the client, with its task id', () => {
    expect(toCallToolResult({ ...base, status: 'background', code: 'background', taskId: 'task_1' })).toEqual({
      content: [{ type: 'text', text: 'text' }],
      isError: true,
      _meta: { 'dogu.dev/result': { status: 'background', code: 'background', taskId: 'task_1' } },
    })
  })
})

describe('importedName', () => {
  it('keeps valid names, replaces other characters, hashes long names apart', () => {
    expect(importedName('fs', 'read_file')).toBe('fs_read_file')
    expect(importedName('fs', 'read.file/v2')).toBe('fs_read_file_v2')
    const a = importedName('x', 'a'.repeat(80))
    const b = importedName('x', `${'a'.repeat(79)}b`)
    expect(a).toHaveLength(64)
    expect(a).not.toBe(b)
  })
})

describe('approvalForm: the preview in the message', () => {
  const request = { summary: 'write(path=a.txt)', reason: 'no rule matches', confirm: undefined } as any
  it('carries the command, the URL, the text and the diff under the question', () => {
    expect(approvalForm({ ...request, preview: { command: 'make', url: 'https://x.example/', text: 'in /w', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b' } }).message).toBe([
      'Allow write(path=a.txt)? no rule matches',
      '',
      '$ make',
      'URL: https://x.example/',
      'in /w',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1 +1 @@',
      '-a',
      '+b',
    ].join('\n'))
    expect(approvalForm(request).message).toBe('Allow write(path=a.txt)? no rule matches')
  })
  it('bounds it by characters too, saying how many were left out', () => {
    const text = previewText({ diff: `+${'x'.repeat(10_000)}` })
    expect(text).toBe(`+${'x'.repeat(MESSAGE_PREVIEW_CHARS - 1)}\n… ${10_001 - MESSAGE_PREVIEW_CHARS} more characters of the preview not shown`)
    const lines = previewText({ text: Array.from({ length: 100 }, () => 'y'.repeat(99)).join('\n') })
    expect(lines.split('\n')).toHaveLength(41)
    expect(lines.split('\n').at(-1)).toBe(`… 60 more lines, ${60 * 100} more characters of the preview not shown`)
  })
})

describe('runDoguMcp', () => {
  it('a config it cannot read is a clear error', async () => {
    await expect(runDoguMcp(['/nonexistent/dogu-mcp.json'])).rejects.toSatisfy((error: Error) =>
      McpError.is(error, 'INVALID_OPTIONS') && error.message.startsWith('cannot read the dogu-mcp config /nonexistent/dogu-mcp.json: ENOENT'))
  })
})
