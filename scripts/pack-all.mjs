// yarn pack:all [--no-build]: builds (scripts/build.mjs), then packs every publishable
// (non-private) workspace package with `yarn pack` into dist-packages/, under npm's tarball
// names (`@dogu/core` → dogu-core-0.1.0.tgz). yarn pack replaces `workspace:` ranges with
// the versions being packed; this script checks each tarball's package.json for any left.
// Each tarball is written under a temporary name and renamed, so a reader never sees half
// of one. Prints each tarball's name and size.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'dist-packages')
const build = !process.argv.includes('--no-build')

function publishable() {
  const found = []
  for (const base of ['packages', 'external']) {
    const dir = join(root, base)
    if (!existsSync(dir)) continue
    for (const entry of readdirSync(dir)) {
      const manifestPath = join(dir, entry, 'package.json')
      if (!existsSync(manifestPath)) continue
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
      if (manifest.private) continue
      found.push({ name: manifest.name, version: manifest.version, folder: join(dir, entry) })
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name))
}

const tarballName = (name, version) => `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`
const size = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`)

if (build) {
  const result = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

mkdirSync(out, { recursive: true })
const packages = publishable()
let failed = false
for (const pkg of packages) {
  const file = join(out, tarballName(pkg.name, pkg.version))
  // yarn pack would pack a package without its build: refuse one whose entry files are missing.
  const manifest = JSON.parse(readFileSync(join(pkg.folder, 'package.json'), 'utf8'))
  const missing = [manifest.main, manifest.types, ...Object.values(typeof manifest.bin === 'string' ? { bin: manifest.bin } : (manifest.bin ?? {}))]
    .filter((entry) => typeof entry === 'string' && !existsSync(join(pkg.folder, entry)))
  if (missing.length) {
    console.error(`FAILED ${pkg.name}: ${missing.join(', ')} missing (not built? run \`yarn build\`)`)
    failed = true
    continue
  }
  const partial = `${file}.${process.pid}.partial`
  const packed = spawnSync('yarn', ['pack', '--out', partial], { cwd: pkg.folder, encoding: 'utf8' })
  if (packed.status !== 0) {
    console.error(`FAILED ${pkg.name}: yarn pack exited ${packed.status}\n${packed.stdout}${packed.stderr}`)
    rmSync(partial, { force: true })
    failed = true
    continue
  }
  const packedManifest = spawnSync('tar', ['-xzOf', partial, 'package/package.json'], { encoding: 'utf8' })
  const left = packedManifest.status === 0 ? packedManifest.stdout.match(/"workspace:[^"]*"/g) : ['(no package/package.json)']
  if (left) {
    console.error(`FAILED ${pkg.name}: its packed package.json still has ${left.join(', ')}`)
    rmSync(partial, { force: true })
    failed = true
    continue
  }
  renameSync(partial, file)
  console.log(`${relative(root, file).padEnd(48)} ${size(statSync(file).size).padStart(9)}`)
}
if (failed) process.exit(1)
