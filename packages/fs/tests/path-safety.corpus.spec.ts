import { readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { corpusPath } from '../../../scripts/corpora.mjs'
import { createFsTools } from '../src'
import { type Sandbox, failure, invoke, lexicalCode, sandbox, tree, writeTraversal } from './helpers'
import { TRAVERSAL_CASES } from './traversal-cases'

// Corpus tier (docs/testing.md): PayloadsAllTheThings' traversal payloads, read from the
// corpora folder at test time, never copied here.
interface Payload {
  payload: string
  category: string
  posix_escapes_literal: boolean
}

const payloads: Payload[] = readFileSync(corpusPath('path-traversal', 'compact_payloads.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((line) => JSON.parse(line))

const SECRET = 'SECRET-OUTSIDE-THE-ROOT'

let box: Sandbox
beforeEach(async () => {
  box = await sandbox()
  await tree(box.base, {
    'etc/passwd': SECRET,
    'outside/secret.txt': SECRET,
    'outside/real.txt': SECRET,
  })
})
afterEach(() => box.cleanup())

describe('traversal corpus', () => {
  test('the corpus is the one described: 416 payloads', () => {
    expect(payloads.length).toBe(416)
  })

  test('our own traversal cases cover each of its categories', () => {
    const ours = new Set(TRAVERSAL_CASES.map(([category]) => category as string))
    expect([...new Set(payloads.map((p) => p.category))].filter((category) => !ours.has(category))).toEqual([])
  })

  test('read: no payload reads outside the root', async () => {
    const fs = createFsTools({ workspace: box.root })
    const codes = new Map<string, number>()
    for (const { payload, posix_escapes_literal } of payloads) {
      const error = await failure(invoke(fs.tools.read, { path: payload }))
      expect(error.message).not.toContain(SECRET)
      // Inside the root nothing exists but the root itself: every in-root payload is NOT_FOUND.
      expect([payload, error.code]).toEqual([payload, lexicalCode(payload, box.root)])
      if (posix_escapes_literal) expect([payload, error.code]).toEqual([payload, payload.includes('\0') ? 'INVALID_PATH' : 'OUTSIDE_ROOT'])
      codes.set(error.code, (codes.get(error.code) ?? 0) + 1)
    }
    expect(Object.fromEntries(codes)).toEqual({ OUTSIDE_ROOT: 224, NOT_FOUND: 191, INVALID_PATH: 1 })
  })

  test('write: no payload writes outside the root; in-root payloads create a file where lexical resolution says', async () => {
    const fs = createFsTools({ workspace: box.root })
    let created = 0
    for (const { payload } of payloads) {
      if (await writeTraversal(fs.tools.write, box.root, payload, lexicalCode(payload, box.root))) created++
    }
    expect(created).toBe(190)
    // Beside the root, nothing changed.
    expect((await readdir(box.base)).sort()).toEqual(['etc', 'outside', 'root'])
    expect(await readdir(join(box.base, 'outside'))).toEqual(['real.txt', 'secret.txt'])
    expect(await readFile(join(box.base, 'etc/passwd'), 'utf8')).toBe(SECRET)
  })
})
