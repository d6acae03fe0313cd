import { createHash } from 'node:crypto'
import { lstat, readdir, readFile, readlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { Workspace } from './instrumented-tools'

// The files of a run's workspace and of the folder beside it, before and after: what I3
// compares. Each entry is a path (relative to the run's root) and a digest of what is there.

export type Tree = Map<string, string>

/**
 * An absolute path outside every workspace that a call may try to write: this process's own,
 * so a run beside this one (another checkout, another worker) never sees or removes it.
 */
export const ABSOLUTE_TARGET = join(tmpdir(), `dogu-invariants-abs-${process.pid}.txt`)

async function walk(root: string, dir: string, tree: Tree): Promise<void> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return
  }
  for (const name of names) {
    const path = join(dir, name)
    const stat = await lstat(path)
    const key = relative(root, path)
    if (stat.isDirectory()) {
      tree.set(`${key}/`, `dir ${stat.mode.toString(8)}`)
      await walk(root, path, tree)
    } else if (stat.isSymbolicLink()) {
      tree.set(key, `link ${await readlink(path)}`)
    } else {
      tree.set(key, `file ${stat.mode.toString(8)} ${createHash('sha256').update(await readFile(path)).digest('hex').slice(0, 16)}`)
    }
  }
}

export async function snapshotTree(workspace: Workspace): Promise<Tree> {
  const tree: Tree = new Map()
  await walk(workspace.root, workspace.workspace, tree)
  await walk(workspace.root, workspace.outside, tree)
  try {
    await lstat(ABSOLUTE_TARGET)
    tree.set(ABSOLUTE_TARGET, 'exists')
  } catch {}
  return tree
}

/** The protected names of the fs tools' host-free defaults (`.git`, `.env`, `.env.*`) at any depth. */
export const isProtected = (path: string) => path.split('/').some((segment) => segment === '.git' || /^\.env(\..*)?$/.test(segment))

/** Paths added, removed or changed between two snapshots. */
export function changedPaths(before: Tree, after: Tree): string[] {
  const paths = new Set([...before.keys(), ...after.keys()])
  return [...paths].filter((path) => before.get(path) !== after.get(path)).sort()
}
