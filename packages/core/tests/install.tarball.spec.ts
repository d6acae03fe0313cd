// The host-free packages as a user gets them outside the monorepo: plain `npm install` in a
// fresh directory from the packed tarballs (`yarn pack:all`), with no overrides and no cordis
// (none of them needs a host); then the examples of @dogu/core's, @dogu/schema's and
// @dogu/agent's READMEs, copied as written into .mjs files and run with plain node.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, packedTarballs, repoRoot } from '../../../test-support/tarballs'

const run = promisify(execFile)

/** The first ```js block of a package's README. */
async function readmeExample(folder: string): Promise<string> {
  const readme = await readFile(join(repoRoot, 'packages', folder, 'README.md'), 'utf8')
  const code = readme.match(/```js\n([\s\S]*?)```/)?.[1]
  expect(code, `a \`\`\`js block in packages/${folder}/README.md`).toBeTruthy()
  return code!
}

describe('the host-free packages installed with plain npm from the tarballs', () => {
  let dir: string

  beforeAll(async () => {
    const tarballs = await packedTarballs()
    dir = await mkdtemp(join(tmpdir(), 'dogu-host-free-'))
    const names = ['@dogu/schema', '@dogu/core', '@dogu/agent', '@dogu/fs', '@dogu/shell', '@dogu/http']
    const installed = await npmInstall(dir, ['schemastery@^3.18.0', ...names.map((name) => tarballs[name])], { timeoutMs: 240_000 })
    console.log(`host-free packages (${names.join(', ')}), no overrides: npm install ${(installed.durationMs / 1000).toFixed(1)} s, node_modules ${formatBytes(installed.nodeModulesBytes)}`)
    expect(installed.output).not.toMatch(/ERESOLVE|peer dep/i)
  }, 600_000)

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('brings no cordis and no Koishi', () => {
    expect(existsSync(join(dir, 'node_modules/cordis'))).toBe(false)
    expect(existsSync(join(dir, 'node_modules/@cordisjs'))).toBe(false)
    expect(existsSync(join(dir, 'node_modules/koishi'))).toBe(false)
  })

  it.each([
    ['core', ["[ 'text' ]", 'ok hi', 'error unknown_tool']],
    ['schema', ["enum: [ 'c', 'f', null ]", "path: '$.tags'", 'string']],
    ['agent', ['It is Paris. 2 Paris']],
  ])('runs the example of @dogu/%s\'s README as written', async (folder, expected) => {
    await writeFile(join(dir, `${folder}-readme.mjs`), await readmeExample(folder))
    const { stdout } = await run(process.execPath, [`${folder}-readme.mjs`], { cwd: dir, env: npmEnv(), timeout: 30_000 })
    for (const text of expected) expect(stdout).toContain(text)
  }, 60_000)
})
