import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type PermissionRequest, PermissionEngine, type Tool, type ToolCall, type ToolPreview, ToolRegistry } from '@dogu/core'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFsTools } from '../src'
import { PREVIEW_DIFF_LINES, PREVIEW_HUNKS } from '../src/preview-change'
import { type Sandbox, failure, fakeCall, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

const lines = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${i + from}\n`).join('')

/** The tool's preview as the pipeline runs it: arguments validated, under the tool's name. */
async function preview(tool: Tool, args: Record<string, unknown>, call: ToolCall = fakeCall()): Promise<ToolPreview | undefined> {
  return tool.preview!(tool.args(args), { ...call, name: tool.name } as ToolCall)
}

/** Every file below the sandbox (workspace and siblings), with its content: what a preview must leave as it was. */
async function snapshot(): Promise<Record<string, string>> {
  const files: Record<string, string> = {}
  for (const entry of await readdir(box.base, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name)] = await readFile(join(entry.parentPath, entry.name), 'utf8')
  }
  return files
}

describe('write: preview', () => {
  test('replacing a file shows the unified diff it would apply, and writes nothing', async () => {
    await tree(box.root, { 'src/app.ts': 'const a = 1\nconst b = 2\nconst c = 3\n' })
    const fs = createFsTools({ workspace: box.root })
    const before = await snapshot()
    expect(await preview(fs.tools.write, { path: 'src/app.ts', content: 'const a = 1\nconst b = 20\nconst c = 3\n' })).toEqual({
      text: 'Changes src/app.ts: +1 -1 lines in 1 hunk.',
      diff: [
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
        '@@ -1,3 +1,3 @@',
        ' const a = 1',
        '-const b = 2',
        '+const b = 20',
        ' const c = 3',
      ].join('\n'),
    })
    expect(await snapshot()).toEqual(before)
  })

  test('a new file is all added, and neither it nor its missing directories are created', async () => {
    const fs = createFsTools({ workspace: box.root })
    expect(await preview(fs.tools.write, { path: 'notes/new/todo.md', content: '# Todo\n- milk\n' })).toEqual({
      text: 'Creates notes/new/todo.md (2 lines).',
      diff: '--- /dev/null\n+++ b/notes/new/todo.md\n@@ -0,0 +1,2 @@\n+# Todo\n+- milk',
    })
    expect(await readdir(box.root)).toEqual([])
  })

  test('the same content says nothing would change; a missing final newline is shown', async () => {
    await tree(box.root, { 'a.txt': 'one\n' })
    const fs = createFsTools({ workspace: box.root })
    expect(await preview(fs.tools.write, { path: 'a.txt', content: 'one\n' })).toEqual({ text: 'No change: a.txt already has this content; nothing would be written.' })
    expect((await preview(fs.tools.write, { path: 'a.txt', content: 'one' }))!.diff).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+one\n\\ No newline at end of file')
  })

  test(`bounds the diff to ${PREVIEW_HUNKS} hunks and ${PREVIEW_DIFF_LINES} lines, counting what it folds`, async () => {
    // 60 changes 10 lines apart: 60 hunks of 8 lines (3 context, -, +, 3 context) and a header each.
    const old = lines(600)
    const changed = old.split('\n').map((line, i) => (i % 10 === 5 ? `${line} changed` : line)).join('\n')
    const fs = createFsTools({ workspace: box.root })
    await tree(box.root, { 'big.txt': old })
    const shown = (await preview(fs.tools.write, { path: 'big.txt', content: changed }))!
    expect(shown.text).toBe('Changes big.txt: +60 -60 lines in 60 hunks.')
    const diff = shown.diff!.split('\n')
    expect(diff.filter((line) => line.startsWith('@@'))).toHaveLength(PREVIEW_HUNKS)
    expect(diff.at(-1)).toBe('… 20 more hunks (180 lines) folded')
    expect(diff.length).toBeLessThanOrEqual(PREVIEW_DIFF_LINES + 3)
    // A rewrite whose one hunk is longer than the budget: its head, then the count.
    const rewrite = (await preview(fs.tools.write, { path: 'fresh.txt', content: lines(1000) }))!
    const rows = rewrite.diff!.split('\n')
    expect(rewrite.text).toBe('Creates fresh.txt (1000 lines).')
    expect(rows.slice(0, 4)).toEqual(['--- /dev/null', '+++ b/fresh.txt', '@@ -0,0 +1,1000 @@', '+line 1'])
    expect(rows.at(-1)).toBe(`… ${1000 - (PREVIEW_DIFF_LINES - 1)} more lines of this hunk folded`)
    expect(rows).toHaveLength(PREVIEW_DIFF_LINES + 3)
  })

  test('a binary file, a file over the limit and content over the limit: the call will be refused, no diff', async () => {
    await writeFile(join(box.root, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]))
    await tree(box.root, { 'huge.log': 'x'.repeat(2048) })
    const fs = createFsTools({ workspace: box.root, limits: { writeBytes: 1024 } })
    expect(await preview(fs.tools.write, { path: 'logo.png', content: 'text' })).toEqual({ text: 'write will be refused (BINARY): logo.png is a binary file; write only replaces UTF-8 text files within its limit. Nothing would be written.' })
    expect(await preview(fs.tools.write, { path: 'huge.log', content: 'small' })).toEqual({ text: 'write will be refused (TOO_LARGE): huge.log is 2 KiB, over the 1 KiB limit for this operation; write only replaces UTF-8 text files within its limit. Nothing would be written.' })
    expect((await preview(fs.tools.write, { path: 'new.txt', content: 'y'.repeat(2000) }))!.text).toMatch(/^write will be refused \(TOO_LARGE\): the new content of new\.txt would be 2000 bytes, over the 1024 byte limit/)
  })
})

describe('write and edit: the preview goes through the tool\'s path checks', () => {
  const SECRET = 'password=hunter2\n'

  /** A sibling whose name starts with the workspace's, a link out of the workspace, and a link to a file outside. */
  async function attackTree() {
    await tree(box.base, { 'root-evil/x': SECRET, 'outside/secret.txt': SECRET })
    await tree(box.root, { 'out': { link: join(box.base, 'outside') }, 'leak.txt': { link: join(box.base, 'outside', 'secret.txt') }, '.git/config': '[core]\n' })
  }

  test.each([
    ['../root-evil/x', 'OUTSIDE_ROOT'],
    ['../outside/secret.txt', 'OUTSIDE_ROOT'],
    ['out/secret.txt', 'OUTSIDE_ROOT'],
    ['leak.txt', 'OUTSIDE_ROOT'],
    ['/etc/hostname', 'OUTSIDE_ROOT'],
    ['.git/config', 'READ_ONLY'],
  ])('%s: the preview says the call will be refused (%s), shows nothing of the file, and writes nothing', async (path, code) => {
    await attackTree()
    const fs = createFsTools({ workspace: box.root, protected: ['.git'] })
    const before = await snapshot()
    for (const [tool, args] of [
      [fs.tools.write, { path, content: 'owned\n' }],
      [fs.tools.edit, { path, oldText: 'hunter2', newText: 'owned' }],
      [fs.tools.edit, { path, oldText: '', newText: 'owned\n' }],
    ] as const) {
      const shown = (await preview(tool, args))!
      expect(shown.diff, `${tool.name} ${path}`).toBeUndefined()
      expect(shown.text).toMatch(new RegExp(`^${tool.name} will be refused \\(${code}\\): `))
      expect(shown.text).not.toContain('hunter2')
      // The tool itself refuses it with the same code.
      const error = await failure(Promise.resolve(tool.run(tool.args(args as any), { ...fakeCall(), name: tool.name } as ToolCall)))
      expect(error.code).toBe(code)
    }
    expect(await snapshot()).toEqual(before)
  })

  test('a link swapped after the permission check is refused by the preview as by the tool', async () => {
    await tree(box.root, { 'docs/a.md': 'a\n', 'secrets/key': 'k\n' })
    await tree(box.root, { 'link': { link: join(box.root, 'docs') } })
    const fs = createFsTools({ workspace: box.root })
    const call = { ...fakeCall(), name: 'write' } as ToolCall
    // The pipeline computes the permission first: it is decided for docs/a.md.
    expect(fs.tools.write.permission!({ path: 'link/a.md', content: 'x' }, call)).toEqual({ name: 'fs.write', target: 'docs/a.md' })
    const { rm, symlink } = await import('node:fs/promises')
    await rm(join(box.root, 'link'))
    await symlink(join(box.root, 'secrets'), join(box.root, 'link'))
    await writeFile(join(box.root, 'secrets', 'a.md'), 'private\n')
    const shown = (await fs.tools.write.preview!({ path: 'link/a.md', content: 'x' }, call))!
    expect(shown.text).toMatch(/^write will be refused \(CHANGED\): /)
    expect(shown.diff).toBeUndefined()
  })
})

describe('edit: preview', () => {
  test('shows the replacement as a diff, with context, and writes nothing', async () => {
    await tree(box.root, { 'config.yml': lines(10) })
    const fs = createFsTools({ workspace: box.root })
    expect(await preview(fs.tools.edit, { path: 'config.yml', oldText: 'line 5\n', newText: 'line five\nline 5.5\n' })).toEqual({
      text: 'Changes config.yml: +2 -1 lines in 1 hunk.',
      diff: [
        '--- a/config.yml',
        '+++ b/config.yml',
        '@@ -2,7 +2,8 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+line five',
        '+line 5.5',
        ' line 6',
        ' line 7',
        ' line 8',
      ].join('\n'),
    })
    expect(await readFile(join(box.root, 'config.yml'), 'utf8')).toBe(lines(10))
  })

  test('an edit the tool would refuse says why, as the tool would', async () => {
    await tree(box.root, { 'a.txt': 'x\nx\n' })
    const fs = createFsTools({ workspace: box.root })
    expect((await preview(fs.tools.edit, { path: 'a.txt', oldText: 'y', newText: 'z' }))!.text).toBe('edit will be refused (NO_MATCH): oldText was not found in a.txt. Read the file again and copy the text exactly, whitespace and indentation included. Nothing would be written.')
    expect((await preview(fs.tools.edit, { path: 'a.txt', oldText: 'x', newText: 'z' }))!.text).toMatch(/^edit will be refused \(AMBIGUOUS\): oldText occurs 2 times in a\.txt/)
    expect((await preview(fs.tools.edit, { path: 'a.txt', oldText: '', newText: 'z' }))!.text).toMatch(/^edit will be refused \(EXISTS\): a\.txt already exists/)
    expect((await preview(fs.tools.edit, { path: 'gone.txt', oldText: 'x', newText: 'z' }))!.text).toMatch(/^edit will be refused \(NOT_FOUND\): "gone\.txt" does not exist/)
    expect((await preview(fs.tools.edit, { path: 'a.txt', oldText: 'x', newText: 'x' }))!.text).toMatch(/^edit will be refused \(NO_CHANGE\)/)
    expect((await preview(fs.tools.edit, { path: 'b.txt', oldText: '', newText: 'new\n' }))).toEqual({ text: 'Creates b.txt (1 line).', diff: '--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new' })
    expect(await readdir(box.root)).toEqual(['a.txt'])
  })
})

describe('in the pipeline', () => {
  test('the person asked gets the diff; a declined write leaves the file as it was', async () => {
    await tree(box.root, { 'a.txt': 'old\n' })
    const fs = createFsTools({ workspace: box.root })
    const registry = new ToolRegistry()
    const engine = new PermissionEngine()
    registry.permissions = engine
    registry.define(fs.tools.write)
    const requests: PermissionRequest[] = []
    engine.addAsker((request, { respond }) => {
      requests.push(request)
      respond({ decision: 'deny', by: 'u1' })
    })
    const [result] = await registry.toolset({ session: { id: 's1', userId: 'u1' } }).execute([{ id: 'c1', name: 'write', arguments: { path: 'a.txt', content: 'new\n' } }])
    expect(result.status).toBe('denied')
    expect(requests[0].preview).toEqual({ text: 'Changes a.txt: +1 -1 lines in 1 hunk.', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new' })
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('old\n')
  })
})
