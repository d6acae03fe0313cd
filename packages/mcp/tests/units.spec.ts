import type { ToolResult } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { annotationsOf, effectOf, importedName, McpError, runDoguMcp, toCallToolResult } from '../src'
import { formDefaults } from '../src/form-defaults'

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

describe('formDefaults', () => {
  it('fills every field from its default, or nothing when a required field has none', () => {
    expect(formDefaults({ type: 'object', properties: { decision: { type: 'string', default: 'once' } }, required: ['decision'] })).toEqual({ decision: 'once' })
    expect(formDefaults({ type: 'object', properties: { name: { type: 'string' }, n: { type: 'number', default: 1 } }, required: ['name'] })).toBeUndefined()
    expect(formDefaults({ type: 'object', properties: { name: { type: 'string' } } })).toEqual({})
  })
})

describe('runDoguMcp', () => {
  it('a config it cannot read is a clear error', async () => {
    await expect(runDoguMcp(['/nonexistent/dogu-mcp.json'])).rejects.toSatisfy((error: Error) =>
      McpError.is(error, 'INVALID_OPTIONS') && error.message.startsWith('cannot read the dogu-mcp config /nonexistent/dogu-mcp.json: ENOENT'))
  })
})
