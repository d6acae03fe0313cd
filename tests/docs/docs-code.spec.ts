// Docs as tests (docs/testing.md, "The docs' code"): every TypeScript block of README.md and
// docs/*.md is type-checked as its own file, the way a user's project would see it (a Node
// ESM tsconfig, our packages through their `types` export, i.e. the built lib/*.d.ts); the
// blocks marked `<!-- run: … -->` are run (fed what a person would type where the marker says
// `with input "…"`); a page that defines a plugin also loads it; getting-started's tsconfig.json
// compiles that page's Cordis blocks, and NodeNext fails on them as the page quotes.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transformSync } from 'esbuild'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const NO_CHECK = '<!-- no-check -->'
/**
 * `<n>` in the text stands for a number (a duration, a port). `with input "…"` is what a
 * person types at the terminal: written to the block's stdin (`\n` between lines, one after).
 */
const RUN = /^<!-- run: (prints|serves) "(.*?)"(?: with input "(.*?)")? -->$/
const MAX_NO_CHECK = 0.15
const RUN_TIMEOUT = 20_000
/** What a page that has a block importing cordis must say up front. */
const BUNDLER_NOTE = 'Cordis 4\'s beta types need `moduleResolution: "bundler"`'

type Group = 'nodenext' | 'bundler' | 'koishi'

interface Block {
  page: string
  /** 1-based, among the page's TypeScript blocks. */
  index: number
  lang: string
  /** The markdown line (1-based) of the block's first code line. */
  line: number
  code: string
  noCheck: boolean
  run?: { kind: 'prints' | 'serves'; text: string; input?: string }
  /** A block whose first line is `// weather.ts` is saved under that name, so others import it. */
  file: string
  group: Group
}

const TS_LANGS = new Set(['ts', 'typescript', 'tsx'])

function pages(): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
}

/** Every fenced block of a page: its language, first code line and the lines before its fence. */
function fences(page: string) {
  const lines = readFileSync(join(root, page), 'utf8').split('\n')
  const result: { lang: string; line: number; code: string; before: string[] }[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)/.exec(lines[i])
    if (!open) continue
    const [, indent, ticks, lang] = open
    let end = i + 1
    while (end < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[end])) end++
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
    const before: string[] = []
    for (let j = i - 1; j >= 0 && /^\s*<!--.*-->\s*$/.test(lines[j]); j--) before.unshift(lines[j].trim())
    result.push({ lang, line: i + 2, code: body.join('\n'), before })
    i = end
  }
  return result
}

