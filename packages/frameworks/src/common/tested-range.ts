import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { readFileSync } from 'node:fs'

/** The versions of a framework an adapter was tested with: `min` up to, not including, `below`. */
export interface TestedRange {
  /** The package whose version is read: `ai`, `@openai/agents`, `@langchain/core`. */
  packageName: string
  /** The first version tested. */
  min: string
  /** The first version not tested (the next major, or the next minor of a 0.x line). */
  below: string
}

/** Thrown at import when the installed framework is outside the tested range, or missing. */
export class FrameworkVersionError extends Error {
  readonly code = 'FRAMEWORK_VERSION'
  constructor(message: string) {
    super(message)
    this.name = 'FrameworkVersionError'
  }
}

/**
 * The installed version of `range.packageName`, checked against the range, for an entry
 * of `@dogu/frameworks` to call as it is imported: a version outside it fails there,
 * naming the range, rather than at the first call. `from` is the entry's `import.meta.url`,
 * so the framework is found where the app's import of it would find it.
 */
export function assertTestedVersion(entry: string, range: TestedRange, from: string): string {
  const version = installedVersion(range.packageName, from)
  const wanted = `>=${range.min} <${range.below}`
  if (version === undefined) {
    throw new FrameworkVersionError(`@dogu/frameworks/${entry} needs ${range.packageName} ${wanted} installed beside it (npm install ${range.packageName}@">=${range.min} <${range.below}"), but ${range.packageName} was not found`)
  }
  if (!(compare(version, range.min) >= 0 && compare(version, range.below) < 0)) {
    throw new FrameworkVersionError(`@dogu/frameworks/${entry} is tested with ${range.packageName} ${wanted}; ${version} is installed. Install a version in that range, or a @dogu/frameworks release tested with ${version}`)
  }
  return version
}

/** The version in the package's package.json, found by resolving its entry and walking up to it. */
function installedVersion(name: string, from: string): string | undefined {
  const require = createRequire(from)
  let main: string
  try {
    main = require.resolve(name)
  } catch {
    // An ESM-only package without a `require` condition: its package.json may still be exported.
    try {
      return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version
    } catch {
      return undefined
    }
  }
  for (let folder = dirname(main); ; folder = dirname(folder)) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
      if (manifest.name === name) return manifest.version
    } catch {}
    if (dirname(folder) === folder) return undefined
  }
}

/** Compares two `major.minor.patch[-pre]` versions; a prerelease sorts before its release. */
function compare(a: string, b: string): number {
  const [coreA, preA] = splitVersion(a)
  const [coreB, preB] = splitVersion(b)
  for (let i = 0; i < 3; i++) if (coreA[i] !== coreB[i]) return coreA[i]! - coreB[i]!
  if (preA === preB) return 0
  if (!preA) return 1
  if (!preB) return -1
  return preA < preB ? -1 : 1
}

function splitVersion(version: string): [number[], string] {
  const [core, pre = ''] = version.split('-', 2) as [string, string?]
  const parts = core.split('.').map((part) => Number.parseInt(part, 10) || 0)
  while (parts.length < 3) parts.push(0)
  return [parts, pre]
}
