// createFsTools without the plugin has the plugin's defaults: the shell's trustWorkspaceGit
// and its sandbox rely on `.git` and `.env*` being out of the model's reach (issue 43, item 1).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { Config, createFsTools } from '../src'
import { type Sandbox, failure, invoke, sandbox, tree } from './helpers'

let box: Sandbox
beforeEach(async () => { box = await sandbox() })
afterEach(() => box.cleanup())

describe('createFsTools defaults', () => {
  test('protects .git, .env and .env.* at any depth, as the plugin does', async () => {
    await tree(box.root, { '.git/config': '[core]\n', 'sub/.env': 'TOKEN=owner\n' })
    const fs = createFsTools({ workspace: box.root })
    for (const path of ['.git/config', '.git/hooks/pre-commit', 'sub/.env', '.env.local', 'deep/.git/config']) {
      const error = await failure(invoke(fs.tools.write, { path, content: 'model\n' }))
      expect(error.code, path).toBe('READ_ONLY')
    }
    expect(readFileSync(join(box.root, '.git/config'), 'utf8')).toBe('[core]\n')
    expect(existsSync(join(box.root, '.env.local'))).toBe(false)
    expect(Config({ workspace: box.root } as Config).protected).toEqual(['.git', '.env', '.env.*'])
  })

  test('protected: [] protects nothing', async () => {
    const fs = createFsTools({ workspace: box.root, protected: [] })
    await invoke(fs.tools.write, { path: '.env', content: 'A=1\n' })
    expect(readFileSync(join(box.root, '.env'), 'utf8')).toBe('A=1\n')
  })
})
