// What each publishable package ships, read from its packed tarball (`yarn pack:all`, the
// same bytes npm would publish, workspace ranges resolved): publint finds no error and no
// warning (its suggestions are printed), no test, spec or fixture file is in it, its exports
// carry no `source` condition, and its manifest has what a package on the registry needs (license, repository with its
// directory, engines, types, exports, files, a README with an install line).
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { promisify } from 'node:util'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { beforeAll, describe, expect, it } from 'vitest'
import { packedTarballs, publishablePackages, repoRoot } from '../../../test-support/tarballs'

const run = promisify(execFile)
const packages = await publishablePackages()

/** Paths in a tarball that are tests or test data: tests/ and fixtures/ folders, *.spec.* / *.test.* / *.test-d.* files. */
const TEST_FILE = /(^|\/)(tests?|__tests__|fixtures?|__fixtures__|__snapshots__)\/|\.(spec|test|test-d)\.[cm]?[jt]sx?$/

/** An exports map without its `source` conditions. */
function withoutSource(exports: unknown): unknown {
  if (!exports || typeof exports !== 'object' || Array.isArray(exports)) return exports
  return Object.fromEntries(Object.entries(exports).filter(([key]) => key !== 'source').map(([key, value]) => [key, withoutSource(value)]))
}

async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 })
  return stdout.split('\n').filter(Boolean).map((path) => path.replace(/^package\//, ''))
}

async function tarballText(tarball: string, path: string): Promise<string> {
  const { stdout } = await run('tar', ['-xzOf', tarball, `package/${path}`], { maxBuffer: 16 * 1024 * 1024 })
  return stdout
}

describe('the packed packages', () => {
  let tarballs: Record<string, string>
  beforeAll(async () => {
    tarballs = await packedTarballs()
  }, 600_000)

  it('are every publishable workspace package', () => {
    expect(packages.length).toBeGreaterThan(0)
    expect(Object.keys(tarballs).sort()).toEqual(packages.map((pkg) => pkg.name).sort())
  })

  describe.each(packages)('$name', (pkg) => {
    it('passes publint with no error or warning', async () => {
      const bytes = await readFile(tarballs[pkg.name])
      const { messages, pkg: manifest } = await publint({ pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer }, level: 'suggestion' })
      const lines = messages.map((message) => `${message.type} ${message.code}: ${formatMessage(message, manifest, { color: false })}`)
      const suggestions = lines.filter((line) => line.startsWith('suggestion'))
      if (suggestions.length) console.log(`publint suggestions for ${pkg.name}:\n  ${suggestions.join('\n  ')}`)
      expect(lines.filter((line) => !line.startsWith('suggestion'))).toEqual([])
    })

    it('ships no tests, spec files or fixtures', async () => {
      const files = await tarballFiles(tarballs[pkg.name])
      expect(files).toContain('package.json')
      expect(files.filter((path) => TEST_FILE.test(path))).toEqual([])
    })

    // The workspace resolves `source` (TypeScript, for tests without a build); what ships is
    // publishConfig.exports, the same map without it, and no src/ (lib/*.js.map embed the
    // sources). A published `source` condition would hand raw TypeScript to any consumer
    // whose bundler or test runner enables that condition.
    it('publishes its exports without the `source` condition', async () => {
      const workspace = JSON.parse(await readFile(`${pkg.folder}/package.json`, 'utf8'))
      const packed = JSON.parse(await tarballText(tarballs[pkg.name], 'package.json'))
      expect(JSON.stringify(packed.exports)).not.toContain('"source"')
      if (JSON.stringify(workspace.exports).includes('"source"')) {
        expect(workspace.publishConfig?.exports, 'publishConfig.exports: the exports without `source`').toEqual(withoutSource(workspace.exports))
      }
    })

    it('has the manifest and README of a published package', async () => {
      const files = await tarballFiles(tarballs[pkg.name])
      const manifest = JSON.parse(await tarballText(tarballs[pkg.name], 'package.json'))
      expect(JSON.stringify(manifest)).not.toContain('workspace:')
      expect(manifest.license).toBe('MIT')
      expect(manifest.repository).toEqual({ type: 'git', url: 'git+https://github.com/dogu-dev/dogu.git', directory: relative(repoRoot, pkg.folder) })
      expect(manifest.engines?.node).toMatch(/^>=20/)
      expect(Array.isArray(manifest.files) && manifest.files.length).toBeTruthy()
      if (manifest.exports?.['.'] || manifest.types) {
        expect(files).toContain(manifest.types.replace(/^\.\//, ''))
        expect(manifest.exports?.['.']?.types).toBe(manifest.types)
        expect(manifest.exports?.['.']?.default, 'exports["."] has a default condition').toBeTruthy()
      } else {
        // A package of subpath entries only (@dogu/frameworks/ai-sdk, …): each has its types and a default.
        const entries = Object.entries<{ types?: string; default?: string }>(manifest.exports ?? {}).filter(([subpath]) => subpath !== './package.json')
        expect(entries.length, 'a package without "." exports subpaths').toBeGreaterThan(0)
        for (const [subpath, target] of entries) {
          expect(files, `exports["${subpath}"].types is packed`).toContain(target.types?.replace(/^\.\//, ''))
          expect(target.default, `exports["${subpath}"] has a default condition`).toBeTruthy()
        }
      }
      expect(files).toContain('README.md')
      const readme = await tarballText(tarballs[pkg.name], 'README.md')
      expect(readme).toMatch(new RegExp(`npm install[^\\n]*${pkg.name.replace('/', '\\/')}`))
      for (const bin of Object.values<string>(typeof manifest.bin === 'string' ? { [pkg.name]: manifest.bin } : (manifest.bin ?? {}))) {
        expect(files).toContain(bin.replace(/^\.\//, ''))
      }
    })
  })
})
