// A Cordis 4 app as a user makes it outside the monorepo: plain `npm install` in a fresh
// directory, from the packed tarballs (`yarn pack:all`), with the `overrides` that
// docs/getting-started.md#install shows; then the README's "Define a tool" block, copied
// as written into app.mjs and run with plain node, must print what the README says it prints;
// so must the Cordis examples of @dogu/cordis', @dogu/fs', @dogu/shell's and @dogu/http's READMEs.
// A second install without the overrides must still fail the way the docs say, so the day the
// registry makes them unnecessary this file says so.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, packedTarballs, repoRoot } from '../../../test-support/tarballs'

const run = promisify(execFile)

/** The app's package.json of docs/getting-started.md#install: cordis pinned exactly, and overridden (see there why). */
const pinned = { dependencies: { cordis: '4.0.0-beta.5' } }
const overrides = { cordis: '4.0.0-beta.5' }

/** The README's "Define a tool" section: its ```js block and the ```text block of what it prints. */
async function readmeExample(): Promise<{ code: string; output: string }> {
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8')
  const start = readme.indexOf('\n## Define a tool\n')
  expect(start, 'README.md has a "## Define a tool" section').toBeGreaterThan(-1)
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  const code = section.match(/```js\n([\s\S]*?)```/)?.[1]
  const output = section.match(/```text\n([\s\S]*?)```/)?.[1]
  expect(code, 'a ```js block in "Define a tool"').toBeTruthy()
  expect(output, 'a ```text block (what it prints) in "Define a tool"').toBeTruthy()
  return { code: code!, output: output!.trimEnd() }
}

describe('a Cordis 4 app installed with npm from the tarballs', () => {
  let tarballs: Record<string, string>
  let specs: string[]
  let appDir = ''
  const dirs: string[] = []
  const freshDir = async (name: string) => {
    const dir = await mkdtemp(join(tmpdir(), `dogu-${name}-`))
    dirs.push(dir)
    return dir
  }

  beforeAll(async () => {
    tarballs = await packedTarballs()
    // What docs/getting-started.md#install lists for an app on @dogu/cordis (cordis is in its
    // package.json already): the schemastery the example imports, and the @dogu packages as
    // tarballs (every @dogu package they depend on too: none of them is on the registry yet).
    specs = ['schemastery@^3.18.0', tarballs['@dogu/schema'], tarballs['@dogu/core'], tarballs['@dogu/cordis']]
  }, 600_000)

  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  })

  it('installs with the documented overrides, and the README example prints what the README says', async () => {
    const dir = await freshDir('cordis-app')
    const installed = await npmInstall(dir, specs, { packageJson: pinned, overrides, timeoutMs: 240_000 })
    console.log(`@dogu/cordis app (cordis 4.0.0-beta.5 + overrides): npm install ${(installed.durationMs / 1000).toFixed(1)} s, node_modules ${formatBytes(installed.nodeModulesBytes)}`)
    expect(installed.output).not.toMatch(/ERESOLVE|peer dep/i)

    const manifest = JSON.parse(await readFile(join(dir, 'node_modules/cordis/package.json'), 'utf8'))
    expect(manifest.version).toBe('4.0.0-beta.5')
    const app = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))
    expect(app.dependencies.cordis, 'still pinned exactly (a later install must not meet EOVERRIDE)').toBe('4.0.0-beta.5')
    const dogu = JSON.parse(await readFile(join(dir, 'node_modules/@dogu/cordis/package.json'), 'utf8'))
    expect(JSON.stringify(dogu)).not.toContain('workspace:')

    const { code, output } = await readmeExample()
    await writeFile(join(dir, 'app.mjs'), code)
    const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: dir, env: npmEnv(), timeout: 30_000 })
    expect(stdout.trimEnd()).toBe(output)
    appDir = dir
  }, 300_000)

  // The Cordis 4 examples of the package READMEs, in the same app with the tool packs added.
  it.each([
    ['cordis', ['ok hello, Ada']],
    ['fs', ['ok Created notes/todo.md (1 line).', 'error Error: "../../etc/passwd" is outside the allowed roots']],
    ['shell', ['ok Exit code 0', 'denied Permission denied']],
    ['http', ['ok HTTP 200 OK — GET http://127.0.0.1:', '| HELLO | from loopback', 'error Error: refused to connect to 10.0.0.1']],
  ])('runs the example of @dogu/%s\'s README as written', async (folder, expected) => {
    expect(appDir, 'the app of the first test').toBeTruthy()
    if (folder !== 'cordis') await npmInstall(appDir, [tarballs[`@dogu/${folder}`]], { timeoutMs: 240_000 })
    const readme = await readFile(join(repoRoot, 'packages', folder, 'README.md'), 'utf8')
    const code = readme.match(/```js\n([\s\S]*?)```/)?.[1]
    expect(code, `a \`\`\`js block in packages/${folder}/README.md`).toBeTruthy()
    await writeFile(join(appDir, `${folder}-readme.mjs`), code!)
    // The examples' own temp folders (os.tmpdir(): @dogu/fs' workspace) go inside the app's, and with it.
    await mkdir(join(appDir, 'tmp'), { recursive: true })
    const { stdout } = await run(process.execPath, [`${folder}-readme.mjs`], { cwd: appDir, env: { ...npmEnv(), TMPDIR: join(appDir, 'tmp') }, timeout: 30_000 })
    for (const text of expected) expect(stdout).toContain(text)
  }, 300_000)

  it('does not install without the overrides (ETARGET on @cordisjs/plugin-loader), as the docs say', async () => {
    const dir = await freshDir('cordis-app-plain')
    const error: Error = await npmInstall(dir, specs, { packageJson: pinned, timeoutMs: 240_000 }).then(
      () => new Error('installed'),
      (failure: Error) => failure,
    )
    expect(error.message, 'cordis 4.0.0-beta.5 now installs with plain npm: drop the overrides from docs/getting-started.md#install and this test').toMatch(/ETARGET[\s\S]*@cordisjs\/plugin-loader/)
  }, 300_000)
})
