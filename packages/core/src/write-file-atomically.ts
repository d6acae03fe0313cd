let counter = 0

/**
 * Writes `text` to `file` so that a reader sees the old content or the new, never a torn
 * one: a private temporary file in the same folder, flushed to disk, then renamed over.
 * Node-only; imported lazily so the core still loads in a browser.
 */
export async function writeFileAtomically(file: string, text: string, mode = 0o644): Promise<void> {
  const fs = await import('node:fs/promises')
  const { dirname } = await import('node:path')
  await fs.mkdir(dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}.${++counter}.tmp`
  try {
    const handle = await fs.open(temp, 'wx', mode)
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => {})
    throw error
  }
}
