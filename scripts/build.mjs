// Builds every workspace with a src/index.ts (or only subpath entries): esbuild bundles the ESM entry (dependencies
// stay external), then tsc emits declarations. Order follows the internal dependency graph.
// A subpath export whose `source` is another file of src/ (@dogu/webui's `./console`) is a
// second entry; the entries share their common modules as chunks, so both see one class.
// A package whose `main` is a `.cjs` file (koishi-plugin-dogu: Koishi's loader requires its
// plugins, and Koishi's own ESM entry does not load in Node) is bundled as CommonJS to that
// file instead: what it lists as dependencies and peers stays external (its @dogu/* dependencies
// load through require(esm), Node ≥ 20.19), and what it imports from its dev dependencies
// (@dogu/webui/console, the console's host-free API) is bundled in from their sources, so an
// install from the registry never brings those packages, nor the cordis 4 they peer.
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const only = process.argv.slice(2)

/** The sources of a manifest's subpath exports other than src/index.ts. */
function sourceEntries(manifest) {
  const sources = []
  for (const target of Object.values(manifest.exports ?? {})) {
    const source = typeof target === 'object' && target?.source
    if (typeof source === 'string' && source.startsWith('./src/') && source !== './src/index.ts') sources.push(source)
  }
  return sources
}

function workspaces() {
  const result = new Map()
  for (const base of ['packages', 'external']) {
    const dir = join(root, base)
    if (!existsSync(dir)) continue
    for (const name of readdirSync(dir)) {
      const folder = join(dir, name)
      if (!existsSync(join(folder, 'package.json'))) continue
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
      // A package with only subpath entries (@dogu/frameworks: one per framework) has no index.
      if (!existsSync(join(folder, 'src/index.ts')) && !sourceEntries(manifest).length) continue
      result.set(manifest.name, { folder, manifest })
    }
  }
  return result
}

// tsc copies the sources' relative specifiers (`./tool`, `./background`: the sources resolve
// them the bundler way) into the declarations as they are. A user's Node ESM tsconfig
// (`moduleResolution: NodeNext`) resolves a declaration's imports like Node does, so an
// extensionless `./tool` is not found there and every type behind it becomes `any`. Each
// relative specifier in lib/**/*.d.ts is rewritten to the file it names: `./tool.js`, or
// `./background/index.js` for a folder.
function fixDeclarationSpecifiers(dir) {
  if (!existsSync(dir)) return
  for (const entry of readdirSync(dir)) {
    const file = join(dir, entry)
    if (statSync(file).isDirectory()) {
      fixDeclarationSpecifiers(file)
      continue
    }
    if (!file.endsWith('.d.ts')) continue
    const text = readFileSync(file, 'utf8')
    const fixed = text.replace(/((?:from|import\(|declare module)\s*)(['"])(\.{1,2}(?:\/[^'"]*)?)\2/g, (whole, lead, quote, spec) => {
      if (/\.(?:js|cjs|mjs|json)$/.test(spec)) return whole
      const target = resolve(dirname(file), spec)
      if (existsSync(`${target}.d.ts`)) return `${lead}${quote}${spec}.js${quote}`
      if (existsSync(join(target, 'index.d.ts'))) return `${lead}${quote}${spec.replace(/\/$/, '')}/index.js${quote}`
      return whole
    })
    if (fixed !== text) writeFileSync(file, fixed)
  }
}

function order(all) {
  const sorted = []
  const seen = new Set()
  const visit = (name) => {
    if (seen.has(name) || !all.has(name)) return
    seen.add(name)
    const { manifest } = all.get(name)
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) visit(dep)
    sorted.push(name)
  }
  for (const name of all.keys()) visit(name)
  return sorted
}

const all = workspaces()
// A workspace is named by its package name or its folder (`@dogu/webui` or `webui`).
const unknown = only.filter((wanted) => ![...all].some(([name, { folder }]) => name === wanted || folder.endsWith(`/${wanted}`)))
if (unknown.length) {
  console.error(`no workspace named ${unknown.join(', ')} (known: ${[...all.keys()].join(', ')})`)
  process.exit(1)
}
let failed = false
for (const name of order(all)) {
  if (only.length && !only.some((wanted) => name === wanted || all.get(name).folder.endsWith(`/${wanted}`))) continue
  const { folder, manifest } = all.get(name)
  rmSync(join(folder, 'lib'), { recursive: true, force: true })
  const cjs = typeof manifest.main === 'string' && manifest.main.endsWith('.cjs')
  // src/index.ts, and the source of each further subpath export; a bin, where there is
  // one, is that same lib/index.js.
  const entries = existsSync(join(folder, 'src/index.ts')) ? [join(folder, 'src/index.ts')] : []
  for (const source of sourceEntries(manifest)) entries.push(join(folder, source))
  const layout = cjs
    ? {
        outfile: join(folder, manifest.main),
        external: Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }),
        conditions: ['source'],
      }
    : { outdir: join(folder, 'lib'), packages: 'external', splitting: entries.length > 1 }
  const result = await build({
    entryPoints: cjs ? entries.slice(0, 1) : entries,
    ...layout,
    bundle: true,
    platform: 'node',
    format: cjs ? 'cjs' : 'esm',
    target: 'node20',
    sourcemap: true,
    metafile: cjs,
    logLevel: 'warning',
  })
  // What the CommonJS bundle took in is this workspace's own code: a package from
  // node_modules in it means an import that the manifest does not list.
  const foreign = cjs ? Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/')) : []
  if (foreign.length) {
    console.error(`${name}: bundled from node_modules (list them as dependencies or peers):\n  ${foreign.join('\n  ')}`)
    failed = true
  }
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(folder, 'tsconfig.json')], { stdio: 'inherit' })
  if (tsc.status !== 0) failed = true
  else fixDeclarationSpecifiers(join(folder, 'lib'))
  // A package with a browser page (@dogu/webui) also type-checks its Vue client and builds
  // it with its own vite.config.ts.
  let page = { status: 0 }
  if (existsSync(join(folder, 'vite.config.ts'))) {
    page = spawnSync(process.execPath, [join(root, 'node_modules/vue-tsc/bin/vue-tsc.js'), '-p', join(folder, 'client/tsconfig.json')], { cwd: folder, stdio: 'inherit' })
    if (page.status === 0) page = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(folder, 'vite.config.ts')], { cwd: folder, stdio: 'inherit' })
    if (page.status !== 0) failed = true
  }
  // A Koishi console extension (koishi-plugin-dogu's client/) is built by Koishi's own
  // builder, `koishi-console build`, with the vite 5 @koishijs/client brings, to dist/. That
  // builder is CommonJS and requires vite, whose CJS entry then warns that it is deprecated:
  // nothing we can change, so the warning is turned off for it.
  if (page.status === 0 && existsSync(join(folder, 'client/index.ts')) && manifest.devDependencies?.['@koishijs/client']) {
    page = spawnSync(process.execPath, [join(folder, 'node_modules/@koishijs/client/bin.js'), 'build', folder], { cwd: folder, stdio: 'inherit', env: { ...process.env, VITE_CJS_IGNORE_WARNING: '1' } })
    if (page.status !== 0) failed = true
  }
  console.log(`${tsc.status === 0 && page.status === 0 ? 'built' : 'FAILED'} ${name}`)
}
if (failed) process.exit(1)