function groupOf(code: string): Group {
  if (/from ['"](koishi|koishi-plugin-dogu)['"]/.test(code)) return 'koishi'
  if (/from ['"]cordis['"]/.test(code)) return 'bundler'
  return 'nodenext'
}

function slug(page: string) {
  return page.replace(/^docs\//, '').replace(/\.md$/, '').replace(/[^a-zA-Z0-9]+/g, '-')
}

function collect() {
  const blocks: Block[] = []
  const runnableJs: Block[] = []
  const all = new Map<string, ReturnType<typeof fences>>()
  for (const page of pages()) {
    const found = fences(page)
    all.set(page, found)
    let index = 0
    for (const fence of found) {
      const run = fence.before.map((c) => RUN.exec(c)).find(Boolean)
      const isTs = TS_LANGS.has(fence.lang)
      if (!isTs && !(run && fence.lang === 'js')) continue
      const named = /^\/\/ ([\w-]+)\.(ts|tsx|js)\b/.exec(fence.code)
      const ext = fence.lang === 'tsx' ? 'tsx' : fence.lang === 'js' ? 'js' : 'ts'
      const block: Block = {
        page,
        index: isTs ? ++index : 0,
        lang: fence.lang,
        line: fence.line,
        code: fence.code,
        noCheck: fence.before.includes(NO_CHECK),
        run: run ? { kind: run[1] as 'prints' | 'serves', text: run[2], ...(run[3] !== undefined ? { input: `${run[3].replaceAll('\\n', '\n')}\n` } : {}) } : undefined,
        file: `${slug(page)}/${named ? named[1] : `block-${isTs ? index : `js-${fence.line}`}`}.${ext}`,
        group: groupOf(fence.code),
      }
      if (isTs) blocks.push(block)
      else runnableJs.push(block)
    }
  }
  return { blocks, runnableJs, all }
}

const { blocks, runnableJs, all } = collect()

/**
 * A folder of this run's own under `parent` (inside the checkout, where the blocks' imports
 * resolve): a second run at the same time, or a block's default data/ folder, stays apart.
 */
function runFolder(parent: string): string {
  mkdirSync(parent, { recursive: true })
  return mkdtempSync(join(parent, 'run-'))
}

const nodenext = runFolder(join(root, '.docs-check'))
const dirs: Record<Group, string> = {
  nodenext,
  bundler: join(nodenext, 'bundler'),
  // koishi 4 is installed in packages/koishi/node_modules only; koishi-plugin-dogu resolves
  // there as the package's own name (packages/koishi/package.json is the nearest manifest).
  koishi: runFolder(join(root, 'packages/koishi/.docs-check')),
}

const userOptions: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
  jsx: ts.JsxEmit.ReactJSX,
}
const options: Record<Group, ts.CompilerOptions> = {
  nodenext: userOptions,
  koishi: userOptions,
  bundler: { ...userOptions, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
}

function expected(text: string) {
  return new RegExp(text.split('<n>').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\d+'))
}

function where(block: Block) {
  return `${block.page} block ${block.index} (line ${block.line})`
}

function writeBlocks() {
  // A user's Node ESM project: "type": "module" (packages/koishi's own manifest says the same).
  writeFileSync(join(dirs.nodenext, 'package.json'), '{ "type": "module", "private": true }\n')
  for (const block of [...blocks, ...runnableJs]) {
    const file = join(dirs[block.group], block.file)
    mkdirSync(dirname(file), { recursive: true })
    // `export {}` at the end keeps each block a module (its own scope, top-level await)
    // without moving its lines.
    writeFileSync(file, `${block.code}\nexport {}\n`)
  }
}

function typeCheck(group: Group) {
  return problemsOf(blocks.filter((b) => b.group === group && !b.noCheck), group, options[group])
}

/** The blocks' type errors under `compilerOptions`, each naming the page, its line and the code line. */
function problemsOf(files: Block[], group: Group, compilerOptions: ts.CompilerOptions) {
  if (!files.length) return []
  const byFile = new Map(files.map((b) => [resolve(dirs[group], b.file), b]))
  const program = ts.createProgram([...byFile.keys()], compilerOptions)
  const problems: string[] = []
  const perBlock = new Map<Block, number>()
  for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...ts.getPreEmitDiagnostics(program)]) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n    ')
    const block = d.file && byFile.get(resolve(d.file.fileName))
    if (!d.file) problems.push(`[${group}] TS${d.code}: ${message}`)
    else if (!block) problems.push(`[${group}] ${relative(root, d.file.fileName)}: TS${d.code}: ${message}`)
    else {
      // A block that does not parse cascades: its first few problems are the ones to read.
      const seen = (perBlock.get(block) ?? 0) + 1
      perBlock.set(block, seen)
      if (seen > 5) continue
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0)
      const codeLine = block.code.split('\n')[line] ?? ''
      problems.push(`${block.page}:${block.line + line} (block ${block.index}, line ${line + 1} of the block, col ${character + 1}): TS${d.code}: ${message}\n    > ${codeLine.trim()}`)
    }
  }
  return [...new Set(problems)]
}

/** getting-started.md's `// tsconfig.json` block, read as tsc reads the file (comments allowed). */
function gettingStartedTsconfig(): ts.CompilerOptions {
  const page = 'docs/getting-started.md'
  const fence = all.get(page)!.find((f) => /^jsonc?$/.test(f.lang) && f.code.startsWith('// tsconfig.json'))
  if (!fence) throw new Error(`${page} has no \`// tsconfig.json\` block`)
  const { config, error } = ts.parseConfigFileTextToJson('tsconfig.json', fence.code)
  if (error) throw new Error(`${page} line ${fence.line}: ${ts.flattenDiagnosticMessageText(error.messageText, ' ')}`)
  const dir = join(dirs.bundler, slug(page))
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dir, undefined, join(dir, 'tsconfig.json'))
  // 18003: no inputs found; the program below is given the page's files.
  const errors = parsed.errors.filter((e) => e.code !== 18003)
  if (errors.length) throw new Error(`${page} line ${fence.line}: ${errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`)
  return { ...parsed.options, noEmit: true }
}

function run(block: Block): Promise<{ code: number | null; stdout: string; stderr: string; served: boolean }> {
  const dir = dirname(join(dirs[block.group], block.file))
  // Every named block of the page is there as .js too, so `import … from './weather.js'` works.
  for (const other of [...blocks, ...runnableJs]) {
    // A no-check block is an outline (an object's fields), not code another block imports.
    if (other.page !== block.page || other.group !== block.group || ('noCheck' in other && other.noCheck)) continue
    const js = transformSync(other.code, { loader: other.lang === 'tsx' ? 'tsx' : other.lang === 'js' ? 'js' : 'ts', format: 'esm', target: 'node20' }).code
    writeFileSync(join(dirs[other.group], other.file.replace(/\.(ts|tsx|js)$/, '.mjs')), js)
    writeFileSync(join(dirs[other.group], other.file.replace(/\.(ts|tsx)$/, '.js')), js)
  }
  const entry = join(dirs[block.group], block.file.replace(/\.(ts|tsx|js)$/, '.mjs'))
  return new Promise((done) => {
    const child = spawn(process.execPath, [entry], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } })
    // What a person types, there before the question is asked (a terminal buffers it too);
    // then the end of input, as from /dev/null for a block that reads none.
    child.stdin.end(block.run!.input ?? '')
    let stdout = ''
    let stderr = ''
    let served = false
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT)
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (block.run!.kind === 'serves' && !served && expected(block.run!.text).test(stdout)) {
        served = true
        // Give it a moment to log what it would log after, then stop it.
        setTimeout(() => child.kill('SIGTERM'), 500)
      }
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('exit', (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr, served })
    })
  })
}

