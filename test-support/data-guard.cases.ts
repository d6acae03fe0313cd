// The data guard's cases, run in a child vitest by tests/isolation/data-guard.spec.ts with
// its cwd in a temporary folder and DOGU_DATA set to another: some must fail.
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, it } from 'vitest'

const playground = process.env.DOGU_DATA!

it('writes a file in DOGU_DATA', () => {
  writeFileSync(join(playground, 'audit.jsonl'), '{}\n')
})

it('writes data/dogu/audit.jsonl under the cwd, as a default storePath does', async () => {
  await mkdir('data/dogu', { recursive: true })
  await writeFile('data/dogu/audit.jsonl', '{}\n')
})

it('opens a write stream in DOGU_DATA', async () => {
  const stream = createWriteStream(join(playground, 'background.json'))
  await new Promise<void>((resolve) => stream.end('{}', () => resolve()))
})

it('writes in a folder of its own', () => {
  const own = mkdtempSync(join(tmpdir(), 'dogu-data-guard-case-'))
  writeFileSync(join(own, 'audit.jsonl'), '{}\n')
  rmSync(own, { recursive: true })
})

describe('a clean-up that reads DOGU_DATA', () => {
  afterAll(async () => {
    await stat(join(playground, 'permissions.json')).catch(() => undefined)
  })
  it('passes on its own', () => {})
})
