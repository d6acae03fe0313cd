import { readFile } from 'node:fs/promises'
import { extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where `vite build` puts the page: `packages/webui/dist`, beside `src` and `lib`. */
export const DIST = fileURLToPath(new URL('../dist/', import.meta.url))

const TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.json': 'application/json',
})

/** A built file of the page, or `undefined` when there is none at `path` (never outside `root`). */
export async function readStatic(root: string, path: string): Promise<{ body: Uint8Array; type: string } | undefined> {
  let relative: string
  try {
    relative = normalize(decodeURIComponent(path)).replace(/^([/\\])+/, '')
  } catch {
    return undefined
  }
  if (relative.split(/[/\\]/).includes('..')) return undefined
  const file = join(root, relative === '.' || relative === '' ? 'index.html' : relative)
  if (!file.startsWith(root.endsWith(sep) ? root : root + sep)) return undefined
  try {
    return { body: await readFile(file), type: TYPES[extname(file)] ?? 'application/octet-stream' }
  } catch {
    return undefined
  }
}
