import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import { ShellError } from './shell-error'

/**
 * Resolves the session's working directory against the workspace root, following
 * symlinks, and refuses one that ends up outside the root or is not a directory.
 */
export async function resolveWorkingDirectory(workspace: string, cwd?: string): Promise<string> {
  let root: string
  try {
    root = await realpath(workspace)
  } catch (error) {
    throw new ShellError('CWD_INVALID', `the workspace root ${workspace} does not exist`, { cause: error })
  }
  const wanted = cwd ? resolve(root, cwd) : root
  let real: string
  try {
    real = await realpath(wanted)
  } catch (error) {
    throw new ShellError('CWD_INVALID', `the working directory ${wanted} does not exist`, { cause: error })
  }
  const path = relative(root, real)
  if (path === '..' || path.startsWith('../') || isAbsolute(path)) {
    throw new ShellError('CWD_OUTSIDE_WORKSPACE', `the working directory ${real} is outside the workspace ${root}`)
  }
  if (!(await stat(real)).isDirectory()) {
    throw new ShellError('CWD_INVALID', `the working directory ${real} is not a directory`)
  }
  return real
}
