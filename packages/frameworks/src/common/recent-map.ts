/**
 * A map that keeps its `max` most recently set entries: what the adapters remember per call
 * (a kept argument text, a call asked about, a call a graph node started, a session's
 * toolset) stays bounded however long the process runs. Setting a key again makes it the newest.
 */
export class RecentMap<K, V> {
  private entries = new Map<K, V>()

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  set(key: K, value: V): void {
    this.entries.delete(key)
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, value)
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }
}
