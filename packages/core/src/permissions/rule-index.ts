import type { Decision } from '../types/decision'
import type { CompiledRule } from './compile-rule'

const RANK: Record<Decision, number> = { deny: 0, ask: 1, allow: 2 }
const CACHE_LIMIT = 4096

/**
 * Rules indexed by permission name, so a call tests only the rules that can match it:
 * literal names go into a Map, globs by their literal prefix (`fs.*` under `fs.`), and
 * the candidates for a name are computed once and cached until the rules change. The
 * candidates come out deny first, then ask, then allow, so the first match decides.
 */
export class RuleIndex {
  private exact = new Map<string, CompiledRule[]>()
  private prefixed = new Map<string, CompiledRule[]>()
  /** The distinct prefix lengths, ascending; rebuilt on the first lookup after a prefix comes or goes. */
  private prefixLengths?: number[]
  private cache = new Map<string, readonly CompiledRule[]>()
  private count = 0

  get size(): number {
    return this.count
  }

  /** Adds a rule; the returned function removes it (a second call does nothing). */
  add(rule: CompiledRule): () => void {
    const [table, key] = rule.exact !== undefined ? [this.exact, rule.exact] : [this.prefixed, rule.prefix]
    let bucket = table.get(key)
    if (!bucket) {
      table.set(key, bucket = [])
      if (table === this.prefixed) this.prefixLengths = undefined
    }
    bucket.push(rule)
    this.count++
    this.cache.clear()
    let removed = false
    return () => {
      if (removed) return
      removed = true
      const list = table.get(key)!
      list.splice(list.indexOf(rule), 1)
      if (!list.length) {
        table.delete(key)
        if (table === this.prefixed) this.prefixLengths = undefined
      }
      this.count--
      this.cache.clear()
    }
  }

  /** The rules whose permission glob matches `name`, deny first, then ask, then allow. */
  candidates(name: string): readonly CompiledRule[] {
    let list = this.cache.get(name)
    if (list) return list
    const found: CompiledRule[] = [...(this.exact.get(name) ?? [])]
    this.prefixLengths ??= [...new Set([...this.prefixed.keys()].map((key) => key.length))].sort((a, b) => a - b)
    for (const length of this.prefixLengths) {
      if (length > name.length) break
      const bucket = this.prefixed.get(name.slice(0, length))
      if (bucket) for (const rule of bucket) if (rule.matchName(name)) found.push(rule)
    }
    list = found.length > 1 ? found.sort((a, b) => RANK[a.decision] - RANK[b.decision]) : found
    // Names come from tools (a bounded set); a flood of made-up names only costs a refill.
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
    this.cache.set(name, list)
    return list
  }
}