beforeAll(() => writeBlocks())
afterAll(() => {
  for (const dir of [dirs.nodenext, dirs.koishi]) {
    rmSync(dir, { recursive: true, force: true })
    // The parent too, once no other run's folder is in it.
    try {
      rmdirSync(dirname(dir))
    } catch {}
  }
})

describe('the docs\' TypeScript blocks', () => {
  it('are found', () => {
    expect(blocks.length).toBeGreaterThan(20)
  })

  it(`carry ${NO_CHECK} on at most ${MAX_NO_CHECK * 100}% of them`, () => {
    const marked = blocks.filter((b) => b.noCheck)
    console.log(`docs: ${blocks.length} TypeScript blocks, ${marked.length} marked ${NO_CHECK} (${((marked.length / blocks.length) * 100).toFixed(1)}%): ${marked.map(where).join('; ')}`)
    expect(marked.length, `${marked.length} of ${blocks.length} blocks are marked ${NO_CHECK}`).toBeLessThanOrEqual(Math.floor(blocks.length * MAX_NO_CHECK))
  })

  for (const group of ['nodenext', 'bundler', 'koishi'] as const) {
    it(`type-check as a user's project would (${group}: ${blocks.filter((b) => b.group === group && !b.noCheck).length} blocks)`, () => {
      const problems = typeCheck(group)
      expect(problems, `${problems.length} problems:\n${problems.join('\n')}`).toEqual([])
    })
  }

  it('getting-started\'s tsconfig.json compiles its Cordis blocks, and NodeNext fails on them with the error the page quotes', () => {
    const page = 'docs/getting-started.md'
    const cordisBlocks = blocks.filter((b) => b.page === page && b.group === 'bundler' && !b.noCheck)
    expect(cordisBlocks.map((b) => b.file)).toEqual(expect.arrayContaining(['getting-started/weather.ts', 'getting-started/app.ts', 'getting-started/approve.ts']))
    const problems = problemsOf(cordisBlocks, 'bundler', gettingStartedTsconfig())
    expect(problems, `${problems.length} problems with ${page}'s tsconfig.json:\n${problems.join('\n')}`).toEqual([])
    // The same files under NodeNext: the first `new Context()` fails as the page says it does.
    const program = ts.createProgram(cordisBlocks.map((b) => resolve(dirs.bundler, b.file)), userOptions)
    const quoted = ts.getPreEmitDiagnostics(program).filter((d) => d.code === 2693 && d.file?.fileName.endsWith('/app.ts')).map((d) => {
      const { line, character } = d.file!.getLineAndCharacterOfPosition(d.start!)
      return `app.ts(${line + 1},${character + 1}): error TS2693: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
    })
    expect(quoted, 'NodeNext no longer fails on new Context(): drop the error quote and the bundler note from docs/getting-started.md').not.toEqual([])
    expect(readFileSync(join(root, page), 'utf8').split('\n')).toContain(quoted[0])
  })

  it('say up front, on a page with a block importing cordis, that its types need moduleResolution bundler', () => {
    // Near the top of the page (its first 15 lines), or, where the page's prose is not ours
    // to change (docs/webui.md), as a comment in the first block that imports cordis.
    const firstBlocks = new Map<string, Block>()
    for (const b of blocks) if (b.group === 'bundler' && !firstBlocks.has(b.page)) firstBlocks.set(b.page, b)
    const missing = [...firstBlocks.values()].filter((block) => {
      // A link around the option (to getting-started's tsconfig.json) reads as its text.
      const top = readFileSync(join(root, block.page), 'utf8').split('\n').slice(0, 15).join('\n').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      return !top.includes(BUNDLER_NOTE) && !block.code.includes(BUNDLER_NOTE)
    }).map((b) => b.page)
    expect(missing, `these pages import cordis but do not say near the top: ${BUNDLER_NOTE} …`).toEqual([])
  })
})

describe('each page that defines a plugin', () => {
  for (const [page, found] of all) {
    const defines = found.some((f) => TS_LANGS.has(f.lang) && /export function apply\(/.test(f.code) && /\.tools\.define\(/.test(f.code))
    if (!defines) continue
    it(`shows the app that loads it: ${page}`, () => {
      const loads = found.some(
        (f) => (/new Context\(/.test(f.code) && /\.plugin\(/.test(f.code)) || (f.lang === 'yaml' && /^\s*plugins:/m.test(f.code)),
      )
      expect(loads, `${page} defines a plugin (export function apply … ctx.tools.define) but no block loads it: add an app (new Context() … ctx.plugin(…)) or a koishi.yml`).toBe(true)
    })
  }
})

describe('the runnable examples', () => {
  const runnable = [...blocks, ...runnableJs].filter((b) => b.run)
  it('include getting-started\'s app', () => {
    expect(runnable.some((b) => b.page === 'docs/getting-started.md')).toBe(true)
  })
  for (const block of runnable) {
    const typed = block.run!.input === undefined ? '' : ` with input ${JSON.stringify(block.run!.input)}`
    it(`run: ${block.page} line ${block.line} ${block.run!.kind} "${block.run!.text}"${typed}`, async () => {
      const { code, stdout, stderr, served } = await run(block)
      const output = `stdout:\n${stdout}\nstderr:\n${stderr}`
      if (block.run!.kind === 'serves') expect(served, `${block.page} line ${block.line} did not print "${block.run!.text}" within ${RUN_TIMEOUT} ms\n${output}`).toBe(true)
      else expect(code, `${block.page} line ${block.line} exited ${code}\n${output}`).toBe(0)
      expect(stdout, output).toMatch(expected(block.run!.text))
      expect(stderr.trim(), `${block.page} line ${block.line} wrote to stderr\n${output}`).toBe('')
      expect(stdout, output).not.toMatch(/\[E\]|\bError\b/)
    }, RUN_TIMEOUT + 5_000)
  }
})
