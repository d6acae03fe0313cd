// @dogu/frameworks as a user of one framework installs it: the packed tarballs (`yarn pack:all`)
// and that framework alone, with plain npm, in a fresh directory outside the workspace, no
// cordis at all. Each framework's example of docs/frameworks.md then runs there as the page
// shows it and prints what the page says. The three installs run side by side.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { transformSync } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBytes, npmEnv, npmInstall, packedTarballs, repoRoot } from '../../../test-support/tarballs'

interface Framework {
  entry: 'ai-sdk' | 'openai-agents' | 'langchain'
  /** What its user installs beside Dogu (the versions the adapter is tested with). */
  packages: string[]
  /** Packages of the other frameworks, which this install must not bring. */
  others: string[]
}

const frameworks: Framework[] = [
  { entry: 'ai-sdk', packages: ['ai@6.0.333', 'zod@4.6.7'], others: ['@openai/agents', '@langchain/core'] },
  { entry: 'openai-agents', packages: ['@openai/agents@0.20.0', 'zod@4.6.7'], others: ['ai', '@langchain/core'] },
  { entry: 'langchain', packages: ['@langchain/core@1.5.0', '@langchain/langgraph@1.7.5'], others: ['ai', '@openai/agents'] },
]

/** The page's runnable example for an entry: the block that imports it, with its `prints` marker. */
async function pageExample(entry: Framework['entry']): Promise<{ code: string; prints: RegExp }> {
  const lines = (await readFile(join(repoRoot, 'docs/frameworks.md'), 'utf8')).split('\n')
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- run: prints "(.*?)" -->$/.exec(lines[i]!)
    if (!marker || !/^```ts/.test(lines[i + 1] ?? '')) continue
    const end = lines.indexOf('```', i + 2)
    const code = lines.slice(i + 2, end).join('\n')
    if (!code.includes(`'@dogu/frameworks/${entry}'`)) continue
    const prints = new RegExp(`^${marker[1]!.split('<n>').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\d+')}\\n$`)
    return { code, prints }
  }
  throw new Error(`docs/frameworks.md has no runnable example importing @dogu/frameworks/${entry}`)
}

function runNode(dir: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [file], { cwd: dir, env: npmEnv(), timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

describe('@dogu/frameworks from its tarball, beside one framework, with plain npm and no cordis', () => {
  const dirs = new Map<Framework['entry'], string>()
  const installs = new Map<Framework['entry'], { output: string; line: string }>()

  beforeAll(async () => {
    const tarballs = await packedTarballs()
    const dogu = ['@dogu/schema', '@dogu/core', '@dogu/frameworks'].map((name) => tarballs[name]!)
    await Promise.all(frameworks.map(async ({ entry, packages }) => {
      const dir = await mkdtemp(join(tmpdir(), `dogu-frameworks-${entry}-`))
      dirs.set(entry, dir)
      const installed = await npmInstall(dir, ['schemastery@^3.18.0', ...dogu, ...packages], { timeoutMs: 400_000 })
      installs.set(entry, { output: installed.output, line: `npm install ${(installed.durationMs / 1000).toFixed(1)} s, node_modules ${formatBytes(installed.nodeModulesBytes)}` })
    }))
  }, 600_000)

  afterAll(async () => {
    for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true })
  })

  for (const framework of frameworks) {
    it(`${framework.entry}: installs with no peer warning, no cordis and none of the other frameworks`, () => {
      const dir = dirs.get(framework.entry)!
      const { output } = installs.get(framework.entry)!
      expect(output).not.toMatch(/ERESOLVE|peer dep|unmet/i)
      expect(existsSync(join(dir, 'node_modules/@dogu/frameworks/package.json'))).toBe(true)
      for (const absent of ['cordis', '@dogu/cordis', 'koishi', ...framework.others]) {
        expect(existsSync(join(dir, 'node_modules', absent)), `${absent} is not installed`).toBe(false)
      }
    })

    it(`${framework.entry}: the docs' example runs there and prints what the page says`, async () => {
      const dir = dirs.get(framework.entry)!
      const { code, prints } = await pageExample(framework.entry)
      const file = join(dir, `${framework.entry}-example.mjs`)
      await writeFile(file, transformSync(code, { loader: 'ts', format: 'esm', target: 'node20' }).code)
      const run = await runNode(dir, file)
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(prints)
      console.log(`${framework.entry}: ${installs.get(framework.entry)!.line}`)
    }, 90_000)
  }
})
