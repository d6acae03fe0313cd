import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type PermissionRequest, PermissionEngine, type Tool, type ToolCall, type ToolResult, ToolRegistry } from '@dogu/core'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { type Sandbox, failure, fakeCall, sandbox, tree } from './helpers'

// Issue 43, item 11: what the person was shown is what is written. A file that changed
// between the preview and the run is STALE, and nothing is written.

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

const at = (rel: string) => join(box.root, rel)
const text = (rel: string) => readFile(at(rel), 'utf8')

/**
 * One call through a registry whose permission engine asks, as a bot's host does: the
 * asker gets the request (with the preview), then `meanwhile` runs (another program writes
 * the file), then the person approves.
 */
async function approvedAfter(name: 'write' | 'edit', args: Record<string, unknown>, meanwhile: () => Promise<void>): Promise<{ result: ToolResult; request: PermissionRequest }> {
  const fs = createFsTools({ workspace: box.root })
  const registry = new ToolRegistry()
  const engine = new PermissionEngine()
  registry.permissions = engine
  registry.define(fs.tools[name])
  let request!: PermissionRequest
  engine.addAsker(async (asked, { respond }) => {
    request = asked
    await meanwhile()
    respond({ decision: 'allow', by: 'u1' })
  })
  const [result] = await registry.toolset({ session: { id: 's1', userId: 'u1' } }).execute([{ id: 'c1', name, arguments: args }])
  return { result, request }
}

/** The model's result for a STALE refusal: the tool's error (its FsError code is STALE), saying why. */
function expectStale(result: ToolResult): void {
  expect([result.status, result.code]).toEqual(['error', 'tool_error'])
  expect(result.content).toMatch(/^Error: \S+ changed on disk after the change was shown for approval \(.+\); nothing was written\./)
}

describe('through the host: the person approves a preview, the file changes before the answer', () => {
  test('the issue\'s case: -DEBUG = True +DEBUG = False shown, REQUIRE_AUTH written meanwhile: STALE, file untouched', async () => {
    await tree(box.root, { 'settings.py': 'DEBUG = True\n' })
    const { result, request } = await approvedAfter('edit', { path: 'settings.py', oldText: 'True', newText: 'False' }, () => writeFile(at('settings.py'), 'REQUIRE_AUTH = True\n'))
    expect(request.preview?.diff).toBe('--- a/settings.py\n+++ b/settings.py\n@@ -1 +1 @@\n-DEBUG = True\n+DEBUG = False')
    expectStale(result)
    expect(result.content).toBe('Error: settings.py changed on disk after the change was shown for approval (it no longer has the content the preview showed); nothing was written. Read it again and redo the change, so that what is approved is what is written.')
    expect(await text('settings.py')).toBe('REQUIRE_AUTH = True\n')
  })

  test('write over an existing file: the file changed after the preview is STALE and keeps its new content', async () => {
    await tree(box.root, { 'notes.md': 'v1\n' })
    const { result, request } = await approvedAfter('write', { path: 'notes.md', content: 'v2 from the model\n' }, () => writeFile(at('notes.md'), 'v1 edited by the owner\n'))
    expect(request.preview?.diff).toBe('--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-v1\n+v2 from the model')
    expectStale(result)
    expect(await text('notes.md')).toBe('v1 edited by the owner\n')
  })

  test('write of a new file that exists by the time of the run: STALE, the other file stays', async () => {
    const { result, request } = await approvedAfter('write', { path: 'new.txt', content: 'from the model\n' }, () => writeFile(at('new.txt'), 'someone else\'s\n'))
    expect(request.preview?.text).toBe('Creates new.txt (1 line).')
    expectStale(result)
    expect(await text('new.txt')).toBe('someone else\'s\n')
  })

  test('an edit previewed as refused (no such file) does not write a file that appeared meanwhile', async () => {
    const { result, request } = await approvedAfter('edit', { path: 'app.cfg', oldText: 'auth=on', newText: 'auth=off' }, () => writeFile(at('app.cfg'), 'auth=on\n'))
    expect(request.preview?.text).toMatch(/^edit will be refused \(NOT_FOUND\)/)
    expectStale(result)
    expect(await text('app.cfg')).toBe('auth=on\n')
  })

  test('unchanged since the preview, the approved edit and write are written', async () => {
    await tree(box.root, { 'settings.py': 'DEBUG = True\n', 'notes.md': 'v1\n' })
    const edited = await approvedAfter('edit', { path: 'settings.py', oldText: 'True', newText: 'False' }, async () => {})
    expect(edited.result.status).toBe('ok')
    expect(await text('settings.py')).toBe('DEBUG = False\n')
    const written = await approvedAfter('write', { path: 'notes.md', content: 'v2\n' }, async () => {})
    expect(written.result.status).toBe('ok')
    const created = await approvedAfter('write', { path: 'fresh.txt', content: 'new\n' }, async () => {})
    expect(created.result.status).toBe('ok')
    expect([await text('notes.md'), await text('fresh.txt')]).toEqual(['v2\n', 'new\n'])
  })

  test('a file written back to the very content that was previewed is not stale', async () => {
    await tree(box.root, { 'settings.py': 'DEBUG = True\n' })
    const { result } = await approvedAfter('edit', { path: 'settings.py', oldText: 'True', newText: 'False' }, async () => {
      await writeFile(at('settings.py'), 'REQUIRE_AUTH = True\n')
      await writeFile(at('settings.py'), 'DEBUG = True\n')
    })
    expect(result.status).toBe('ok')
    expect(await text('settings.py')).toBe('DEBUG = False\n')
  })
})

