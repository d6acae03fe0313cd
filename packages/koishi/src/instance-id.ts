import { createHash } from 'node:crypto'
import { hostname } from 'node:os'

/**
 * `hostname:baseDir`: an instance's default name among those sharing a database (the
 * background service's task owner, the permissions service's pending requests), stable
 * across restarts and distinct across machines; hashed when too long for a 255-character column.
 */
export function defaultInstanceId(baseDir: string): string {
  const id = `${hostname()}:${baseDir}`
  return id.length <= 255 ? id : `${hostname().slice(0, 200)}:${createHash('sha256').update(baseDir).digest('hex').slice(0, 32)}`
}
