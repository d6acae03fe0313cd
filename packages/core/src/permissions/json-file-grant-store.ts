import { writeFileAtomically } from '../write-file-atomically'
import type { Grant } from './grant'
import { type GrantStore, type GrantStoreLoad, isGrant, pickGrant as pick } from './grant-store'
import { messageOf } from '../error-message'

const VERSION = 1
/** Writes in flight per file, across store instances: a reloaded service reads after the old one wrote. */
const queues = new Map<string, Promise<void>>()

/**
 * Keeps `always` grants in a JSON file (`{ "version": 1, "grants": [...] }`). Writes are
 * atomic: a temporary file beside the target is written, flushed and renamed over it, so
 * a crash leaves the old file or the new one, never half of one. A file that does not
 * parse or holds a malformed grant is renamed to `<path>.corrupt-<time>` and reported;
 * its grants are not used.
 *
 * Node's `fs` is imported on first use, so importing `@dogu/core` stays browser-safe.
 */
export class JsonFileGrantStore implements GrantStore {
  /** Set when the file exists but could not be read: saving would overwrite what we never saw. */
  private unreadable?: string

  constructor(readonly path: string) {}

  async load(): Promise<GrantStoreLoad> {
    await queues.get(this.path)
    const fs = await import('node:fs/promises')
    let text: string
    try {
      text = await fs.readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { grants: [] }
      this.unreadable = messageOf(error)
      return { grants: [], problem: { message: `cannot read the grant store ${this.path} (${this.unreadable}); remembered "always" answers do not apply and will not be saved` } }
    }
    let data: { version?: unknown; grants?: unknown }
    try {
      data = JSON.parse(text)
    } catch (error) {
      return this.moveAside(fs, `it is not valid JSON (${messageOf(error)})`)
    }
    if (!data || typeof data !== 'object' || data.version !== VERSION || !Array.isArray(data.grants)) {
      return this.moveAside(fs, `it is not a version ${VERSION} grant store`)
    }
    const bad = data.grants.findIndex((grant) => !isGrant(grant))
    if (bad >= 0) return this.moveAside(fs, `grants[${bad}] is malformed`)
    return { grants: (data.grants as Grant[]).map(pick) }
  }

  save(grants: readonly Grant[]): Promise<void> {
    const previous = queues.get(this.path) ?? Promise.resolve()
    const next = previous.then(() => this.write(grants))
    const tail = next.catch(() => {})
    queues.set(this.path, tail)
    tail.then(() => { if (queues.get(this.path) === tail) queues.delete(this.path) })
    return next
  }

  private async write(grants: readonly Grant[]): Promise<void> {
    if (this.unreadable) throw new Error(`not saving grants: the store ${this.path} could not be read (${this.unreadable})`)
    const text = JSON.stringify({ version: VERSION, grants: grants.map(pick) }, null, 2) + '\n'
    // Grants say who may do what: readable by the owner only.
    await writeFileAtomically(this.path, text, 0o600)
  }

  private async moveAside(fs: typeof import('node:fs/promises'), why: string): Promise<GrantStoreLoad> {
    const movedTo = `${this.path}.corrupt-${Date.now()}`
    try {
      await fs.rename(this.path, movedTo)
    } catch (error) {
      // It stays where it is; saving would overwrite it, so refuse to save.
      this.unreadable = `it is corrupt and could not be moved aside: ${messageOf(error)}`
      return { grants: [], problem: { message: `the grant store ${this.path} is corrupt: ${why}; moving it aside failed (${messageOf(error)}), so no grant applies and none will be saved` } }
    }
    return { grants: [], problem: { message: `the grant store ${this.path} is corrupt: ${why}; it was moved to ${movedTo} and none of its grants apply`, movedTo } }
  }
}