describe('the tools: preview and run of one call', () => {
  const named = (tool: Tool, call: ToolCall) => Object.assign(call, { name: tool.name })

  test('a call run without a preview (a rule allowed it) is checked as before, against what run read', async () => {
    await tree(box.root, { 'a.txt': 'one\n' })
    const fs = createFsTools({ workspace: box.root })
    const call = named(fs.tools.write, fakeCall())
    await writeFile(at('a.txt'), 'changed\n')
    await fs.tools.write.run(fs.tools.write.args({ path: 'a.txt', content: 'two\n' }), call)
    expect(await text('a.txt')).toBe('two\n')
  })

  test('the preview of another call does not hold this one', async () => {
    await tree(box.root, { 'a.txt': 'one\n' })
    const fs = createFsTools({ workspace: box.root })
    const args = fs.tools.write.args({ path: 'a.txt', content: 'two\n' })
    await fs.tools.write.preview!(args, named(fs.tools.write, fakeCall()))
    await writeFile(at('a.txt'), 'changed\n')
    await fs.tools.write.run(args, named(fs.tools.write, fakeCall()))
    expect(await text('a.txt')).toBe('two\n')
  })

  test('an approver who changed the path to another file: the preview of the first file does not hold it', async () => {
    await tree(box.root, { 'a.txt': 'one\n', 'b.txt': 'bee\n' })
    const fs = createFsTools({ workspace: box.root })
    const call = named(fs.tools.write, fakeCall())
    await fs.tools.write.preview!(fs.tools.write.args({ path: 'a.txt', content: 'two\n' }), call)
    await writeFile(at('a.txt'), 'changed\n')
    await fs.tools.write.run(fs.tools.write.args({ path: 'b.txt', content: 'two\n' }), call)
    expect([await text('a.txt'), await text('b.txt')]).toEqual(['changed\n', 'two\n'])
  })

  test('a write previewed as creating a file, which exists by the run, fails with the code STALE', async () => {
    const fs = createFsTools({ workspace: box.root })
    const call = named(fs.tools.write, fakeCall())
    const args = fs.tools.write.args({ path: 'n.txt', content: 'mine\n' })
    await fs.tools.write.preview!(args, call)
    await writeFile(at('n.txt'), 'theirs\n')
    const error = await failure(Promise.resolve(fs.tools.write.run(args, call)))
    expect([error.code, error.message]).toEqual(['STALE', 'n.txt changed on disk after the change was shown for approval (the preview showed it being created; it exists now); nothing was written. Read it again and redo the change, so that what is approved is what is written.'])
    expect(await text('n.txt')).toBe('theirs\n')
  })

  test('the same file under another spelling of its path is still held to its preview', async () => {
    await tree(box.root, { 'src/a.txt': 'one\n' })
    const fs = createFsTools({ workspace: box.root })
    const call = named(fs.tools.edit, fakeCall())
    await fs.tools.edit.preview!(fs.tools.edit.args({ path: 'src/a.txt', oldText: 'one', newText: 'two' }), call)
    await writeFile(at('src/a.txt'), 'one more\n')
    const error = await failure(Promise.resolve(fs.tools.edit.run(fs.tools.edit.args({ path: './src/../src/a.txt', oldText: 'one', newText: 'two' }), call)))
    expect(error.code).toBe('STALE')
    expect(await text('src/a.txt')).toBe('one more\n')
  })
})
