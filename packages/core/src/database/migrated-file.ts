/** Moves a migrated file aside: `grants.json` → `grants.migrated.json`. Resolves with the new path, or undefined when the file is gone. */
export async function renameMigrated(path: string): Promise<string | undefined> {
  const fs = await import('node:fs/promises')
  const to = path.endsWith('.json') ? `${path.slice(0, -5)}.migrated.json` : `${path}.migrated`
  try {
    await fs.rename(path, to)
    return to
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
}

/** True when the file exists. */
export async function fileExists(path: string): Promise<boolean> {
  const fs = await import('node:fs/promises')
  try {
    await fs.access(path)
    return true
  } catch {
    return false
  }
}
