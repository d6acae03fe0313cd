import type { PendingRecord, PendingStore, PendingStoreLoad } from './pending-record'
import { parseRecord, recordText } from './pending-record-check'

/**
 * Pending requests in memory, as JSON text: they survive an engine replaced in the same
 * process (a reloaded plugin), not a restart. For tests, and for engines that share one
 * process. A claim is a check and a write in one step, so exactly one claimant wins.
 */
export class MemoryPendingStore implements PendingStore {
  private texts = new Map<string, string>()

  async load(): Promise<PendingStoreLoad> {
    const records: PendingRecord[] = []
    const bad: PendingStoreLoad['bad'] = []
    for (const [id, text] of this.texts) {
      const read = parseRecord(text)
      if ('why' in read) bad.push({ id, why: `the request ${JSON.stringify(id)} ${read.why}` })
      else if (read.claimedBy === undefined) records.push(read)
    }
    return { records: records.sort((a, b) => a.createdAt - b.createdAt), bad }
  }

  async put(record: PendingRecord): Promise<void> {
    this.texts.set(record.id, recordText(record))
  }

  async remove(id: string): Promise<void> {
    this.texts.delete(id)
  }

  async claim(id: string, instance: string, by: string): Promise<boolean> {
    const text = this.texts.get(id)
    if (text === undefined) return false
    const read = parseRecord(text)
    if ('why' in read || read.claimedBy !== undefined) return false
    this.texts.set(id, recordText({ ...read, claimedBy: instance, claimedFor: by }))
    return true
  }

  async get(id: string): Promise<PendingRecord | undefined> {
    const text = this.texts.get(id)
    if (text === undefined) return undefined
    const read = parseRecord(text)
    return 'why' in read ? undefined : read
  }
}
