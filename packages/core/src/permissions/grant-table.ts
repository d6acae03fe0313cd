import type { GrantPath } from './grant'

type Level = Map<string | undefined, unknown>

/** Values under a five-part `GrantPath`, in nested Maps: lookups allocate nothing. */
export class GrantTable<T> {
  private root: Level = new Map()
  private count = 0

  get size(): number {
    return this.count
  }

  get(a: string, b: string | undefined, c: string | undefined, d: string, e: string | undefined): T | undefined {
    const one = this.root.get(a) as Level | undefined
    const two = one?.get(b) as Level | undefined
    const three = two?.get(c) as Level | undefined
    const four = three?.get(d) as Level | undefined
    return four?.get(e) as T | undefined
  }

  set(path: GrantPath, value: T): void {
    let level = this.root
    for (let i = 0; i < 4; i++) {
      let next = level.get(path[i]) as Level | undefined
      if (!next) level.set(path[i], next = new Map())
      level = next
    }
    if (!level.has(path[4])) this.count++
    level.set(path[4], value)
  }

  delete(path: GrantPath): void {
    const levels: Level[] = [this.root]
    for (let i = 0; i < 4; i++) {
      const next = levels[i].get(path[i]) as Level | undefined
      if (!next) return
      levels.push(next)
    }
    if (!levels[4].delete(path[4])) return
    this.count--
    // Drop emptied levels so a long-lived engine does not keep every session it saw.
    for (let i = 4; i > 0 && !levels[i].size; i--) levels[i - 1].delete(path[i - 1])
  }

  values(): T[] {
    const out: T[] = []
    const walk = (level: Level, depth: number) => {
      for (const value of level.values()) depth === 4 ? out.push(value as T) : walk(value as Level, depth + 1)
    }
    walk(this.root, 0)
    return out
  }
}
