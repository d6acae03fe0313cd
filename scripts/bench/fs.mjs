// File tools speed: grep and glob from @dogu/fs over real trees (the workspace's own
// node_modules and two packages in it) against GNU `grep -rn`, `find` and tinyglobby, in the
// same run; and the time to the first 200 results, which must not grow with the tree.
// Needs the built packages (`node scripts/build.mjs`); DOGU_FS_LIB may point at another build.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { glob as tinyglobby } from 'tinyglobby'
import { median, printTable, root, writeResults } from './harness.mjs'

const lib = resolve(process.env.DOGU_FS_LIB ?? join(root, 'packages/fs/lib/index.js'))
const { createFsTools } = await import(pathToFileURL(lib).href)
const ROUNDS = Number(process.env.ROUNDS ?? 7)

const trees = [
  ['node_modules/ajv', 'small'],
  ['node_modules/openai', 'medium'],
  ['node_modules', 'large'],
].map(([path, size]) => ({ path, size, dir: join(root, path), files: countFiles(join(root, path)) }))
  .filter((tree) => existsSync(tree.dir))

function countFiles(dir) {
  let count = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) count += countFiles(join(dir, entry.name))
    else if (entry.isFile()) count++
  }
  return count
}

const call = () => ({
  id: 'bench', name: 'bench', session: { id: 'bench' }, signal: new AbortController().signal, deadline: Infinity,
  progress() {}, ask: async () => {}, deny(reason) { throw new Error(reason) },
})

/** Wall milliseconds and the value of one run. */
async function time(fn) {
  const start = process.hrtime.bigint()
  const value = await fn()
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value }
}

/** Median over rounds, alternating subjects so drift (page cache, CPU clock) hits all alike. */
async function race(subjects) {
  for (const fn of Object.values(subjects)) await fn() // warm the page cache and the JIT
  const samples = Object.fromEntries(Object.keys(subjects).map((key) => [key, []]))
  const values = {}
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, fn] of Object.entries(subjects)) {
      const { ms, value } = await time(fn)
      samples[key].push(ms)
      values[key] = value
    }
  }
  return Object.fromEntries(Object.keys(subjects).map((key) => [key, { ms: median(samples[key]), count: values[key] }]))
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
    let lines = 0
    child.stdout.on('data', (chunk) => { for (const byte of chunk) if (byte === 10) lines++ })
    child.on('error', reject)
    child.on('close', () => resolve(lines))
  })
}

// Same ground rules as GNU grep -r: nothing ignored, no size cap, links not followed.
const fs = createFsTools({ workspace: root, ignore: [], limits: { grepFileBytes: 1 << 30 } })
const dogu = async (tool, args) => {
  const output = await fs.tools[tool].run(fs.tools[tool].args(args), call())
  return tool === 'grep' ? output.data.results : output.data.paths.length
}

const rows = []
const figures = { trees: trees.map(({ path, size, files }) => ({ path, size, files })), grep: [], glob: [], firstResults: [] }
const ratio = (a, b) => +(a / b).toFixed(2)
const ms = (value) => +value.toFixed(1)

for (const tree of trees) {
  for (const [label, pattern, gnuArgs] of [
    ['literal', 'readFileSync', ['-rn', 'readFileSync']],
    ['regex', 'function\\s+\\w+Sync\\(', ['-rnE', 'function\\s+\\w+Sync\\(']],
  ]) {
    const result = await race({
      dogu: () => dogu('grep', { pattern, path: tree.path, maxResults: 2000 }),
      gnu: () => run('grep', [...gnuArgs, tree.path], root),
    })
    const figure = { tree: tree.size, files: tree.files, pattern: label, doguMs: ms(result.dogu.ms), gnuMs: ms(result.gnu.ms), ratio: ratio(result.dogu.ms, result.gnu.ms), doguLines: result.dogu.count, gnuLines: result.gnu.count }
    figures.grep.push(figure)
    rows.push({ what: `grep ${label}`, tree: `${tree.size} (${tree.files} files)`, dogu: `${figure.doguMs} ms`, baseline: `GNU grep ${figure.gnuMs} ms`, ratio: figure.ratio, results: `${figure.doguLines} / ${figure.gnuLines}` })
  }

  const globs = await race({
    dogu: () => dogu('glob', { pattern: '**/package.json', path: tree.path, maxResults: 2000 }),
    tinyglobby: async () => (await tinyglobby('**/package.json', { cwd: tree.dir, followSymbolicLinks: false })).length,
    find: () => run('find', [tree.path, '-name', 'package.json'], root),
  })
  const figure = { tree: tree.size, files: tree.files, doguMs: ms(globs.dogu.ms), tinyglobbyMs: ms(globs.tinyglobby.ms), findMs: ms(globs.find.ms), ratio: ratio(globs.dogu.ms, globs.tinyglobby.ms), counts: { dogu: globs.dogu.count, tinyglobby: globs.tinyglobby.count, find: globs.find.count } }
  figures.glob.push(figure)
  rows.push({ what: 'glob **/package.json', tree: `${tree.size} (${tree.files} files)`, dogu: `${figure.doguMs} ms`, baseline: `tinyglobby ${figure.tinyglobbyMs} ms, find ${figure.findMs} ms`, ratio: figure.ratio, results: `${globs.dogu.count} / ${globs.tinyglobby.count} / ${globs.find.count}` })

  const first = await race({
    grep: () => dogu('grep', { pattern: 'function', path: tree.path, maxResults: 200 }),
    glob: () => dogu('glob', { pattern: '**/*.js', path: tree.path, maxResults: 200 }),
    gnu: () => run('bash', ['-c', `grep -rn function ${tree.path} | head -200`], root),
  })
  figures.firstResults.push({ tree: tree.size, files: tree.files, grepMs: ms(first.grep.ms), globMs: ms(first.glob.ms), gnuGrepHeadMs: ms(first.gnu.ms) })
  rows.push({ what: 'first 200: grep function / glob **/*.js', tree: `${tree.size} (${tree.files} files)`, dogu: `${ms(first.grep.ms)} / ${ms(first.glob.ms)} ms`, baseline: `grep -rn | head -200 ${ms(first.gnu.ms)} ms`, ratio: '', results: `${first.grep.count} / ${first.glob.count}` })
}

printTable(`@dogu/fs against GNU grep, find and tinyglobby (median of ${ROUNDS} rounds; ratio = dogu / baseline)`, rows)
const worst = (list) => Math.max(...list.map((figure) => figure.ratio))
figures.targets = { grepWithin2x: worst(figures.grep) <= 2, globWithin1_5x: worst(figures.glob) <= 1.5, worstGrepRatio: worst(figures.grep), worstGlobRatio: worst(figures.glob) }
console.log(`\ntargets: grep within 2x of GNU grep: ${figures.targets.grepWithin2x} (worst ${figures.targets.worstGrepRatio}); glob within 1.5x of tinyglobby: ${figures.targets.globWithin1_5x} (worst ${figures.targets.worstGlobRatio})`)
writeResults('fs', figures)
